// Store and Indexer: the local, in-memory mirror of API objects (client-go tools/cache).
//
// Overview of the cache module:
//   ListerWatcher (lister_watcher.h)  the seam to the API server (or a scripted fake in tests)
//   Reflector     (reflector.h)       list, then watch from the list's resourceVersion, relist on
//                                     410, backoff; writes into a ReflectorStore
//   Store/Indexer (this file)         key -> object map with secondary indexes
//   SharedInformer(shared_informer.h) reflector + FIFO + indexer + fan-out to event handlers
//   Lister        (lister.h)          read helpers over an Indexer
//
// Objects are immutable and shared (ObjectPtr); stores hand out the same pointers they hold, so
// reads are cheap and callers must not (and cannot) modify them. All stores are thread-safe.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "k8sclient/object.h"

namespace draco::k8s::cache {

// Computes an object's key. The default, MetaNamespaceKeyFunc, is "namespace/name" or "name".
using KeyFunc = std::function<StatusOr<std::string>(const Object&)>;
StatusOr<std::string> MetaNamespaceKeyFunc(const Object& obj);
// Splits a key produced by MetaNamespaceKeyFunc into {namespace, name}.
std::pair<std::string, std::string> SplitMetaNamespaceKey(const std::string& key);

// Index functions map an object to the index values it is filed under.
using IndexFunc = std::function<std::vector<std::string>(const Object&)>;
using Indexers = std::map<std::string, IndexFunc>;
inline constexpr const char* kNamespaceIndex = "namespace";
std::vector<std::string> MetaNamespaceIndexFunc(const Object& obj);

// The writes a Reflector performs (client-go ReflectorStore).
class ReflectorStore {
 public:
  virtual ~ReflectorStore() = default;
  virtual Status Add(ObjectPtr obj) = 0;
  virtual Status Update(ObjectPtr obj) = 0;
  virtual Status Delete(ObjectPtr obj) = 0;
  // Atomically replaces the whole content with `items` (a full LIST at `resource_version`).
  virtual Status Replace(std::vector<ObjectPtr> items, const std::string& resource_version) = 0;
  // Re-delivers every object (periodic resync); a no-op for plain stores.
  virtual Status Resync() = 0;
  // Called with the latest resourceVersion seen, including from bookmarks.
  virtual void UpdateResourceVersion(const std::string& /*resource_version*/) {}
};

class Store : public ReflectorStore {
 public:
  virtual std::vector<ObjectPtr> List() const = 0;
  virtual std::vector<std::string> ListKeys() const = 0;
  // nullptr when absent.
  virtual ObjectPtr GetByKey(const std::string& key) const = 0;
  virtual size_t Size() const = 0;
};

class Indexer : public Store {
 public:
  // Objects that share an index value with `obj` under `index_name`.
  virtual StatusOr<std::vector<ObjectPtr>> Index(const std::string& index_name,
                                                 const Object& obj) const = 0;
  // Keys filed under `value` in `index_name`.
  virtual StatusOr<std::vector<std::string>> IndexKeys(const std::string& index_name,
                                                       const std::string& value) const = 0;
  // Objects filed under `value` in `index_name`.
  virtual StatusOr<std::vector<ObjectPtr>> ByIndex(const std::string& index_name,
                                                   const std::string& value) const = 0;
  // All values present in `index_name`.
  virtual std::vector<std::string> ListIndexFuncValues(const std::string& index_name) const = 0;
  // Adds indexers; existing objects are indexed at once. Re-defining a name is an error.
  virtual Status AddIndexers(const Indexers& indexers) = 0;
};

// A plain Store (no indexes) and an Indexer, both over a ThreadSafeStore.
std::unique_ptr<Store> NewStore(KeyFunc key_func = MetaNamespaceKeyFunc);
std::unique_ptr<Indexer> NewIndexer(KeyFunc key_func = MetaNamespaceKeyFunc,
                                    Indexers indexers = {});

}  // namespace draco::k8s::cache
