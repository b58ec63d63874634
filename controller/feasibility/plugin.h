// Internal: the filter plugin interface and the per-node view (NodeInfo) the plugins read.
// Not part of the library's public API (see feasibility.h).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "controller/feasibility/resources.h"
#include "controller/feasibility/snapshot.h"

namespace draco::feasibility::internal {

struct NodeInfo {
  const api::Node* node = nullptr;
  std::vector<const api::Pod*> pods;  // placed on this node
  Resources requested;
  Resources allocatable;
};

// Every node of a snapshot, in order, with its pods.
struct ClusterIndex {
  const Snapshot* snapshot = nullptr;
  std::vector<NodeInfo> nodes;
  std::unordered_map<std::string_view, size_t> by_name;  // views of the nodes' names
  // Built once per snapshot; O(nodes + pods).
  static ClusterIndex Build(const Snapshot& snapshot);
};

// A PreFilter outcome.
struct PreResult {
  enum Code { kOk, kSkip, kReject, kError } code = kOk;
  std::string reason;
  std::optional<std::set<std::string>> node_names;  // PreFilterResult narrowing
  static PreResult Ok() { return {}; }
  static PreResult Skip() { return {kSkip, "", std::nullopt}; }
  static PreResult Reject(std::string r) { return {kReject, std::move(r), std::nullopt}; }
  static PreResult Error(std::string r) { return {kError, std::move(r), std::nullopt}; }
};

// A Filter outcome: empty `reason` = the node passes. `detail` optionally names the object
// responsible ("pod anti-affinity with ns/name") for explanations.
struct Rejection {
  std::string reason;
  std::string detail;
  Rejection() = default;
  Rejection(std::string r) : reason(std::move(r)) {}  // NOLINT(google-explicit-constructor)
  Rejection(const char* r) : reason(r) {}             // NOLINT(google-explicit-constructor)
  Rejection(std::string r, std::string d) : reason(std::move(r)), detail(std::move(d)) {}
  bool passed() const { return reason.empty(); }
};

// One kube-scheduler filter plugin, bound to one pod for one scheduling cycle: PreFilter once,
// then Filter per node (const, may run concurrently).
class Plugin {
 public:
  virtual ~Plugin() = default;
  virtual std::string_view Name() const = 0;
  virtual PreResult PreFilter(const api::Pod& pod, const ClusterIndex& cluster) = 0;
  // Passed, or the reason (kube-scheduler's wording where it has one).
  virtual Rejection Filter(const api::Pod& pod, const NodeInfo& node) const = 0;
};

// In kube-scheduler's default filter order.
std::unique_ptr<Plugin> NewNodeName();
std::unique_ptr<Plugin> NewNodeUnschedulable();
std::unique_ptr<Plugin> NewTaintToleration();
std::unique_ptr<Plugin> NewNodeAffinity();
std::unique_ptr<Plugin> NewNodePorts();
std::unique_ptr<Plugin> NewNodeResourcesFit();
std::unique_ptr<Plugin> NewVolumeRestrictions();
std::unique_ptr<Plugin> NewNodeVolumeLimits();
std::unique_ptr<Plugin> NewVolumeBinding();
std::unique_ptr<Plugin> NewVolumeZone();
std::unique_ptr<Plugin> NewPodTopologySpread();
std::unique_ptr<Plugin> NewInterPodAffinity();

// Shared helpers.
// nodeSelector AND required node affinity (nodeaffinity.GetRequiredNodeAffinity(pod).Match).
bool MatchesRequiredNodeAffinity(const api::Pod& pod, const api::Node& node);
// The first NoSchedule/NoExecute taint of `node` the pod does not tolerate; nullptr if none.
const api::Taint* FirstUntoleratedTaint(const api::Pod& pod, const api::Node& node);
// The PVC name a volume refers to ("" when it is neither a PVC nor an ephemeral volume).
std::string VolumeClaimName(const api::Pod& pod, const api::Volume& v);

}  // namespace draco::feasibility::internal
