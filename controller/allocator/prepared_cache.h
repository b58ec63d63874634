// CEL views of devices (PreparedDevice) and class-selector results kept with the snapshot instead
// of per allocator: every allocator over a snapshot -- and over the snapshots derived from it, or
// rebuilt from it with the same slice objects -- prepares a device once. Internal to the allocator.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "controller/allocator/compute_model.h"
#include "controller/allocator/selector.h"

namespace draco::alloc {

// The selector's view of device `dev` of `slice` (borrowed pointers into the slice).
DeviceView ViewOf(const ResourceSlice& slice, size_t dev);

// What allocators learned about the devices of one slice object. Thread-safe.
class PreparedSlice {
 public:
  // Device `dev` of `slice` (the slice this entry belongs to) prepared by `compiler`: built on
  // first request, then shared. Null when the entry's devices are prepared by another compiler
  // (PreparedDevice is the compiler's own type; the first compiler to ask owns the entry).
  const PreparedDevice* Get(const ResourceSlice& slice, size_t dev,
                            const std::shared_ptr<SelectorCompiler>& compiler);

  // Class-selector results of this slice's devices under one class list (`classes`, the
  // snapshot's object: the same list means the same class indexes and selectors) and the entry's
  // compiler, indexed [class * devices + device]: 0 unknown, 1 no match, 2 match. Errors are not
  // kept (their message is the allocator's). Created on first request; null for another class
  // list or compiler. Slots may be written concurrently, always with the same value.
  std::atomic<uint8_t>* ClassResults(const std::shared_ptr<const void>& classes, size_t num_classes,
                                     size_t num_devices,
                                     const std::shared_ptr<SelectorCompiler>& compiler);

 private:
  // The device table, created with the entry's compiler on first use.
  std::atomic<const PreparedDevice*>* Table(size_t num_devices,
                                            const std::shared_ptr<SelectorCompiler>& compiler);

  std::mutex mu_;
  std::shared_ptr<SelectorCompiler> compiler_;  // set once, before table_ is published
  std::vector<std::atomic<const PreparedDevice*>> table_storage_;  // sized once
  std::atomic<std::atomic<const PreparedDevice*>*> table_{nullptr};
  std::vector<std::shared_ptr<const PreparedDevice>> owned_;  // what table_ points to
  std::shared_ptr<const void> classes_;
  std::vector<std::atomic<uint8_t>> class_results_;  // sized once
};

// Slice object -> PreparedSlice. Keyed by the slice object's address; each entry keeps its slice
// alive, so an address is never reused while its entry exists. Thread-safe.
class PreparedCache {
 public:
  // The entry of `slice` (created empty on first request); lives as long as this cache or a
  // cache carried from it holds it. Never null for a non-null slice.
  PreparedSlice* For(const std::shared_ptr<const ResourceSlice>& slice);
  // A new cache holding only the entries of `slices` (each entry shared, not copied): what a
  // snapshot rebuilt from the same slice objects carries over. `from` may be null.
  static std::shared_ptr<PreparedCache> Carry(
      const PreparedCache* from, const std::vector<std::shared_ptr<const ResourceSlice>>& slices);
  size_t size() const;

 private:
  mutable std::mutex mu_;
  std::unordered_map<const ResourceSlice*, std::pair<std::shared_ptr<const ResourceSlice>,
                                                     std::shared_ptr<PreparedSlice>>>
      entries_;
};

}  // namespace draco::alloc
