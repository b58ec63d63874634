// The engine behind `draco simulate`, `draco explain` and `kubectl draco`: inputs loaded from
// manifests (files, or in-memory documents such as a live cluster's objects), the allocation
// groups built from them, and one group's allocation or explanation. See simulate.h for the
// semantics; this header is internal to controller/simulate and controller/kubectl.
//
// Thread-compatible: a Simulation is used by one thread.
#pragma once

#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "base/status.h"
#include "controller/allocator/allocator.h"
#include "controller/allocator/features.h"
#include "controller/api/policy_types.h"
#include "controller/api/types.h"
#include "controller/api/workload_types.h"
#include "controller/feasibility/snapshot.h"
#include "controller/simulate/simulate.h"

namespace draco::simulate {

inline constexpr int kExitOk = 0;
inline constexpr int kExitUnallocated = 1;
inline constexpr int kExitInput = 2;

// The objects simulate reads, decoded once with the api codec (api::Decode) and kept in the api
// model; the allocator takes them as they are (allocator.h converts to its own form).
struct Inputs {
  std::vector<api::DeviceClass> classes;
  // Shared with the allocator's snapshot and the pod groups' domains (group.h).
  std::vector<std::shared_ptr<const api::ResourceSlice>> slices;
  std::vector<api::DeviceTaintRule> rules;
  std::vector<api::AllocationPolicy> policies;
  std::vector<std::string> policy_sources;  // per policy: "FILE: document N (AllocationPolicy)"
  std::vector<api::ResourceClaim> claims;   // order of appearance; namespace defaulted
  std::map<std::string, api::ResourceClaimTemplate> templates;  // by "ns/name"
  // Pods in input order (workloads' pods at the workload's place), namespace defaulted; finished
  // pods are left out.
  std::vector<std::shared_ptr<const api::Pod>> pods;
  std::vector<api::PodGroup> pod_groups;  // scheduling.k8s.io PodGroups (gangs, groups.h)
  // kube-scheduler's view: the Nodes in input order (nodes named by the slices when the input
  // has none; see SimulatedNode in inputs.cc), pods placed so far (spec.nodeName, then the nodes
  // simulate chose), PVs, PVCs, StorageClasses, CSINodes, Namespaces.
  feasibility::Snapshot cluster;
  // "Deployment ns/name: 2 pods" per expanded workload; "Kind/name" per object of a kind
  // simulate does not know (listed in the output, never skipped silently).
  std::vector<std::string> workloads;
  std::vector<std::string> ignored;
};

// Reads opts.documents then opts.paths into `in` (inputs.cc). Input errors name the source and
// document.
Status LoadInputs(const Options& opts, Inputs* in);

// One allocation unit: a pod's unallocated claims, or a claim no pod references.
struct Group {
  std::string label;           // "pod ns/name" or "claim ns/name"
  std::vector<size_t> claims;  // indices into Simulation::claims
  int pod = -1;                // index into Inputs::pods for pod groups
  std::string problem;         // input problem that prevents allocation (missing claim/template)
};

struct Simulation {
  Inputs in;
  // The claims being allocated: Inputs::claims, then the claims generated for pods (from
  // templates, "<pod>-<podClaimName>"; extended resources); stable addresses after Build.
  // Allocations are recorded in their status.allocation.
  std::vector<api::ResourceClaim> claims;
  std::vector<Group> groups;
  // The classes, slices and taint rules of the inputs, converted once by Build; every allocator
  // ResetAllocator makes shares it.
  std::shared_ptr<const alloc::Snapshot> snapshot;
  std::unique_ptr<alloc::Allocator> allocator;
  alloc::Allocator::Config allocator_config;
  alloc::Features features;  // the allocator's (version defaults and --feature-gates)
};

struct GroupOutcome {
  bool allocated = false;
  std::string node;
  std::string message;
  std::vector<alloc::Explanation> explanations;
  std::vector<std::string> filtered;  // "node-1: InterPodAffinity: pod anti-affinity with ns/p"
};

// Loads opts.documents then opts.paths (LoadInputs), builds the allocation groups: one per Pod (its
// unallocated claims) in input order, then one per claim no pod references. Input errors name
// the source and document.
Status Build(const Options& opts, Simulation* sim);

// Allocates (explain = false; committed, so later groups see it) or explains (explain = true;
// nothing committed) one group, on the nodes that pass the controller's node filter
// (feasibility/node_filter.h: kube-scheduler's filters, Ready, allocated claims' node selectors;
// Ready and schedulable for a claim no pod references), restricted to
// `only_node` when it is set. Candidates are tried from `prefer` on when it is one (a pod group's
// member goes where the previous member went, as in the controller).
GroupOutcome RunGroup(Simulation& sim, const Group& g, bool explain, const std::string& only_node,
                      const std::string& prefer = "");

// (Re)creates sim.allocator from sim.allocator_config, sim.snapshot and the allocations recorded in
// sim.claims: what was committed but is no longer recorded there is released (groups.cc undoes
// a pod group's trial this way). Defined in groups.cc.
Status ResetAllocator(Simulation& sim);

// "  claim ns/name\n    request -> driver/pool/device ...\n" (and config, node selector).
void PrintAllocation(const api::ResourceClaim& c, const api::AllocationResult& r,
                     std::ostream& out);

// Each explanation's text, every line prefixed with `indent`; `skip_allocated` leaves out nodes
// where the claims would be allocated. Nodes where no request has a single device of its class
// are summarized on one line ("no devices for these requests on 2 nodes: node-0, node-1")
// instead of an all-zero funnel each, so a cluster of many CPU nodes stays readable.
void PrintExplanations(const std::vector<alloc::Explanation>& explanations, bool skip_allocated,
                       const std::string& indent, std::ostream& out);

// "ignored: 2 objects of unknown kinds: Service/foo, ConfigMap/bar" ("" when none).
std::string IgnoredLine(const Inputs& in);

// "ns/name", "default" for an empty namespace.
std::string Key(const std::string& ns, const std::string& name);

}  // namespace draco::simulate
