#include "k8sclient/cache/store.h"

#include "k8sclient/cache/thread_safe_store.h"

namespace draco::k8s::cache {

StatusOr<std::string> MetaNamespaceKeyFunc(const Object& obj) {
  if (obj.name().empty()) return InvalidArgumentError("object has no metadata.name");
  return obj.Key();
}

std::pair<std::string, std::string> SplitMetaNamespaceKey(const std::string& key) {
  auto slash = key.find('/');
  if (slash == std::string::npos) return {"", key};
  return {key.substr(0, slash), key.substr(slash + 1)};
}

std::vector<std::string> MetaNamespaceIndexFunc(const Object& obj) {
  return {obj.namespace_name()};
}

namespace {

// Store/Indexer over a ThreadSafeStore, keyed by a KeyFunc (client-go cache.go).
class IndexerImpl final : public Indexer {
 public:
  IndexerImpl(KeyFunc key_func, Indexers indexers)
      : key_func_(std::move(key_func)), store_(std::move(indexers)) {}

  Status Add(ObjectPtr obj) override {
    auto key = key_func_(*obj);
    if (!key.ok()) return key.status();
    store_.Add(*key, std::move(obj));
    return OkStatus();
  }
  Status Update(ObjectPtr obj) override {
    auto key = key_func_(*obj);
    if (!key.ok()) return key.status();
    store_.Update(*key, std::move(obj));
    return OkStatus();
  }
  Status Delete(ObjectPtr obj) override {
    auto key = key_func_(*obj);
    if (!key.ok()) return key.status();
    store_.Delete(*key);
    return OkStatus();
  }
  Status Replace(std::vector<ObjectPtr> items, const std::string&) override {
    std::unordered_map<std::string, ObjectPtr> m;
    m.reserve(items.size());
    for (auto& obj : items) {
      auto key = key_func_(*obj);
      if (!key.ok()) return key.status();
      m[*key] = std::move(obj);
    }
    store_.Replace(std::move(m));
    return OkStatus();
  }
  Status Resync() override { return OkStatus(); }

  std::vector<ObjectPtr> List() const override { return store_.List(); }
  std::vector<std::string> ListKeys() const override { return store_.ListKeys(); }
  ObjectPtr GetByKey(const std::string& key) const override { return store_.Get(key); }
  size_t Size() const override { return store_.Size(); }

  StatusOr<std::vector<ObjectPtr>> Index(const std::string& index_name,
                                         const Object& obj) const override {
    return store_.Index(index_name, obj);
  }
  StatusOr<std::vector<std::string>> IndexKeys(const std::string& index_name,
                                               const std::string& value) const override {
    return store_.IndexKeys(index_name, value);
  }
  StatusOr<std::vector<ObjectPtr>> ByIndex(const std::string& index_name,
                                           const std::string& value) const override {
    return store_.ByIndex(index_name, value);
  }
  std::vector<std::string> ListIndexFuncValues(const std::string& index_name) const override {
    return store_.ListIndexFuncValues(index_name);
  }
  Status AddIndexers(const Indexers& indexers) override { return store_.AddIndexers(indexers); }

 private:
  KeyFunc key_func_;
  ThreadSafeStore store_;
};

}  // namespace

std::unique_ptr<Store> NewStore(KeyFunc key_func) {
  return std::make_unique<IndexerImpl>(std::move(key_func), Indexers{});
}

std::unique_ptr<Indexer> NewIndexer(KeyFunc key_func, Indexers indexers) {
  return std::make_unique<IndexerImpl>(std::move(key_func), std::move(indexers));
}

}  // namespace draco::k8s::cache
