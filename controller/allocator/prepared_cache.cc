#include "controller/allocator/prepared_cache.h"

#include <algorithm>

namespace draco::alloc {

DeviceView ViewOf(const ResourceSlice& slice, size_t dev) {
  const Device& d = slice.devices[dev];
  DeviceView v;
  v.driver = slice.driver;
  v.attributes = &d.attributes;
  v.capacity = &d.capacity;
  v.allow_multiple_allocations = d.allow_multiple_allocations.value_or(false);
  return v;
}

std::atomic<const PreparedDevice*>* PreparedSlice::Table(
    size_t num_devices, const std::shared_ptr<SelectorCompiler>& compiler) {
  std::atomic<const PreparedDevice*>* t = table_.load(std::memory_order_acquire);
  if (!t) {
    std::lock_guard<std::mutex> lock(mu_);
    t = table_.load(std::memory_order_relaxed);
    if (!t) {
      compiler_ = compiler;
      // Value-initialized (null) atomics; never resized, so the pointers stay valid.
      table_storage_ = std::vector<std::atomic<const PreparedDevice*>>(num_devices);
      t = table_storage_.data();
      table_.store(t, std::memory_order_release);
    }
  }
  return compiler_ == compiler ? t : nullptr;
}

const PreparedDevice* PreparedSlice::Get(const ResourceSlice& slice, size_t dev,
                                         const std::shared_ptr<SelectorCompiler>& compiler) {
  std::atomic<const PreparedDevice*>* t = Table(slice.devices.size(), compiler);
  if (!t) return nullptr;
  const PreparedDevice* p = t[dev].load(std::memory_order_acquire);
  if (p) return p;
  std::shared_ptr<const PreparedDevice> made = compiler->Prepare(ViewOf(slice, dev));
  std::lock_guard<std::mutex> lock(mu_);
  p = t[dev].load(std::memory_order_relaxed);
  if (p) return p;  // another allocator was quicker; `made` is dropped
  owned_.push_back(std::move(made));
  p = owned_.back().get();
  t[dev].store(p, std::memory_order_release);
  return p;
}

std::atomic<uint8_t>* PreparedSlice::ClassResults(
    const std::shared_ptr<const void>& classes, size_t num_classes, size_t num_devices,
    const std::shared_ptr<SelectorCompiler>& compiler) {
  if (!Table(num_devices, compiler)) return nullptr;
  std::lock_guard<std::mutex> lock(mu_);
  if (!classes_) {
    classes_ = classes;
    const size_t n = num_classes * num_devices;
    class_results_ = std::vector<std::atomic<uint8_t>>(n);  // zero: unknown
  }
  return classes_ == classes ? class_results_.data() : nullptr;
}

PreparedSlice* PreparedCache::For(const std::shared_ptr<const ResourceSlice>& slice) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& e = entries_[slice.get()];
  if (!e.second) e = {slice, std::make_shared<PreparedSlice>()};
  return e.second.get();
}

std::shared_ptr<PreparedCache> PreparedCache::Carry(
    const PreparedCache* from, const std::vector<std::shared_ptr<const ResourceSlice>>& slices) {
  auto out = std::make_shared<PreparedCache>();
  if (!from) return out;
  std::lock_guard<std::mutex> lock(from->mu_);
  if (from->entries_.empty()) return out;
  out->entries_.reserve(std::min(from->entries_.size(), slices.size()));
  for (const auto& s : slices) {
    auto it = from->entries_.find(s.get());
    if (it != from->entries_.end()) out->entries_.emplace(it->first, it->second);
  }
  return out;
}

size_t PreparedCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

}  // namespace draco::alloc
