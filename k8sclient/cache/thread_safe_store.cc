#include "k8sclient/cache/thread_safe_store.h"

#include <mutex>

namespace draco::k8s::cache {

ThreadSafeStore::ThreadSafeStore(Indexers indexers) : indexers_(std::move(indexers)) {
  for (const auto& [name, fn] : indexers_) indices_[name];
}

void ThreadSafeStore::UpdateIndicesLocked(const std::string& key, const ObjectPtr& old_obj,
                                          const ObjectPtr& new_obj) {
  for (const auto& [name, fn] : indexers_) {
    Index_& index = indices_[name];
    if (old_obj != nullptr) {
      for (const auto& v : fn(*old_obj)) {
        auto it = index.find(v);
        if (it == index.end()) continue;
        it->second.erase(key);
        if (it->second.empty()) index.erase(it);
      }
    }
    if (new_obj != nullptr) {
      for (const auto& v : fn(*new_obj)) index[v].insert(key);
    }
  }
}

void ThreadSafeStore::Add(const std::string& key, ObjectPtr obj) { Update(key, std::move(obj)); }

void ThreadSafeStore::Update(const std::string& key, ObjectPtr obj) {
  std::unique_lock<std::shared_mutex> l(mu_);
  ObjectPtr& slot = items_[key];
  ObjectPtr old = std::move(slot);
  slot = std::move(obj);
  UpdateIndicesLocked(key, old, slot);  // UpdateIndicesLocked does not touch items_
}

void ThreadSafeStore::Delete(const std::string& key) {
  std::unique_lock<std::shared_mutex> l(mu_);
  auto it = items_.find(key);
  if (it == items_.end()) return;
  UpdateIndicesLocked(key, it->second, nullptr);
  items_.erase(it);
}

ObjectPtr ThreadSafeStore::Get(const std::string& key) const {
  std::shared_lock<std::shared_mutex> l(mu_);
  auto it = items_.find(key);
  return it == items_.end() ? nullptr : it->second;
}

std::vector<ObjectPtr> ThreadSafeStore::List() const {
  std::shared_lock<std::shared_mutex> l(mu_);
  std::vector<ObjectPtr> out;
  out.reserve(items_.size());
  for (const auto& [k, v] : items_) out.push_back(v);
  return out;
}

std::vector<std::string> ThreadSafeStore::ListKeys() const {
  std::shared_lock<std::shared_mutex> l(mu_);
  std::vector<std::string> out;
  out.reserve(items_.size());
  for (const auto& [k, v] : items_) out.push_back(k);
  return out;
}

size_t ThreadSafeStore::Size() const {
  std::shared_lock<std::shared_mutex> l(mu_);
  return items_.size();
}

void ThreadSafeStore::Replace(std::unordered_map<std::string, ObjectPtr> items) {
  std::unique_lock<std::shared_mutex> l(mu_);
  items_ = std::move(items);
  for (auto& [name, index] : indices_) index.clear();
  for (const auto& [key, obj] : items_) UpdateIndicesLocked(key, nullptr, obj);
}

StatusOr<std::vector<ObjectPtr>> ThreadSafeStore::Index(const std::string& index_name,
                                                        const Object& obj) const {
  std::shared_lock<std::shared_mutex> l(mu_);
  auto fn = indexers_.find(index_name);
  if (fn == indexers_.end()) return NotFoundError("index " + index_name + " does not exist");
  const Index_& index = indices_.at(index_name);
  std::set<std::string> keys;
  for (const auto& v : fn->second(obj)) {
    auto it = index.find(v);
    if (it != index.end()) keys.insert(it->second.begin(), it->second.end());
  }
  std::vector<ObjectPtr> out;
  out.reserve(keys.size());
  for (const auto& k : keys) out.push_back(items_.at(k));
  return out;
}

StatusOr<std::vector<std::string>> ThreadSafeStore::IndexKeys(const std::string& index_name,
                                                              const std::string& value) const {
  std::shared_lock<std::shared_mutex> l(mu_);
  auto idx = indices_.find(index_name);
  if (idx == indices_.end()) return NotFoundError("index " + index_name + " does not exist");
  auto it = idx->second.find(value);
  if (it == idx->second.end()) return std::vector<std::string>();
  return std::vector<std::string>(it->second.begin(), it->second.end());
}

StatusOr<std::vector<ObjectPtr>> ThreadSafeStore::ByIndex(const std::string& index_name,
                                                          const std::string& value) const {
  std::shared_lock<std::shared_mutex> l(mu_);
  auto idx = indices_.find(index_name);
  if (idx == indices_.end()) return NotFoundError("index " + index_name + " does not exist");
  std::vector<ObjectPtr> out;
  auto it = idx->second.find(value);
  if (it == idx->second.end()) return out;
  out.reserve(it->second.size());
  for (const auto& k : it->second) out.push_back(items_.at(k));
  return out;
}

std::vector<std::string> ThreadSafeStore::ListIndexFuncValues(const std::string& index_name) const {
  std::shared_lock<std::shared_mutex> l(mu_);
  std::vector<std::string> out;
  auto idx = indices_.find(index_name);
  if (idx == indices_.end()) return out;
  for (const auto& [v, keys] : idx->second) out.push_back(v);
  return out;
}

Status ThreadSafeStore::AddIndexers(const Indexers& indexers) {
  std::unique_lock<std::shared_mutex> l(mu_);
  for (const auto& [name, fn] : indexers) {
    if (indexers_.count(name) != 0) return AlreadyExistsError("indexer " + name + " exists");
  }
  for (const auto& [name, fn] : indexers) {
    indexers_[name] = fn;
    Index_& index = indices_[name];
    for (const auto& [key, obj] : items_) {
      for (const auto& v : fn(*obj)) index[v].insert(key);
    }
  }
  return OkStatus();
}

}  // namespace draco::k8s::cache
