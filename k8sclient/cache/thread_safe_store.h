// ThreadSafeStore: a key -> ObjectPtr map with secondary indexes, guarded by one shared mutex
// (client-go thread_safe_store.go). Keys are computed by the caller (see store.h).
//
// Thread-safe: reads take a shared lock, writes an exclusive one. Index functions run under the
// write lock and must not call back into the store. Returned objects are shared and immutable.
#pragma once

#include <map>
#include <set>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "k8sclient/cache/store.h"

namespace draco::k8s::cache {

class ThreadSafeStore {
 public:
  explicit ThreadSafeStore(Indexers indexers = {});

  // Add and Update are the same operation: insert or replace `key`.
  void Add(const std::string& key, ObjectPtr obj);
  void Update(const std::string& key, ObjectPtr obj);
  void Delete(const std::string& key);
  ObjectPtr Get(const std::string& key) const;
  std::vector<ObjectPtr> List() const;
  std::vector<std::string> ListKeys() const;
  size_t Size() const;
  // Replaces everything and rebuilds the indexes.
  void Replace(std::unordered_map<std::string, ObjectPtr> items);

  StatusOr<std::vector<ObjectPtr>> Index(const std::string& index_name, const Object& obj) const;
  StatusOr<std::vector<std::string>> IndexKeys(const std::string& index_name,
                                               const std::string& value) const;
  StatusOr<std::vector<ObjectPtr>> ByIndex(const std::string& index_name,
                                           const std::string& value) const;
  std::vector<std::string> ListIndexFuncValues(const std::string& index_name) const;
  Status AddIndexers(const Indexers& indexers);

 private:
  // index value -> keys
  using Index_ = std::map<std::string, std::set<std::string>>;

  void UpdateIndicesLocked(const std::string& key, const ObjectPtr& old_obj,
                           const ObjectPtr& new_obj);

  mutable std::shared_mutex mu_;
  std::unordered_map<std::string, ObjectPtr> items_;
  Indexers indexers_;
  std::map<std::string, Index_> indices_;
};

}  // namespace draco::k8s::cache
