// One Allocate call: request validation, the depth-first search and result construction.
// Internal to the allocator; see allocator.h for the contract. Thread-hostile (one call).
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "controller/allocator/allocator_impl.h"

namespace draco::alloc {

// A set-valued view of an attribute (list-type attribute semantics): sorted, unique values of one
// element type.
struct AttrSet {
  int type = -1;  // 0 int, 1 bool, 2 string, 3 version; -1 unknown
  std::vector<int64_t> nums;
  std::vector<std::string> strs;
  static std::optional<AttrSet> From(const Attribute* a);
  // Intersection, or nullopt when empty or of different types.
  std::optional<AttrSet> Intersect(const AttrSet& o) const;
};

// AttrSet::From of each attribute a search looks at, computed once per attribute: list-mode
// constraints compare the same devices' lists over and over while the search backtracks. Keys are
// the addresses of the snapshot's attributes and the search's derived ones, which stay put and
// unchanged for the search's lifetime. Not thread-safe (one per Search).
class AttrSetCache {
 public:
  // The attribute's set; nullptr when it has none (AttrSet::From gives nullopt).
  const AttrSet* Get(const Attribute* a);

 private:
  std::unordered_map<const Attribute*, std::optional<AttrSet>> sets_;
};

// "driver/pool/device" of device `d` in slice `s`, as in messages.
inline std::string DeviceIdString(const ResourceSlice& s, const Device& d) {
  return s.driver + "/" + s.pool + "/" + d.name;
}

// Upstream lookupAttribute: exact key, else the driver-domain short name.
const Attribute* LookupAttribute(const Device& d, std::string_view driver, std::string_view fqname);

// Upstream taintPreventsAllocation: the first NoSchedule/NoExecute taint of `d` that no
// toleration of `spec` tolerates, or null.
const DeviceTaint* UntoleratedTaint(const Device& d, const RequestSpec& spec);

class Search {
 public:
  Search(Allocator::Impl& impl, const Node& node, const std::vector<const ResourceClaim*>& claims,
         Explanation* explain);
  SearchOutcome Run();

  struct ReqData {
    const RequestSpec* spec = nullptr;
    std::string name, parent, full;
    int claim = 0, req = 0, sub = 0;
    int class_idx = -1;
    int64_t num_devices = 0;
    bool all = false;
    bool admin = false;
    std::vector<int> all_devices;
    std::vector<uint8_t> sel;  // per candidate: 0 unknown, 1 false, 2 true, 3 error
    std::vector<std::string> sel_err;
    // AllocationPolicy: governing policy (-1 none), the namespace limit that applies (or null)
    // and the candidate visiting order (empty = upstream order).
    int policy = -1;
    const NamespaceLimit* limit = nullptr;
    std::vector<int> order;
    int Cand(int pos) const { return order.empty() ? pos : order[static_cast<size_t>(pos)]; }
  };

  class Constraint {
   public:
    std::unordered_set<std::string> names;
    std::string attribute;
    bool distinct = false;
    bool list_mode = false;
    bool Applies(const ReqData& rd) const;
    bool Add(const Attribute* a, AttrSetCache& sets);
    void Remove();
    // State.
    const Attribute* ref = nullptr;
    int count = 0;
    std::vector<AttrSet> stack;             // match, list mode
    std::vector<const Attribute*> members;  // distinct
  };

  struct InternalResult {
    int req = 0, sub = 0, cand = 0;
    bool admin = false;
    std::optional<std::string> share_id;
    std::vector<std::pair<std::string, Qty>> consumed;
  };

  struct ClaimData {
    const ResourceClaim* claim = nullptr;
    std::string kobj;
    std::vector<std::vector<ReqData>> reqs;  // [request][subrequest] (exactly: one entry)
    std::vector<bool> has_subs;
    std::vector<int> selected_sub;
    std::vector<Constraint> constraints;
    std::vector<InternalResult> results;
    std::vector<uint8_t> picked;  // per candidate: picked for this claim (allocatingDevices)
  };

  enum class Step : uint8_t { kFalse, kTrue, kMaxSize, kError };

  // DRADeviceCompatibilityGroups: the devices drawing from one counter set (allocated peers and
  // this call's picks) must share a compatibility group; devices without groups only go with
  // devices without groups. The running intersection of their groups:
  struct GroupState {
    bool has_members = false;
    bool all_empty = false;           // every member declared no groups
    std::vector<std::string> groups;  // sorted, unique; meaningful when !all_empty
    bool Admits(const std::vector<std::string>& g) const;  // g sorted, unique
    GroupState Add(const std::vector<std::string>& g) const;
  };

  // --- used by explain.cc ---
  struct ConflictUnit;  // explain_conflicts.cc
  // The candidates of one request (or subrequest) that pass every per-device filter, before
  // constraints: the input of the conflict analysis.
  struct Survivors {
    int claim = 0;
    const ReqData* rd = nullptr;
    size_t funnel = 0;  // index in Explanation::requests
    std::vector<int> cands;
  };
  // The memoised filters of device_filters.h (binding conditions, class and request selectors,
  // device node selection) for candidate `ci`: 1 false, 2 true, 3 error (message in rd.sel_err).
  uint8_t Selectable(ReqData& rd, int ci);
  bool InUse(int ci) const;
  // Static capacity check (no allocated or in-flight consumption); error in *err.
  bool StaticCapacityFits(const ReqData& rd, int ci, std::string* err);

  struct Rollback {
    bool counters = false;
    int constraints_added = 0;
    bool marked = false;
    bool capacity_inserted = false;
    std::vector<Amount> consumed_amounts;
    bool result_added = false;
    bool limit_added = false;
    std::vector<std::pair<std::string, Amount>> limit_capacity;
    // Compatibility-group states replaced by this device: (counter set, previous, existed).
    std::vector<std::tuple<std::string, GroupState, bool>> groups_saved;
  };

  // --- the per-device filters; device_filters.h orders them in one table ---
  enum class FilterResult : uint8_t { kPass, kReject, kError };
  // Candidate `ci` for request `rd` of claim `claim`, as every filter sees it. A stateful filter
  // records what it changed in `rb` (Undo reverts it); errors go to `error`.
  struct FilterCtx {
    int claim = 0;
    ReqData* rd = nullptr;
    int ci = 0;
    bool must = false;  // allocationMode All: a failed constraint is an error
    Rollback* rb = nullptr;
    InternalResult* res = nullptr;  // the result being built (consumed capacity)
    std::string* error = nullptr;
  };
  FilterResult FilterInUse(FilterCtx& x);
  FilterResult FilterBindingConditions(FilterCtx& x);
  FilterResult FilterClassSelectors(FilterCtx& x);
  FilterResult FilterRequestSelectors(FilterCtx& x);
  FilterResult FilterNodeSelection(FilterCtx& x);
  FilterResult FilterCapacity(FilterCtx& x);
  FilterResult FilterNodeOperations(FilterCtx& x);
  FilterResult FilterPartitionable(FilterCtx& x);
  FilterResult FilterCompatibilityGroups(FilterCtx& x);
  FilterResult FilterCounters(FilterCtx& x);
  FilterResult FilterTaints(FilterCtx& x);
  FilterResult FilterConstraints(FilterCtx& x);
  FilterResult FilterConsumeCapacity(FilterCtx& x);
  FilterResult FilterNamespaceLimits(FilterCtx& x);

  // What one filter removed from a funnel stage, for its rendering hook (explain.cc).
  struct FunnelStep {
    ClaimData& cd;
    ReqData& rd;
    RequestFunnel& fn;
    std::vector<int>& alive;          // narrowed by set-level hooks
    std::string& detail;              // the stage's detail, appended to
    std::vector<int> rejected;        // per-device filters: candidates removed
    std::vector<int> errored;         // per-device filters: candidates whose check failed
    std::vector<std::string> errors;  // their messages, aligned with `errored`
  };
  void DescribeInUse(FunnelStep& st);
  void DescribeBindingConditions(FunnelStep& st);
  void DescribeClassSelectors(FunnelStep& st);
  void DescribeRequestSelectors(FunnelStep& st);
  void DescribeNodeSelection(FunnelStep& st);
  void DescribeCapacity(FunnelStep& st);
  void DescribeNodeOperations(FunnelStep& st);
  void DescribePartitionable(FunnelStep& st);
  void DescribeCompatibilityGroups(FunnelStep& st);
  void DescribeCounters(FunnelStep& st);
  void DescribeTaints(FunnelStep& st);
  // Set-level funnel stages; false when the filter does not apply to the request.
  bool NarrowConstraints(FunnelStep& st);
  bool NarrowNamespaceLimits(FunnelStep& st);

  Allocator::Impl& impl_;
  const Node& node_;
  const NodePools* pools_ = nullptr;
  std::vector<ClaimData> claims_;

 private:
  Status Prepare();
  Status ValidateRequest(ReqData& rd, const ResourceClaim& claim);
  Step AllocateOne(int claim, int req, int sub, int64_t dev, bool allocate_sub, int start);
  // Screens a scanned candidate (x.claim, x.rd, x.ci; errors to x.error) with the pure prefix
  // of device_filters.h (the filters before the first recording one): nothing to undo.
  FilterResult Screen(FilterCtx& x);
  // Runs the filters of device_filters.h on candidate `ci` (all of them, or with `screened` the
  // ones after Screen's prefix) and, when all pass, records it as picked; `rb` must be fresh.
  // Returns 1 allocated, 0 not, -1 error (status_).
  int AllocateDevice(int claim, ReqData& rd, int ci, bool must, bool screened, Rollback* rb);
  template <bool kScan, size_t... I>
  FilterResult RunFilters(FilterCtx& x, std::index_sequence<I...>);
  template <bool kScan, size_t I>
  FilterResult RunFilter(FilterCtx& x);
  template <size_t... I>
  FilterResult RunChecks(FilterCtx& x, std::index_sequence<I...>);
  // Whether `rd` may not take candidate `ci` because it is in use (by another claim, or by this
  // claim when `rd` has admin access).
  bool InUseFor(const ReqData& rd, int ci) const;
  void Undo(int claim, ReqData& rd, int ci, const Rollback& rb);
  bool CheckCounters(int ci);
  // The attribute `name` of candidate `ci` as request `rd` sees it: its derived attribute of that
  // name (DRADerivedAttributes, evaluated once per device and expression) or the device's own.
  // Error: the derived attribute's expression failed to compile or evaluate.
  Status AttributeFor(const ReqData& rd, int ci, const std::string& name, const Attribute** out);
  // Checks candidate `ci` against the compatibility groups of every counter set it draws from
  // and folds its groups in (saved in `rb` for RestoreGroups). False = incompatible, unchanged.
  bool CheckGroups(int ci, Rollback* rb);
  void RestoreGroups(int ci, const Rollback& rb);
  // Intersections contributed by the allocated devices of pool view `pool`, per counter set.
  const std::map<std::string, GroupState>& GroupBaseline(int pool);
  void ReleaseCounters(int ci);
  // CmpRequestOverCapacity with allocated + in-flight consumption. -1 error (in *err), 0 no,
  // 1 yes.
  int CapacityFits(const ReqData& rd, int ci, std::string* err);
  bool CapacityInUse(int ci) const;
  bool PruneCut(ReqData& rd, int start, int64_t need);
  bool ErrorFree();
  void ApplyStrategy(ReqData& rd);
  // Namespace limit check for adding candidate `ci` as result `res` (its consumed capacity when
  // shared); on success records the in-flight usage in `rb`. False = over the limit (message
  // kept).
  bool LimitAllows(const ClaimData& cd, const ReqData& rd, int ci, const InternalResult& res,
                   Rollback* rb);
  void LimitRelease(const ClaimData& cd, const ReqData& rd, const Rollback& rb);
  const Allocator::Impl::Usage* Committed(int policy, const std::string& ns) const;
  // Result construction (search_results.cc): BuildResults in steps, each for one claim.
  SearchOutcome BuildResults();
  void AddDeviceResults(const ClaimData& cd, AllocationResult& ar) const;
  // Configs of the classes of the chosen requests (once per class), then of the claim.
  void AddClassConfigs(const ClaimData& cd, AllocationResult& ar) const;
  void AddClaimConfigs(const ClaimData& cd, AllocationResult& ar) const;
  // ar.node_selector from the devices' node selection; false with `error` when unsupported.
  bool SetNodeSelector(const ClaimData& cd, AllocationResult& ar, std::string* error) const;

  // --- explanations (explain.cc, explain_numbers.cc, explain_conflicts.cc) ---
  // Fills explain_: pools, one funnel per request and, after an unsatisfiable search, conflicts.
  void Explain();
  void ExplainPools();
  RequestFunnel ExplainRequest(ClaimData& cd, ReqData& rd, std::vector<int>* survivors);
  // One per-device filter of the funnel: each candidate of `st.alive` on its own (what the
  // filter changes is undone at once); narrows st.alive and fills st.rejected/errored.
  void ProbeEach(FilterResult (Search::*check)(FilterCtx&), FunnelStep& st);
  static std::string Verdict(const RequestFunnel& fn, bool all_mode);
  // Why candidate `ci` cannot take what `rd` would consume; `distance` orders devices by how
  // close they come (capacities short, then relative shortfall).
  DeviceCapacityShortfall CapacityShortfallOf(const ReqData& rd, int ci, double* distance);
  // Capacity-stage detail: the closest of `rejected` (candidate indices) into fn.
  std::string CapacityDetail(const ReqData& rd, const std::vector<int>& rejected,
                             RequestFunnel& fn);
  // Counter-stage detail: the counters that `rejected` devices would exceed, into fn.
  std::string CounterDetail(const std::vector<int>& rejected, RequestFunnel& fn);
  // Pool, set, counter, left, total and holders of flat counter `k` of pool view `pool`.
  CounterShortfall CounterState(int pool, int k);
  // The quantity format the slice declares counter `k` of `pool` in.
  api::Quantity::Format CounterFormat(const PoolView& pool, int k) const;
  // Requests that pass alone but fail together: appends explain_->conflicts and completes the
  // verdicts of the requests that pass alone.
  void ExplainConflicts(const std::vector<Survivors>& survivors);
  // The requests of `survivors` with their usable subrequests merged.
  std::vector<ConflictUnit> ConflictUnits(const std::vector<Survivors>& survivors);
  // Each appends at most one conflict per check to explain_->conflicts; `sets` are the sets of
  // requests (indices into `units`) to check, smallest first.
  void ConflictOnDevices(const std::vector<ConflictUnit>& units,
                         const std::vector<std::vector<size_t>>& sets);
  void ConflictOnCounters(const std::vector<ConflictUnit>& units,
                          const std::vector<std::vector<size_t>>& sets);
  void ConflictOnConstraints(const std::vector<ConflictUnit>& units);

  Explanation* explain_;
  std::vector<uint32_t> picked_count_;                  // per candidate: claims that picked it
  AttrSetCache attr_sets_;                              // list-mode constraints
  std::vector<std::vector<Amount>> consumed_counters_;  // per pool view
  std::map<std::pair<int, std::string>, Attribute> derived_;  // (gid, expression) -> value
  // Compatibility groups per pool view: running state of this call, baseline of allocated peers.
  std::vector<std::map<std::string, GroupState>> groups_running_;
  std::vector<std::optional<std::map<std::string, GroupState>>> groups_baseline_;
  std::vector<int> violations_;
  std::vector<uint8_t> ledger_init_;
  std::vector<std::vector<Amount>> alloc_cap_;  // per candidate, aligned with device capacity
  std::vector<int> live_shares_;
  Status status_;
  int64_t steps_ = 0;
  bool timed_out_ = false;
  std::chrono::steady_clock::time_point deadline_;
  bool has_deadline_ = false;
  int error_free_ = -1;            // -1 unknown, 0 no, 1 yes
  bool result_limit_hit_ = false;  // a claim needed more than kMaxResultsPerClaim devices
  bool experimental_ = false;
  std::map<std::pair<int, std::string>, Allocator::Impl::Usage> inflight_;

 public:
  std::string limit_message_;  // last namespace-limit rejection
  // Namespace limit usage of (policy, namespace): committed + in flight.
  Allocator::Impl::Usage UsageOf(int policy, const std::string& ns) const;
};

}  // namespace draco::alloc
