#include "controller/cel/cache.h"

namespace draco::cel {

CompileResult ProgramCache::Get(std::string_view expr) {
  std::string key(expr);
  std::shared_ptr<Entry> entry;
  {
    std::unique_lock<std::mutex> lock(mu_);
    auto it = entries_.find(key);
    if (it != entries_.end()) {
      entry = it->second;
      if (entry->ready) {
        lru_.splice(lru_.begin(), lru_, entry->lru);
        return entry->result;
      }
      cv_.wait(lock, [&] { return entry->ready; });
      return entry->result;
    }
    entry = std::make_shared<Entry>();
    lru_.push_front(key);
    entry->lru = lru_.begin();
    entries_[key] = entry;
    ++compilations_;
  }
  // Compile outside the lock; other keys proceed concurrently.
  CompileResult result = Compile(env_, expr, parser_options_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    entry->result = result;
    entry->ready = true;
    while (entries_.size() > capacity_ && !lru_.empty()) {
      const std::string& victim = lru_.back();
      auto vit = entries_.find(victim);
      if (vit != entries_.end() && !vit->second->ready) break;  // never evict in-flight entries
      entries_.erase(victim);
      lru_.pop_back();
    }
  }
  cv_.notify_all();
  return result;
}

uint64_t ProgramCache::compilations() const {
  std::lock_guard<std::mutex> lock(mu_);
  return compilations_;
}

size_t ProgramCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

}  // namespace draco::cel
