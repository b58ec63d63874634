// Node feasibility with the semantics of kube-scheduler v1.37.2's default Filter plugins (all but
// DynamicResources), in the default profile's order: NodeName, NodeUnschedulable,
// TaintToleration, NodeAffinity, NodePorts, NodeResourcesFit, VolumeRestrictions,
// NodeVolumeLimits, VolumeBinding, VolumeZone, PodTopologySpread, InterPodAffinity.
//
// The framework's rules are followed: every plugin's PreFilter runs first, in order; a PreFilter
// that rejects the pod (Unschedulable or UnschedulableAndUnresolvable) rejects every node with that
// plugin's name; PreFilter node-name narrowing (NodeAffinity matchFields metadata.name) excludes
// the other nodes under that plugin's name; then each node runs the Filters in order and the first
// failure names the node's verdict. A PreFilter error (e.g. an unparsable label selector) gives
// every node a verdict naming that plugin with `error` set.
//
// Not modelled (see CoversPod): DynamicResources (draco's own allocator does that part), in-tree
// volume CSI migration, VolumeAttachments and CSIStorageCapacity, non-default scheduler profiles.
// Pure functions of their arguments; thread-safe.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "controller/feasibility/snapshot.h"

namespace draco::feasibility {

struct Verdict {
  bool passed = true;
  std::string plugin;  // kube-scheduler plugin name that rejected the node; "" when passed
  std::string reason;  // its reason, e.g. "node(s) didn't match pod anti-affinity rules"
  bool error = false;  // the pod could not be evaluated (reason says why)
  std::string detail;  // optional, for explanations: "pod anti-affinity with wedge/occupant"
};

// One verdict per node of `snapshot.nodes`, in order. The pod itself must not be among
// `snapshot.pods` (callers drop it; a placed copy would count against itself).
std::vector<Verdict> Evaluate(const api::Pod& pod, const Snapshot& snapshot);

// The verdict for one node (which need not be in `snapshot.nodes`; it is evaluated as if it were
// appended to them).
Verdict Filter(const api::Pod& pod, const api::Node& node, const Snapshot& snapshot);

// The nodes whose verdict passed, in snapshot order.
std::vector<std::shared_ptr<const api::Node>> FeasibleNodes(const api::Pod& pod,
                                                            const Snapshot& snapshot);

// Checks the parts of the pod the filters parse: label selectors of required pod (anti-)affinity
// terms and topology spread constraints, spread maxSkew/whenUnsatisfiable/minDomains/policies,
// topology keys. INVALID_ARGUMENT naming the field ("spec.topologySpreadConstraints[0].maxSkew:
// must be greater than zero").
Status ValidatePod(const api::Pod& pod);

// True when the verdicts above model every scheduling constraint kube-scheduler would apply to
// the pod: its schedulerName is default-scheduler (or empty) and it uses no volume source whose
// filtering draco does not model (in-tree gcePersistentDisk/awsElasticBlockStore/rbd/iscsi
// attach limits and migration). Resource claims are draco's own and do not count against it.
bool CoversPod(const api::Pod& pod);

}  // namespace draco::feasibility
