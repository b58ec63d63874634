// The live cluster as `kubectl draco` sees it: every object the allocator and kube-scheduler's
// filters read (DeviceClasses, ResourceSlices, DeviceTaintRules, ResourceClaims and templates,
// AllocationPolicies, Nodes, Pods, PersistentVolumes and claims, StorageClasses, CSINodes,
// Namespaces), listed with the user's credentials and handed to the simulate engine as one
// `kind: List` document, so `kubectl draco` decides from the same objects `draco run` caches.
//
// Errors name what the user can fix: a missing permission names the verb, resource and API group
// ("cannot list resourceslices.resource.k8s.io at the cluster scope: forbidden; kubectl draco
// needs RBAC verb \"list\" on ..."), an unserved DRA API names the version needed, an unreachable
// server its address. Optional kinds (DeviceTaintRules, AllocationPolicies, volumes, CSINodes,
// Namespaces) that are not served are skipped; if they are forbidden, a warning is written to
// `warn` and the snapshot goes on without them.
//
// Thread-compatible; `client` is used from the calling thread only.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "base/status.h"
#include "controller/simulate/simulate.h"
#include "k8sclient/rest_client.h"

namespace draco::kubectl {

// One kind kubectl draco reads.
struct ClusterKind {
  k8s::GroupVersionResource gvr;
  const char* api_version = nullptr;  // as the List items get it, e.g. "resource.k8s.io/v1"
  const char* kind = nullptr;
  bool required = false;  // false: skipped when not served, warned about when forbidden
};

// The kinds, in load order (classes and slices before claims, nodes before pods).
const std::vector<ClusterKind>& ClusterKinds();

// Counts of what was read, per kind ("ResourceSlice" -> 12), and the skipped kinds.
struct ClusterSummary {
  std::vector<std::pair<std::string, size_t>> counts;
  std::vector<std::string> skipped;  // "AllocationPolicy (not served)", "CSINode (forbidden)"
};

// Lists every kind (all namespaces, 500 per page) and returns one document for
// simulate::Options::documents. Each item gets its apiVersion and kind; managedFields are dropped.
// `host` names the server in errors.
StatusOr<simulate::Document> FetchCluster(k8s::RestClient& client, const std::string& host,
                                          std::ostream& warn, ClusterSummary* summary = nullptr);

// The user-facing text for a failed list of `k` (exposed for tests).
std::string DescribeListError(const ClusterKind& k, const Status& s, const std::string& host);

}  // namespace draco::kubectl
