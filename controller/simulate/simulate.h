// `draco simulate` and `draco explain`: offline allocation of kubectl-style manifests.
//
// Input: YAML or JSON manifests (files, or every *.yaml/*.yml/*.json in a directory, sorted by
// name) with DeviceClasses, ResourceSlices, DeviceTaintRules, Nodes, ResourceClaims (with or
// without status.allocation), ResourceClaimTemplates, Pods, PodGroups, and for kube-scheduler's
// filters PersistentVolumes, PersistentVolumeClaims, StorageClasses, CSINodes and Namespaces.
// Deployments, ReplicaSets, StatefulSets, Jobs, JobSets and LeaderWorkerSets expand into the pods
// their controllers would create (workloads.h), handled as Pods. Objects of other kinds are listed
// ("ignored: 2 objects of unknown kinds: Service/foo, ConfigMap/bar", JSON "ignored"); input
// whose only objects of interest are such is an input error.
// Already-allocated claims occupy their devices. Each Pod's unallocated claims (named claims and
// claims generated from templates, "<pod>-<podClaimName>") are allocated together, on the first
// candidate node that fits; candidates are the nodes that pass the node filter `draco run` uses
// (controller/feasibility/node_filter.h: kube-scheduler's default filters for node name, taints,
// node affinity, ports, resources, volumes, topology spread, inter-pod affinity; the node is Ready;
// it matches the node selector of the pod's claims allocated already), with pods that have
// spec.nodeName and pods simulated earlier counting as placed. A Node without status.allocatable
// is not resource limited, one without status.conditions is Ready, and, like kubelet's, each is
// labelled kubernetes.io/hostname=<name>. Results are committed so
// later pods see them; the text output and `draco explain` name, per filtered node, the filter that
// eliminated it ("node-1: InterPodAffinity: pod anti-affinity with wedge/occupant"). Claims no pod
// references are allocated on their own, on the Ready nodes that are not unschedulable (as the
// controller allocates a claim annotated draco.dev/allocation=immediate). Pods of an all-or-nothing
// group (PodGroup gangs, draco.dev/group, JobSet, LeaderWorkerSet, Kueue; groups.h) are placed
// together, as the controller places them, or not at all: a "group ...: N member(s) placed at once"
// line (or why not) precedes the first pod, and JSON has "group" per pod and "podGroups". `draco
// explain` still allocates the pods before its target one by one.
//
// Exit codes: 0 = every claim allocated, 1 = some claim could not be allocated (unsatisfiable
// or a fatal allocation error such as a CEL error), 2 = input error.
//
// Thread-compatible; the functions write only to the given streams.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "base/status.h"

namespace draco::simulate {

// A manifest text that is not a file (e.g. a live cluster's objects as a List), with the name
// input errors quote.
struct Document {
  std::string source;
  std::string text;
};

struct Options {
  std::vector<Document> documents;  // loaded before `paths`
  std::vector<std::string> paths;   // files or directories (-f)
  bool json = false;                // -o json
  bool explain_all = false;         // explain even allocated claims' requests
  // Text output: leave out pods with nothing to allocate (no claims, or all allocated before the
  // simulation) and count them in one line; for live clusters, where most pods are such.
  bool hide_settled = false;
  // explain: a claim "namespace/name" (or "name" in "default"), or "pod/[namespace/]name"; a
  // bare name that is no claim but a pod explains the pod.
  std::string claim;
  std::string node;  // explain: restrict to one node
  // DRA feature gates as kube-scheduler 1.<kubernetes_minor> has them by default, overridden by
  // feature_gates ("DRAListTypeAttributes=true,..."); --kubernetes-version and --feature-gates.
  int kubernetes_minor = 37;
  std::string feature_gates;
};

int RunSimulate(const Options& opts, std::ostream& out, std::ostream& err);

// The minor version of a --kubernetes-version value ("1.35", "v1.35", "1.35.2" -> 35); an
// INVALID_ARGUMENT "--kubernetes-version V: draco knows 1.X to 1.Y" outside the known range.
StatusOr<int> ParseKubernetesMinor(std::string v);
int RunExplain(const Options& opts, std::ostream& out, std::ostream& err);

// argv-style entry points used by the `draco` dispatcher (argv[0] is the subcommand).
int SimulateMain(int argc, char** argv);
int ExplainMain(int argc, char** argv);

}  // namespace draco::simulate
