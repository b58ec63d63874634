// metav1.LabelSelector semantics (LabelSelectorAsSelector): a null selector matches nothing, an
// empty one everything; matchLabels and matchExpressions are ANDed. Pure functions.
#pragma once

#include <optional>

#include "base/status.h"
#include "controller/api/storage_types.h"
#include "controller/api/types.h"

namespace draco::feasibility {

// A parsed selector. Default-constructed: matches nothing (a null selector).
class Selector {
 public:
  Selector() = default;
  // INVALID_ARGUMENT for an unknown operator or a wrong number of values; `field` prefixes the
  // message ("spec.topologySpreadConstraints[0].labelSelector: ...").
  static StatusOr<Selector> Parse(const std::optional<api::LabelSelector>& s,
                                  const std::string& field);
  // Everything, plus key=value for each entry of `extra` (matchLabelKeys merging).
  void AddEquals(const std::string& key, const std::string& value);

  bool Matches(const api::StringMap& labels) const;
  bool IsNothing() const { return nothing_; }
  bool IsEverything() const { return !nothing_ && reqs_.empty(); }

 private:
  bool nothing_ = true;
  std::vector<api::LabelSelectorRequirement> reqs_;
};

// v1helper.MatchTopologySelectorTerms: no terms match everything; otherwise some term whose every
// requirement's key is present with one of its values.
bool MatchTopologySelectorTerms(const std::vector<api::TopologySelectorTerm>& terms,
                                const api::StringMap& labels);

}  // namespace draco::feasibility
