// draco's structured-parameters allocator.
//
// Semantics are those of the upstream Go allocator in k8s.io/dynamic-resource-allocation v0.37.2
// ("incubating" variant with the kube-scheduler 1.37 default features, "experimental" when an
// alpha feature such as list-type attributes is on), including pool gathering (generations,
// completeness, invalid pools), exactly/firstAvailable requests, ExactCount/All, class and request
// CEL selectors, admin access, matchAttribute/distinctAttribute, configs in results, partitionable
// devices with shared counters, consumable capacity, taints/tolerations, binding conditions,
// node-local / node-selector / all-nodes devices, the result node selector and every limit, and
// the 1.37 alpha features behind their gates: device compatibility groups (devices drawing from
// one counter set must share a group) and derived attributes (a request's CEL-computed
// attributes replace the device's for its constraints). Upstream's own allocator test table
// passes in full (tests/differential/upstream_suite.sh).
// Upstream's late-fixed bugs (counter leaks on rejected candidates, counters keyed by pool name
// only, stale list intersections, per-request distinctAttribute, duplicated configs) are not
// reproduced: v0.37.2 itself has them fixed, and so does draco.
//
// Differences from upstream are in speed only ("compatible mode" gives identical results):
//  - the cluster snapshot (slices, classes, allocated claims) is indexed once per Allocator, not
//    per Allocate call; per-node pool gathering and class-selector results are cached;
//  - the depth-first search is upstream's, plus pruning of subtrees that provably contain no
//    solution (too few remaining candidates, no common value left for a matchAttribute
//    constraint, too few distinct values for a distinctAttribute constraint). Pruning is only used
//    when no candidate could raise a fatal error that upstream might have hit in the pruned part,
//    so outcomes, including fatal CEL errors, stay identical.
//
// AllocationPolicy (Config::policies; crds/draco.dev_allocationpolicies.yaml): a DeviceClass is
// governed by the selecting policy with the highest priority, ties to the smallest name; none =
// FirstFit without limits. For requests (and firstAvailable subrequests) of a governed class:
//  - FirstFit: upstream order, identical results;
//  - BinPack / Spread: candidate devices of a node are visited pools-most-allocated-first /
//    least-allocated-first (stable, so upstream order breaks ties; shared devices already in use
//    count as more allocated), and AllocateOnAnyNode visits nodes by allocated devices on their
//    node-local slices, most / least first (stable w.r.t. the rotation from `start`). The first
//    governed non-FirstFit request of the claims decides the node order;
//  - namespace limits (the claim namespace's entry, else "*"): maxDevices and maxCapacity[name]
//    over committed (Create's `allocated`, Commit(claim, result)) plus in-flight devices of this
//    call; exceeding one makes the device not fit (unsatisfiable, not an error), the outcome
//    message and the explanation name the policy, the limit, used and requested amounts.
//
// Outcomes (like upstream's Allocate): allocated (one AllocationResult per claim, claim order),
// unsatisfiable (no solution on this node; `message` set when invalid pools were seen), or a fatal
// error (CEL error, >32 devices per claim, feature-disabled field, All with an incomplete pool...).
//
// Vocabulary: callers hand over and get back controller/api objects only (ResourceSlice,
// DeviceClass, DeviceTaintRule, ResourceClaim, Node, AllocationPolicy in; api::AllocationResult
// out). The allocator computes on its own private form (compute_model.h): a Snapshot converts each
// slice once when it enters, Allocate/Explain/Commit convert the claims of each call.
//
// Thread-compatibility: an Allocator is thread-compatible. Allocate/Explain/Commit must not run
// concurrently on one instance (the caches they fill are unsynchronized); distinct instances are
// independent. The SelectorCompiler must be thread-safe only if shared between instances.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "controller/allocator/features.h"
#include "controller/api/policy_types.h"
#include "controller/api/types.h"

namespace draco::alloc {

// CEL seam (selector.h); NewCelSelectorCompiler() gives draco's own CEL (null when draco_celenv
// is not built).
class SelectorCompiler;
std::shared_ptr<SelectorCompiler> NewCelSelectorCompiler();

struct Outcome {
  enum class Kind { kAllocated, kUnsatisfiable, kError, kTimeout };
  Kind kind = Kind::kUnsatisfiable;
  std::vector<api::AllocationResult> results;  // kAllocated: one per claim (status.allocation)
  std::string message;       // reason (kUnsatisfiable, may be empty) or error text
  std::string node;          // AllocateOnAnyNode: the chosen node
  int64_t search_steps = 0;  // allocateOne invocations (upstream's Stats counter)
};

// Funnel of one request (or subrequest) on one node: how many candidate devices survive each
// filter, and what removed the last ones. See explain.h for rendering.
struct FunnelStage {
  std::string name;  // "devices of the class", "after class selectors", ...
  int64_t count = 0;
  std::string detail;  // what eliminated devices at this stage (selector, constraint, taint...)
};
// Quantities below are canonical Kubernetes quantity strings ("48Gi", "60", "1500m").
// One capacity of a device that cannot take what a request would consume of it.
struct CapacityShortfall {
  std::string name;       // capacity name
  std::string requested;  // what the request would consume (after requestPolicy rounding)
  std::string asked;      // what the request asked for, when rounding changed it; else ""
  std::string remaining;  // capacity minus what allocated claims consume; "" when `missing`
  std::string total;      // the device's capacity; "" when `missing`
  bool missing = false;   // the device has no capacity of that name
  bool policy = false;    // `requested` is not a value the capacity's requestPolicy accepts
};
// A device removed by the capacity stage, with the capacities that do not fit.
struct DeviceCapacityShortfall {
  std::string pool;    // driver/pool
  std::string device;  // device name
  std::vector<CapacityShortfall> capacities;
};
// Who holds part of a shared counter: an allocated claim ("namespace/name") or, when the claim
// is not known (Commit without a claim, CreateFromState), "device <name>".
struct CounterHolder {
  std::string holder;
  std::string amount;
};
// A shared counter (DRAPartitionableDevices) that cannot cover what devices need of it.
struct CounterShortfall {
  std::string pool;  // driver/pool
  std::string counter_set;
  std::string counter;
  int64_t devices = 0;  // devices removed on this counter (per-device stage) or to be picked
  std::string device;   // per-device stage: the device needing the least; else ""
  std::string needed;   // least amount those devices need of the counter
  std::string left;     // counter value minus what allocated devices consume (may be negative)
  std::string total;    // the counter's value
  std::vector<CounterHolder> holders;  // largest first, at most a few
  int64_t more_holders = 0;            // holders not listed
};
// Why requests that each pass every per-device filter cannot be allocated together, as far as
// the explainer can tell from necessary conditions (each kind below proves there is no
// solution; kSearch means none of them applied).
struct Conflict {
  enum class Kind {
    kDevices,
    kCounter,
    kMatchAttribute,
    kDistinctAttribute,
    kResultLimit,
    kSearch
  };
  Kind kind = Kind::kSearch;
  std::vector<std::string> requests;  // "namespace/claim/request" of the requests involved
  std::string attribute;              // constraints: the fully qualified attribute name
  int64_t needed = 0;                 // devices (kDevices, kDistinctAttribute, kResultLimit)
  int64_t available = 0;              // candidate devices, distinct values, or the result limit
  std::optional<CounterShortfall> counter;  // kCounter
  std::string text;                         // human summary
};
struct RequestFunnel {
  std::string claim;    // namespace/name
  std::string request;  // <req> or <req>/<sub>
  std::string device_class;
  int64_t wanted = 0;  // devices needed (All: the resolved count)
  bool all_mode = false;
  std::vector<FunnelStage> stages;
  std::vector<std::string> cel_errors;  // quoted CEL errors, at most a few
  // Capacity stage: the closest devices first, at most a few (capacity_more not listed).
  std::vector<DeviceCapacityShortfall> capacity_shortfalls;
  int64_t capacity_more = 0;
  // Counter stage: one entry per exhausted counter, most devices first, at most a few.
  std::vector<CounterShortfall> counter_shortfalls;
  int64_t counters_more = 0;
  std::string verdict;             // short human summary
  bool satisfiable_alone = false;  // enough devices pass every per-device filter
};
struct Explanation {
  std::string node;
  Outcome outcome;
  std::vector<std::string> pools;  // "driver/pool: ok|incomplete|invalid (reason)|obsolete"
  std::vector<RequestFunnel> requests;
  // Set when the search failed although every request passes the per-device filters alone.
  std::vector<Conflict> conflicts;
};

// An immutable, indexed cluster snapshot: DeviceClasses, ResourceSlices (DeviceTaintRules merged)
// and their indexes. Build it once and share it between any number of Allocators (each Allocator
// keeps only its own allocated state and caches on top of it); derive updated snapshots per slice
// with WithSlice/WithoutSlice.
// Cost: Build is O(slices) (pool interning, per-pool device-id layout); nothing is done per
// device until used: a pool's device-name index is built lazily the first time an allocator
// touches the pool, and the node -> slices index after a few per-node lookups. WithSlice and
// WithoutSlice copy O(slices + pools) pointers/ints, share every unchanged slice object, the
// classes and taint rules, and the lazily built index of every pool the change does not touch.
// Taint-rule merging copies only slices a rule actually applies to (copy-on-write).
// Thread-safety: logically immutable and safe to share across threads; the lazy indexes are
// built under std::call_once (per pool, and once for the node index), so concurrent Allocators
// over one snapshot may trigger them at the same time.
class Snapshot {
 public:
  // Converts every slice to the allocator's compute form once, here; the snapshot computes on
  // that form only. Null entries are ignored. Taint rules are merged into device
  // taints when features.device_taint_rules is on.
  // With `previous` (a snapshot this function built), slices that are the very same API objects
  // (same pointer) as there are not converted again: only new and changed slices cost a
  // conversion. The snapshot keeps a reference to each API slice for that purpose.
  static std::shared_ptr<const Snapshot> Build(
      const Features& features, const std::vector<api::DeviceClass>& classes,
      const std::vector<std::shared_ptr<const api::ResourceSlice>>& slices,
      const std::vector<api::DeviceTaintRule>& taint_rules, const Snapshot* previous = nullptr);
  // A new snapshot where the slice named like `slice` is replaced (or appended when absent);
  // only `slice` is converted.
  std::shared_ptr<const Snapshot> WithSlice(const api::ResourceSlice& slice) const;
  // A new snapshot without the slice named `name` (same content when absent).
  std::shared_ptr<const Snapshot> WithoutSlice(std::string_view name) const;
  int64_t num_devices() const;
  size_t num_slices() const;
  // True when both snapshots hold the very same slice object at index `i` (sharing check).
  bool SharesSlice(const Snapshot& other, size_t i) const;
  // True when both snapshots share the (lazy) device index of pool driver/pool.
  bool SharesPoolIndex(const Snapshot& other, std::string_view driver, std::string_view pool) const;
  // True when the device index of pool driver/pool has been built (laziness check).
  bool IsPoolIndexed(std::string_view driver, std::string_view pool) const;

  struct Data;
  const Data& data() const { return *data_; }
  explicit Snapshot(std::unique_ptr<Data> data);
  Snapshot(const Snapshot&) = delete;
  Snapshot& operator=(const Snapshot&) = delete;
  ~Snapshot();

 private:
  std::unique_ptr<Data> data_;
};

class Allocator;

// The allocated state of one Allocator (devices in use, shared-capacity aggregates, namespace
// limit usage), resolved against its Snapshot. Taken with Allocator::State() and handed to
// Create to start further allocators from it without re-reading every allocated claim.
// Immutable; safe to share across threads.
class AllocatedState {
 public:
  struct Data;
  explicit AllocatedState(std::unique_ptr<Data> data);
  AllocatedState(const AllocatedState&) = delete;
  AllocatedState& operator=(const AllocatedState&) = delete;
  ~AllocatedState();
  const Data& data() const { return *data_; }

 private:
  std::unique_ptr<Data> data_;
};

class Allocator {
 public:
  struct Config {
    Features features;
    std::shared_ptr<SelectorCompiler> selectors;  // required when any selector is present
    // Pruning of provably solution-free subtrees (results stay identical). Off = upstream's
    // exact search, for differential debugging.
    bool prune = true;
    // Apply the scheduler's PreFilter checks (empty class name = error, unknown class or
    // firstAvailable without PrioritizedList = unsatisfiable) before allocating.
    bool scheduler_prefilter = true;
    // Search budget per Allocate call (upstream: kube-scheduler filterTimeout, 10 s). 0 = none.
    std::chrono::milliseconds timeout{0};
    // Deterministic share IDs ("00000000-0000-4000-8000-<n>") instead of random UUIDs.
    bool deterministic_share_ids = false;
    // API-server defaulting of every claim handed over (allocationMode "" -> ExactCount, count 0
    // with ExactCount -> 1, toleration operator "" -> Equal). Off: claims as written (upstream's
    // allocator unit tests hand over undefaulted claims).
    bool default_claims = true;
    // AllocationPolicies (strategy and namespace limits per governed DeviceClass). Empty =
    // upstream behaviour. Create rejects a policy that breaks the CRD's structural rules
    // (ValidatePolicy).
    std::vector<api::AllocationPolicy> policies;
  };

  // Builds the snapshot (Snapshot::Build) and an allocator over it. `allocated` are claims with
  // status.allocation (committed or in flight); they are read once, in Create.
  static StatusOr<std::unique_ptr<Allocator>> Create(
      const Config& config, const std::vector<api::DeviceClass>& classes,
      const std::vector<std::shared_ptr<const api::ResourceSlice>>& slices,
      const std::vector<api::DeviceTaintRule>& taint_rules,
      const std::vector<const api::ResourceClaim*>& allocated);
  // Cheap: creates an allocator over a shared snapshot; only the allocated state is built
  // (O(allocated results) plus one 4-byte word per device). `config.features` must equal the
  // features the snapshot was built with (taint-rule merging depends on them). Without
  // AllocationPolicy namespace limits, `allocated` is read into a compact list (no device
  // lookups; each pool's devices are resolved the first time the pool is used); with namespace
  // limits, every result is resolved immediately (usage needs class and device).
  static StatusOr<std::unique_ptr<Allocator>> Create(
      const Config& config, std::shared_ptr<const Snapshot> snapshot,
      const std::vector<const api::ResourceClaim*>& allocated);
  // Cheapest: an allocator over `snapshot` starting from `state` (taken with State() from an
  // allocator with the same config.policies, else INVALID_ARGUMENT). When `state` was taken over
  // a different snapshot (e.g. the one WithSlice derived from), in-use devices are carried over
  // by (driver, pool, device) identity, no claims re-read: pools whose index the two snapshots
  // share (all pools a WithSlice/WithoutSlice chain did not touch) are block-copied, the others
  // are matched by device name (O(in-use devices of changed pools)). Namespace-limit usage is
  // carried over unchanged.
  static StatusOr<std::unique_ptr<Allocator>> CreateFromState(
      const Config& config, std::shared_ptr<const Snapshot> snapshot,
      const std::shared_ptr<const AllocatedState>& state);
  Allocator(const Allocator&) = delete;
  Allocator& operator=(const Allocator&) = delete;
  ~Allocator();

  // A copy of the current allocated state (committed and in-flight allocations); resolves the
  // pending allocated claims of every pool into the copy (O(allocated results)).
  std::shared_ptr<const AllocatedState> State() const;

  // Compatible mode: allocates all `claims` (unallocated, pod order) for `node`, exactly like
  // upstream's Allocate for that node. Each claim is converted to the compute form per call.
  Outcome Allocate(const api::Node& node, const std::vector<const api::ResourceClaim*>& claims);

  // Tries candidate nodes in order, starting at `start` and wrapping around, and returns the first
  // node with an allocation (Outcome::node set). Fatal errors stop the scan. Does not commit.
  Outcome AllocateOnAnyNode(const std::vector<const api::Node*>& candidates,
                            const std::vector<const api::ResourceClaim*>& claims, size_t start = 0);

  // Records `claim`'s status.allocation as in use (in flight or committed): its devices are
  // never handed out again by this Allocator, and the allocation counts against `claim`'s
  // namespace limits (AllocationPolicy). Admin-access results are ignored, as upstream does.
  // Nothing happens for a claim without status.allocation.
  void Commit(const api::ResourceClaim& claim);
  // Same for `result` of the last successful Allocate/AllocateOnAnyNode of `claim` (the
  // allocator keeps that call's compute form, so nothing is converted back).
  void Commit(const api::ResourceClaim& claim, const api::AllocationResult& result);

  // Allocates and, on failure, explains every request: a funnel per node.
  Explanation Explain(const api::Node& node, const std::vector<const api::ResourceClaim*>& claims);

  // Bytes of the allocator's own per-device index and state plus the snapshot's indexes built so
  // far (excluding the input objects), divided by the number of devices in the snapshot.
  double IndexBytesPerDevice() const;
  int64_t num_devices() const;

  class Impl;
  // Allocator-internal (allocator_impl.h).
  Impl& impl() { return *impl_; }
  explicit Allocator(std::unique_ptr<Impl> impl);

 private:
  std::unique_ptr<Impl> impl_;
};

// INVALID_ARGUMENT naming the policy when `policy` breaks the AllocationPolicy CRD's structural
// rules (name, spec and deviceClassSelector required, exactly one of names and labelSelector,
// known operators and strategy, namespace set in every namespaceLimits entry).
Status ValidatePolicy(const api::AllocationPolicy& policy);

std::string_view OutcomeKindName(Outcome::Kind kind);

}  // namespace draco::alloc
