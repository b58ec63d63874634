// The checks of the per-device filter table (device_filters.h) and the search's walk over it:
// Search::Selectable (the memoised filters) and Search::AllocateDevice (all of them, then the
// device is recorded as picked). The funnel's renderings of the same filters are in explain.cc.
#include "controller/allocator/device_filters.h"

#include <algorithm>

#include "controller/allocator/capacity.h"
#include "controller/allocator/explain.h"
#include "controller/allocator/node_selector.h"

namespace draco::alloc {
namespace {

using FilterResult = Search::FilterResult;

// The index of the first memoised filter (Selectable evaluates the whole run there).
constexpr size_t FirstMemo() {
  for (size_t i = 0; i < kDeviceFilters.size(); ++i) {
    if (kDeviceFilters[i].phase == FilterPhase::kMemo) return i;
  }
  return kDeviceFilters.size();
}

// The end of the run of memoised filters.
constexpr size_t MemoEnd() {
  size_t i = FirstMemo();
  while (i < kDeviceFilters.size() && kDeviceFilters[i].phase == FilterPhase::kMemo) ++i;
  return i;
}

template <size_t kBegin, size_t... I>
constexpr std::index_sequence<kBegin + I...> Shift(std::index_sequence<I...>) {
  return {};
}

FilterResult FromSelectable(uint8_t s) {
  return s == 2 ? FilterResult::kPass : s == 1 ? FilterResult::kReject : FilterResult::kError;
}

}  // namespace

bool Search::InUseFor(const ReqData& rd, int ci) const {
  // Only devices that cannot be shared are marked picked by a claim, so for shareable devices
  // (consumable capacity) admin access never finds them picked either.
  return rd.admin ? claims_[static_cast<size_t>(rd.claim)].picked[static_cast<size_t>(ci)] != 0
                  : InUse(ci);
}

FilterResult Search::FilterInUse(FilterCtx& x) {
  return InUseFor(*x.rd, x.ci) ? FilterResult::kReject : FilterResult::kPass;
}

FilterResult Search::FilterBindingConditions(FilterCtx& x) {
  if (impl_.config_.features.device_binding) return FilterResult::kPass;
  const Device& d = impl_.DeviceOf(pools_->cands[static_cast<size_t>(x.ci)]);
  return d.binding_conditions && !d.binding_conditions->empty() ? FilterResult::kReject
                                                                : FilterResult::kPass;
}

FilterResult Search::FilterClassSelectors(FilterCtx& x) {
  uint8_t cls =
      impl_.ClassSelect(x.rd->class_idx, pools_->cands[static_cast<size_t>(x.ci)].gid, x.error);
  return FromSelectable(cls);
}

FilterResult Search::FilterRequestSelectors(FilterCtx& x) {
  const Candidate& c = pools_->cands[static_cast<size_t>(x.ci)];
  const ResourceSlice& s = impl_.slices_[c.slice];
  const auto& sels = x.rd->spec->selectors;
  auto where = [&](size_t i) {
    return "claim " + claims_[static_cast<size_t>(x.rd->claim)].kobj + ": selector #" +
           std::to_string(i);
  };
  for (size_t i = 0; i < sels.size(); ++i) {
    const auto& comp = impl_.Compile(sels[i]);
    if (!comp.error.ok()) {
      *x.error = where(i) + ": CEL compile error: " + comp.error.message();
      return FilterResult::kError;
    }
    auto m = comp.sel->Matches(*impl_.Prepared(c.gid));
    if (!m.ok()) {
      *x.error = where(i) + " on device " + DeviceIdString(s, s.devices[c.device]) +
                 ": CEL runtime error: " + AddCelKeyHint(m.status().message());
      return FilterResult::kError;
    }
    if (!*m) return FilterResult::kReject;
  }
  return FilterResult::kPass;
}

FilterResult Search::FilterNodeSelection(FilterCtx& x) {
  const Candidate& c = pools_->cands[static_cast<size_t>(x.ci)];
  const ResourceSlice& s = impl_.slices_[c.slice];
  if (!s.per_device_node_selection.value_or(false)) return FilterResult::kPass;
  const Device& d = s.devices[c.device];
  auto m = NodeMatches(node_, d.node_name.value_or(""), d.all_nodes.value_or(false),
                       d.node_selector ? &*d.node_selector : nullptr);
  if (!m.ok()) {
    *x.error = "failed to parse node selector: " + m.status().message();
    return FilterResult::kError;
  }
  return *m ? FilterResult::kPass : FilterResult::kReject;
}

FilterResult Search::FilterCapacity(FilterCtx& x) {
  if (!impl_.config_.features.consumable_capacity) return FilterResult::kPass;
  std::string err;
  int fits = CapacityFits(*x.rd, x.ci, &err);
  if (fits < 0) {
    const Candidate& c = pools_->cands[static_cast<size_t>(x.ci)];
    *x.error = "claim " + claims_[static_cast<size_t>(x.rd->claim)].kobj + ", request " +
               x.rd->name + ": checking capacity for device " +
               DeviceIdString(impl_.slices_[c.slice], impl_.DeviceOf(c)) + ": " + err;
    return FilterResult::kError;
  }
  return fits == 0 ? FilterResult::kReject : FilterResult::kPass;
}

FilterResult Search::FilterNodeOperations(FilterCtx& x) {
  if (!experimental_) return FilterResult::kPass;
  const ResourceSlice& slice = impl_.slices_[pools_->cands[static_cast<size_t>(x.ci)].slice];
  if (slice.skip_node_operations.empty()) return FilterResult::kPass;
  if (!impl_.config_.features.optional_node_operations) return FilterResult::kReject;
  const auto& df = node_.declared_features;
  return std::find(df.begin(), df.end(), "DRAOptionalNodeOperations") == df.end()
             ? FilterResult::kReject
             : FilterResult::kPass;
}

FilterResult Search::FilterPartitionable(FilterCtx& x) {
  if (impl_.config_.features.partitionable_devices) return FilterResult::kPass;
  const Device& d = impl_.DeviceOf(pools_->cands[static_cast<size_t>(x.ci)]);
  return d.consumes_counters.empty() ? FilterResult::kPass : FilterResult::kReject;
}

namespace {

// Whether `d` may be shared (consumable capacity): a shared device already holding shares does
// not draw on its counters again.
bool Shareable(const Features& f, const Device& d) {
  return f.consumable_capacity && d.allow_multiple_allocations.value_or(false);
}

}  // namespace

FilterResult Search::FilterCompatibilityGroups(FilterCtx& x) {
  const Features& f = impl_.config_.features;
  if (!f.compatibility_groups) return FilterResult::kPass;
  const Device& d = impl_.DeviceOf(pools_->cands[static_cast<size_t>(x.ci)]);
  if (d.consumes_counters.empty() || (Shareable(f, d) && CapacityInUse(x.ci))) {
    return FilterResult::kPass;
  }
  return CheckGroups(x.ci, x.rb) ? FilterResult::kPass : FilterResult::kReject;
}

FilterResult Search::FilterCounters(FilterCtx& x) {
  const Features& f = impl_.config_.features;
  const Device& d = impl_.DeviceOf(pools_->cands[static_cast<size_t>(x.ci)]);
  if (d.consumes_counters.empty() || (Shareable(f, d) && CapacityInUse(x.ci))) {
    return FilterResult::kPass;
  }
  if (!CheckCounters(x.ci)) return FilterResult::kReject;
  x.rb->counters = true;
  return FilterResult::kPass;
}

FilterResult Search::FilterTaints(FilterCtx& x) {
  if (!impl_.config_.features.device_taints) return FilterResult::kPass;
  const Device& d = impl_.DeviceOf(pools_->cands[static_cast<size_t>(x.ci)]);
  return UntoleratedTaint(d, *x.rd->spec) != nullptr ? FilterResult::kReject : FilterResult::kPass;
}

FilterResult Search::FilterConstraints(FilterCtx& x) {
  ClaimData& cd = claims_[static_cast<size_t>(x.claim)];
  for (auto& k : cd.constraints) {
    if (!k.Applies(*x.rd)) {
      ++x.rb->constraints_added;
      continue;
    }
    const Attribute* attr = nullptr;
    if (Status st = AttributeFor(*x.rd, x.ci, k.attribute, &attr); !st.ok()) {
      *x.error = st.message();
      return FilterResult::kError;
    }
    if (!k.Add(attr, attr_sets_)) {
      if (!x.must) return FilterResult::kReject;
      const Candidate& c = pools_->cands[static_cast<size_t>(x.ci)];
      *x.error = "claim " + cd.kobj + ", request " + x.rd->name + ": cannot add device " +
                 DeviceIdString(impl_.slices_[c.slice], impl_.DeviceOf(c)) +
                 " because a claim constraint would not be satisfied";
      return FilterResult::kError;
    }
    ++x.rb->constraints_added;
  }
  return FilterResult::kPass;
}

FilterResult Search::FilterConsumeCapacity(FilterCtx& x) {
  const Features& f = impl_.config_.features;
  if (!f.consumable_capacity) return FilterResult::kPass;
  const int ci = x.ci;
  const Candidate& c = pools_->cands[static_cast<size_t>(ci)];
  const Device& d = impl_.DeviceOf(c);
  std::string err;
  int fits = CapacityFits(*x.rd, ci, &err);
  if (fits < 0) {
    *x.error = "claim " + claims_[static_cast<size_t>(x.claim)].kobj + ", request " + x.rd->name +
               ": rechecking capacity for device " + DeviceIdString(impl_.slices_[c.slice], d) +
               ": " + err;
    return FilterResult::kError;
  }
  if (fits == 0) return FilterResult::kReject;
  if (!d.allow_multiple_allocations.value_or(false)) return FilterResult::kPass;
  std::vector<Qty> consumed;
  bool missing = false;
  ConsumedForDevice(*x.rd->spec, d, f.fractional_capacity_range, &consumed, &missing, &err);
  x.res->share_id = impl_.NewShareId();
  if (alloc_cap_[static_cast<size_t>(ci)].empty()) {
    alloc_cap_[static_cast<size_t>(ci)].assign(d.capacity.size(), 0);
  }
  x.rb->consumed_amounts.resize(consumed.size());
  for (size_t i = 0; i < consumed.size(); ++i) {
    alloc_cap_[static_cast<size_t>(ci)][i] += consumed[i].nanos;
    x.rb->consumed_amounts[i] = consumed[i].nanos;
    x.res->consumed.emplace_back(d.capacity[i].first, consumed[i]);
  }
  ++live_shares_[static_cast<size_t>(ci)];
  x.rb->capacity_inserted = true;
  return FilterResult::kPass;
}

FilterResult Search::FilterNamespaceLimits(FilterCtx& x) {
  if (x.rd->limit == nullptr || x.rd->admin) return FilterResult::kPass;
  return LimitAllows(claims_[static_cast<size_t>(x.claim)], *x.rd, x.ci, *x.res, x.rb)
             ? FilterResult::kPass
             : FilterResult::kReject;
}

uint8_t Search::Selectable(ReqData& rd, int ci) {
  uint8_t& slot = rd.sel[static_cast<size_t>(ci)];
  if (slot != 0) return slot;
  FilterCtx x;
  x.claim = rd.claim;
  x.rd = &rd;
  x.ci = ci;
  x.error = &rd.sel_err[static_cast<size_t>(ci)];
  constexpr size_t kFirst = FirstMemo();
  FilterResult v = RunChecks(x, Shift<kFirst>(std::make_index_sequence<MemoEnd() - kFirst>()));
  return slot = v == FilterResult::kPass ? 2 : v == FilterResult::kReject ? 1 : 3;
}

template <size_t... I>
Search::FilterResult Search::RunChecks(FilterCtx& x, std::index_sequence<I...>) {
  FilterResult v = FilterResult::kPass;
  (void)((v = (this->*kDeviceFilters[I].check)(x), v == FilterResult::kPass) && ...);
  return v;
}

template <bool kScan, size_t I>
Search::FilterResult Search::RunFilter(FilterCtx& x) {
  constexpr const DeviceFilter& kFilter = kDeviceFilters[I];
  if constexpr (kFilter.phase == FilterPhase::kMemo) {
    if constexpr (I != FirstMemo()) {
      return FilterResult::kPass;  // Selectable evaluated it with the first of the run
    } else {
      uint8_t s = Selectable(*x.rd, x.ci);
      if (s == 3) *x.error = x.rd->sel_err[static_cast<size_t>(x.ci)];
      return FromSelectable(s);
    }
  } else if constexpr (kFilter.phase == FilterPhase::kScan && !kScan) {
    return FilterResult::kPass;
  } else {
    return (this->*kFilter.check)(x);
  }
}

template <bool kScan, size_t... I>
Search::FilterResult Search::RunFilters(FilterCtx& x, std::index_sequence<I...>) {
  FilterResult v = FilterResult::kPass;
  (void)((v = RunFilter<kScan, I>(x), v == FilterResult::kPass) && ...);
  return v;
}

Search::FilterResult Search::Screen(FilterCtx& x) {
  return RunFilters<true>(x, std::make_index_sequence<FirstRecording()>());
}

int Search::AllocateDevice(int claim, ReqData& rd, int ci, bool must, bool screened, Rollback* rb) {
  InternalResult res;
  res.req = rd.req;
  res.sub = rd.sub;
  res.cand = ci;
  res.admin = rd.admin;
  std::string error;
  FilterCtx x;
  x.claim = claim;
  x.rd = &rd;
  x.ci = ci;
  x.must = must;
  x.rb = rb;
  x.res = &res;
  x.error = &error;
  constexpr size_t kFirst = FirstRecording();
  FilterResult v =
      screened ? RunFilters<true>(
                     x, Shift<kFirst>(std::make_index_sequence<kDeviceFilters.size() - kFirst>()))
               : RunFilters<false>(x, std::make_index_sequence<kDeviceFilters.size()>());
  if (v != FilterResult::kPass) {
    Undo(claim, rd, ci, *rb);
    if (v == FilterResult::kReject) return 0;
    status_ = InvalidArgumentError(error);
    return -1;
  }
  ClaimData& cd = claims_[static_cast<size_t>(claim)];
  const Device& d = impl_.DeviceOf(pools_->cands[static_cast<size_t>(ci)]);
  if (!(impl_.config_.features.consumable_capacity &&
        d.allow_multiple_allocations.value_or(false))) {
    cd.picked[static_cast<size_t>(ci)] = 1;
    ++picked_count_[static_cast<size_t>(ci)];
    rb->marked = true;
  }
  cd.results.push_back(std::move(res));
  rb->result_added = true;
  return 1;
}

}  // namespace draco::alloc
