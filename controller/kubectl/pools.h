// `kubectl draco pools`: what the cluster's device pools hold, from the same snapshot draco
// allocates from (the simulate engine loaded with the live objects).
//
// Per driver/pool/node: devices total, allocated (by a claim's status.allocation; admin access
// does not count), free, tainted (a device taint or a DeviceTaintRule with an effect other than
// None); capacity per name, used (a device's whole capacity when it is allocated without
// consumedCapacity, else the consumed amounts) and total. Per driver/pool/counter set/counter:
// the shared counters' total, used by allocated devices (a shared device once) and free.
// Fragmentation: per DeviceClass and node, the largest ExactCount request of that class that
// would still be allocated on the node now (the allocator is asked; binary search on the count);
// a class none of whose devices is on the node has no row there.
//
// Only the newest generation of a pool counts, as for the allocator. Thread-compatible.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "controller/simulate/engine.h"

namespace draco::kubectl {

struct PoolsFilter {
  std::string device_class;  // --class: fragmentation rows for this class only
  std::string node;          // --node
  std::string driver;        // --driver
};

struct AmountUse {
  std::string name;               // capacity name, or "counterSet/counter"
  std::string used, total, free;  // Kubernetes quantities
};

struct PoolRow {
  std::string driver, pool, node;  // node "" for devices not local to one node
  int64_t devices = 0, allocated = 0, free = 0, tainted = 0;
  std::vector<AmountUse> capacity;  // sorted by name
};

struct CounterRow {
  std::string driver, pool;
  AmountUse use;  // name = "counterSet/counter"
};

struct FitRow {
  std::string device_class, node;
  int64_t largest = 0;  // devices in the largest request that fits
  std::string error;    // the allocator's error (e.g. a CEL error in the class), if any
};

struct PoolsReport {
  std::vector<PoolRow> pools;
  std::vector<CounterRow> counters;
  std::vector<FitRow> fits;
};

// `sim` must have been built (simulate::Build) and not run; it is not changed.
PoolsReport ComputePools(simulate::Simulation& sim, const PoolsFilter& filter);

// Tables (wide adds the capacity column), or JSON.
void PrintPoolsText(const PoolsReport& r, bool wide, std::ostream& out);
std::string PoolsToJson(const PoolsReport& r);

}  // namespace draco::kubectl
