// `draco simulate` and `draco explain`: offline allocation of kubectl-style manifests.
//
// Input: YAML or JSON manifests (files, or every *.yaml/*.yml/*.json in a directory, sorted by
// name) with DeviceClasses, ResourceSlices, DeviceTaintRules, Nodes, ResourceClaims (with or
// without status.allocation), ResourceClaimTemplates and Pods. Already-allocated claims occupy
// their devices. Each Pod's unallocated claims (named claims and claims generated from templates,
// "<pod>-<podClaimName>") are allocated together, on the first candidate node that fits
// (spec.nodeName if set, else every Node whose labels match spec.nodeSelector); results are
// committed so later pods see them. Claims no pod references are allocated on their own.
//
// Exit codes: 0 = every claim allocated, 1 = some claim could not be allocated (unsatisfiable
// or a fatal allocation error such as a CEL error), 2 = input error.
//
// Thread-compatible; the functions write only to the given streams.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace draco::simulate {

struct Options {
  std::vector<std::string> paths;  // files or directories (-f)
  bool json = false;               // -o json
  bool explain_all = false;        // explain even allocated claims' requests
  std::string claim;               // explain: namespace/name (or name in "default")
  std::string node;                // explain: restrict to one node
  // DRA feature gates as kube-scheduler 1.<kubernetes_minor> has them by default, overridden by
  // feature_gates ("DRAListTypeAttributes=true,..."); --kubernetes-version and --feature-gates.
  int kubernetes_minor = 37;
  std::string feature_gates;
};

int RunSimulate(const Options& opts, std::ostream& out, std::ostream& err);
int RunExplain(const Options& opts, std::ostream& out, std::ostream& err);

// argv-style entry points used by the `draco` dispatcher (argv[0] is the subcommand).
int SimulateMain(int argc, char** argv);
int ExplainMain(int argc, char** argv);

}  // namespace draco::simulate
