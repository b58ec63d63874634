// Lister: read helpers over an Indexer, and equality/set-based label selectors.
//
// Controllers read from listers, never from events (level-based reconciliation). A Lister does
// not own the indexer, which must outlive it. Thread-safe (reads only).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "k8sclient/cache/store.h"

namespace draco::k8s::cache {

// A parsed label selector: "a=b,c!=d,e,!f,g in (x,y),h notin (z)". Empty matches everything.
class LabelSelector {
 public:
  static StatusOr<LabelSelector> Parse(const std::string& selector);
  bool Matches(const std::map<std::string, std::string>& labels) const;
  bool Empty() const { return requirements_.empty(); }

 private:
  struct Requirement {
    enum class Op { kIn, kNotIn, kExists, kDoesNotExist };
    std::string key;
    Op op = Op::kIn;
    std::vector<std::string> values;
  };
  std::vector<Requirement> requirements_;
};

class Lister {
 public:
  explicit Lister(const Indexer& indexer) : indexer_(indexer) {}

  // nullptr when absent. `ns` is "" for cluster-scoped objects.
  ObjectPtr Get(const std::string& ns, const std::string& name) const;
  // All cached objects matching `selector`.
  std::vector<ObjectPtr> List(const LabelSelector& selector = {}) const;
  // Objects in `ns` matching `selector` (uses the namespace index when present).
  std::vector<ObjectPtr> ListNamespace(const std::string& ns,
                                       const LabelSelector& selector = {}) const;

 private:
  const Indexer& indexer_;
};

}  // namespace draco::k8s::cache
