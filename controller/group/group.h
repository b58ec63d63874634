// Groups of pods that draco places all-or-nothing (gangs), and the search that places them.
//
// Which pods form a group (GroupOf), in this order:
//   1. spec.schedulingGroup.podGroupName: a scheduling.k8s.io PodGroup (Kubernetes 1.36+,
//      GenericWorkload); the minimum is its spec.schedulingPolicy.gang.minCount (a PodGroup with
//      the basic policy is no gang; one draco has not seen yet has minimum 0: the members wait).
//   2. label draco.dev/group=NAME; minimum from draco.dev/group-min-members (label or
//      annotation), else every member must be there (the minimum is then unknown: 0, wait).
//   3. LeaderWorkerSet: label leaderworkerset.sigs.k8s.io/group-key (one leader and its
//      workers); minimum annotation leaderworkerset.sigs.k8s.io/size.
//   4. JobSet: label jobset.sigs.k8s.io/jobset-name; minimum draco.dev/group-min-members, else
//      jobset.sigs.k8s.io/global-replicas (one pod per Job: a lower bound when Jobs run
//      several pods in parallel; set the draco annotation on the pod template then).
//   5. Kueue pod groups: label kueue.x-k8s.io/pod-group-name, annotation
//      kueue.x-k8s.io/pod-group-total-count.
// draco.dev/group-min-members overrides the minimum of 3-5. A topology constraint across the
// members is annotation draco.dev/group-match-attribute=<domain>/<name> on the pods (or on the
// PodGroup): every device of every member's claims then carries the same value of that device
// attribute (an NVLink clique, a PCIe root, a rack).
//
// The search (PlanGroup) is independent of where the members' devices come from: the caller
// allocates one member at a time (the allocator keeps each result in flight, so the next member
// sees those devices taken) and undoes an attempt that cannot reach the minimum, then the next
// domain (attribute value) is tried. Used by the controller (reconcilers/group_sync.cc) and by
// `draco simulate` (simulate/engine.cc), so both decide alike.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "controller/api/types.h"
#include "controller/api/workload_types.h"

namespace draco::group {

inline constexpr std::string_view kGroupLabel = "draco.dev/group";
inline constexpr std::string_view kMinMembersKey = "draco.dev/group-min-members";
inline constexpr std::string_view kMatchAttributeKey = "draco.dev/group-match-attribute";
inline constexpr std::string_view kJobSetNameLabel = "jobset.sigs.k8s.io/jobset-name";
inline constexpr std::string_view kJobSetGlobalReplicasKey = "jobset.sigs.k8s.io/global-replicas";
inline constexpr std::string_view kLwsGroupKeyLabel = "leaderworkerset.sigs.k8s.io/group-key";
inline constexpr std::string_view kLwsNameLabel = "leaderworkerset.sigs.k8s.io/name";
inline constexpr std::string_view kLwsGroupIndexLabel = "leaderworkerset.sigs.k8s.io/group-index";
inline constexpr std::string_view kLwsSizeAnnotation = "leaderworkerset.sigs.k8s.io/size";
inline constexpr std::string_view kKueueGroupLabel = "kueue.x-k8s.io/pod-group-name";
inline constexpr std::string_view kKueueTotalCountAnnotation =
    "kueue.x-k8s.io/pod-group-total-count";

enum class Source { kPodGroup, kLabel, kLeaderWorkerSet, kJobSet, kKueue };

struct GroupRef {
  // Identity: "<namespace>/<source>/<name>" (pods of one namespace only).
  std::string key;
  // For people: "PodGroup training", "JobSet pytorch", "group g1".
  std::string display;
  Source source = Source::kLabel;
  std::string name;
  // Members that must be placed at once; 0 while unknown (the members wait).
  int64_t min_members = 0;
  // Fully qualified device attribute every member's devices share, or "".
  std::string match_attribute;
};

// The group key of `pod` without the PodGroup object (for indexing); "" when it is in none.
std::string GroupKeyOf(const api::Pod& pod);

// The pod's group, or nullopt. `pod_group`: the PodGroup the pod names, when known (else a
// PodGroup member gets minimum 0). A PodGroup with the basic policy is not a gang: nullopt.
std::optional<GroupRef> GroupOf(const api::Pod& pod, const api::PodGroup* pod_group);

// One value of the match attribute: the devices a member may use when the group is placed in it.
struct Domain {
  std::string value;     // the value as text ("a", "3", "true")
  std::string selector;  // CEL expression true exactly for devices with that value
  size_t devices = 0;    // devices in the slices that carry it
};

// The distinct values of `attribute` ("<domain>/<name>"; a device attribute without a domain is
// qualified by its slice's driver) among the devices of `slices`, fewest devices first (ties by
// value), so a group takes the tightest domain it fits in. Only string, int and bool values
// form domains. Error: the attribute name is not qualified.
using SlicePtr = std::shared_ptr<const api::ResourceSlice>;
StatusOr<std::vector<Domain>> DomainsOf(const std::vector<SlicePtr>& slices,
                                        std::string_view attribute);

// The domain value of an allocated device, if it carries `attribute`.
std::optional<std::string> DeviceDomain(const std::vector<SlicePtr>& slices,
                                        std::string_view attribute, std::string_view driver,
                                        std::string_view pool, std::string_view device);

// `claim` with `selector` added to every request and subrequest (the copy is for the allocator
// only; selectors are not part of an allocation result).
api::ResourceClaim Constrained(const api::ResourceClaim& claim, const std::string& selector);

struct MemberOutcome {
  bool placed = false;
  std::string node;     // placed: where
  std::string message;  // not placed: why (the allocator's or the node filter's explanation)
};

struct PlanOutcome {
  bool ok = false;
  std::optional<size_t> domain;  // ok with domains: the index into `domains`
  std::vector<size_t> placed;    // ok: the members placed, in order
  // Not ok: the attempt that came closest (most members placed): its domain, the member that
  // could not be placed, why, and how many had been placed before it.
  std::optional<size_t> failed_domain;
  size_t failed_member = 0;
  size_t placed_before_failure = 0;
  std::string message;
  size_t attempts = 0;  // domains tried
};

// Places at least `need` of `members` members at once. Without domains (`domains` empty and
// `constrained` false) one attempt; with domains, one attempt per domain in order until one
// reaches `need`. `try_member(i, domain, prefer)` places member i (domain null when
// unconstrained; `prefer`: the node the previous member of this attempt got, "" for the first)
// and keeps what it placed until `undo()`, which releases everything placed since the last
// undo. A member that fails is skipped while `need` stays reachable. On failure everything is
// undone; on success nothing is.
PlanOutcome PlanGroup(
    size_t members, size_t need, const std::vector<Domain>& domains, bool constrained,
    const std::function<MemberOutcome(size_t, const Domain*, const std::string&)>& try_member,
    const std::function<void()>& undo);

// "<display> (N of M members placed at once needed)" style summary of a failed plan, naming the
// member `member_name`, for Events and explanations.
std::string DescribeFailure(const GroupRef& g, const PlanOutcome& out,
                            const std::vector<Domain>& domains, const std::string& member_name);

}  // namespace draco::group
