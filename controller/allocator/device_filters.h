// The per-device filters of the allocator in one ordered table: every rule that decides whether
// one candidate device may be taken for one request. Internal to the allocator.
//
// The search (Search::Screen, AllocateDevice, Selectable) applies the table top to bottom and
// stops at the first filter that rejects a device or fails; the order is upstream's
// (allocateOne, isSelectable, allocateDevice), so it decides which error a device reports and
// whether it reports one at all (a device already rejected is not checked further). The
// explanation (Search::ExplainRequest) walks the same table stage by stage: each stage of the
// funnel counts what the filters of that stage remove, each device on its own, in table order
// within the stage, and renders it with the filter's Describe hook; constraints and namespace
// limits are about the set of devices and narrow the funnel with their own hook. Adding or
// moving a rule is one edit here (plus its check and its rendering).
#pragma once

#include <array>
#include <cstddef>
#include <string_view>

#include "controller/allocator/search.h"

namespace draco::alloc {

// The stages of the funnel, in the order they are shown (after "devices on node").
enum class FilterStage : uint8_t {
  kClassSelectors,
  kRequestSelectors,
  kFree,
  kCapacityAndCounters,
  kTaints,
  kConstraints,
  kNamespaceLimits,
};
inline constexpr std::array<std::string_view, 7> kFilterStageNames = {"after class selectors",
                                                                      "after request selectors",
                                                                      "free",
                                                                      "after capacity and counters",
                                                                      "after taints",
                                                                      "after constraints",
                                                                      "within namespace limits"};

// When the search applies a filter.
enum class FilterPhase : uint8_t {
  // Once per request and device (it depends on nothing the search changes), memoised in
  // ReqData::sel by Search::Selectable; also chooses allocationMode All's devices. The memoised
  // filters are one contiguous run of the table.
  kMemo,
  // Only for candidates found by scanning (allocationMode All's list was chosen without it).
  kScan,
  // Every time a device is tried.
  kAlways,
  // Every time a device is tried, and it records what it changes in the Rollback (Undo reverts
  // it). Everything before the first of these is a pure check: the search screens scanned
  // candidates with that prefix before it sets up a Rollback.
  kRecording,
};

// How the funnel shows a filter.
enum class FunnelUse : uint8_t {
  kPerDevice,  // `describe` renders what `check` removed, each device on its own
  kSetLevel,   // `narrow` narrows the funnel (the rule is about a set of devices)
  kNone,       // not shown: what it checks is shown by an earlier filter of the table
};

struct DeviceFilter {
  std::string_view rule;  // what it checks, for readers
  FilterStage stage;
  FilterPhase phase;
  Search::FilterResult (Search::*check)(Search::FilterCtx&);
  FunnelUse funnel;
  void (Search::*describe)(Search::FunnelStep&) = nullptr;
  bool (Search::*narrow)(Search::FunnelStep&) = nullptr;
};

namespace filters_internal {

using S = FilterStage;
using P = FilterPhase;
using F = FunnelUse;

// Upstream order: "in use" is cheap and checked first (allocateOne), then isSelectable, then
// allocateDevice's checks.
inline constexpr std::array<DeviceFilter, 14> kDeviceFilters = {{
    {"in use by another claim (or, with admin access, by this claim)", S::kFree, P::kAlways,
     &Search::FilterInUse, F::kPerDevice, &Search::DescribeInUse},
    {"binding conditions need DRADeviceBindingConditions", S::kRequestSelectors, P::kMemo,
     &Search::FilterBindingConditions, F::kPerDevice, &Search::DescribeBindingConditions},
    {"device class selectors", S::kClassSelectors, P::kMemo, &Search::FilterClassSelectors,
     F::kPerDevice, &Search::DescribeClassSelectors},
    {"request selectors", S::kRequestSelectors, P::kMemo, &Search::FilterRequestSelectors,
     F::kPerDevice, &Search::DescribeRequestSelectors},
    {"per-device node selection", S::kRequestSelectors, P::kMemo, &Search::FilterNodeSelection,
     F::kPerDevice, &Search::DescribeNodeSelection},
    {"consumable capacity (allocated and in flight)", S::kCapacityAndCounters, P::kScan,
     &Search::FilterCapacity, F::kPerDevice, &Search::DescribeCapacity},
    {"skipNodeOperations needs DRAOptionalNodeOperations on the node", S::kRequestSelectors,
     P::kAlways, &Search::FilterNodeOperations, F::kPerDevice, &Search::DescribeNodeOperations},
    {"counters need DRAPartitionableDevices", S::kCapacityAndCounters, P::kAlways,
     &Search::FilterPartitionable, F::kPerDevice, &Search::DescribePartitionable},
    {"compatibility groups of shared counter sets", S::kCapacityAndCounters, P::kRecording,
     &Search::FilterCompatibilityGroups, F::kPerDevice, &Search::DescribeCompatibilityGroups},
    {"shared counters", S::kCapacityAndCounters, P::kRecording, &Search::FilterCounters,
     F::kPerDevice, &Search::DescribeCounters},
    {"device taints vs request tolerations", S::kTaints, P::kAlways, &Search::FilterTaints,
     F::kPerDevice, &Search::DescribeTaints},
    {"claim constraints", S::kConstraints, P::kRecording, &Search::FilterConstraints, F::kSetLevel,
     nullptr, &Search::NarrowConstraints},
    // The recheck of "consumable capacity" that also records the shared allocation.
    {"consumable capacity, consumed", S::kCapacityAndCounters, P::kRecording,
     &Search::FilterConsumeCapacity, F::kNone},
    {"AllocationPolicy namespace limits", S::kNamespaceLimits, P::kRecording,
     &Search::FilterNamespaceLimits, F::kSetLevel, nullptr, &Search::NarrowNamespaceLimits},
}};

// The index of the first recording filter (the end of the pure prefix).
constexpr size_t FirstRecording() {
  for (size_t i = 0; i < kDeviceFilters.size(); ++i) {
    if (kDeviceFilters[i].phase == P::kRecording) return i;
  }
  return kDeviceFilters.size();
}

constexpr bool PrefixHoldsMemoAndScan() {
  for (size_t i = FirstRecording(); i < kDeviceFilters.size(); ++i) {
    if (kDeviceFilters[i].phase == P::kMemo || kDeviceFilters[i].phase == P::kScan) return false;
  }
  return true;
}

constexpr bool MemoIsOneRun() {
  size_t runs = 0;
  for (size_t i = 0; i < kDeviceFilters.size(); ++i) {
    bool memo = kDeviceFilters[i].phase == P::kMemo;
    if (memo && (i == 0 || kDeviceFilters[i - 1].phase != P::kMemo)) ++runs;
  }
  return runs == 1;
}

// The funnel takes the survivors for the conflict analysis before the first set-level stage, so
// every per-device filter must be shown in an earlier stage.
constexpr bool SetLevelStagesLast() {
  for (const DeviceFilter& a : kDeviceFilters) {
    for (const DeviceFilter& b : kDeviceFilters) {
      if (a.funnel == F::kPerDevice && b.funnel == F::kSetLevel && a.stage >= b.stage) {
        return false;
      }
    }
  }
  return true;
}

constexpr bool HooksMatchUse() {
  for (const DeviceFilter& f : kDeviceFilters) {
    if ((f.funnel == F::kPerDevice) != (f.describe != nullptr)) return false;
    if ((f.funnel == F::kSetLevel) != (f.narrow != nullptr)) return false;
  }
  return true;
}

static_assert(MemoIsOneRun(), "the memoised filters must be one contiguous run");
static_assert(PrefixHoldsMemoAndScan(),
              "memoised and scan-only filters must come before the first recording filter");
static_assert(SetLevelStagesLast(), "set-level stages must come after the per-device stages");
static_assert(HooksMatchUse(), "each filter needs exactly the hook its funnel use names");

}  // namespace filters_internal

using filters_internal::FirstRecording;
using filters_internal::kDeviceFilters;

}  // namespace draco::alloc
