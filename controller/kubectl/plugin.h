// `kubectl draco`: the draco binary installed as the kubectl plugin `kubectl-draco` (a copy or a
// symlink with that name on $PATH). It reads the live cluster with the user's kubeconfig and
// RBAC and answers from the same snapshot and code draco allocates with (controller/simulate's
// engine, controller/feasibility, the allocator):
//
//   kubectl draco explain pod/NAME | claim/NAME   what each claim got (node, pool, device,
//                                                 capacity); for pending claims the per-request,
//                                                 per-node funnel with numbers
//   kubectl draco pools [--class C] [--node N] [--driver D]
//                                                 devices total/allocated/free/tainted, capacity,
//                                                 counters, largest request that still fits
//   kubectl draco simulate --from-cluster [-f EXTRA]...
//                                                 the live snapshot plus extra manifests: would
//                                                 they fit, where, and what stays pending
//
// Common flags: --kubeconfig, --context, -n/--namespace (default: the context's namespace, else
// "default"), -o text|wide|json|yaml, --kubernetes-version, --feature-gates. Exit codes as
// `draco simulate`: 0 = everything allocated (or would be now), 1 = something does not fit,
// 2 = input or access error (a missing permission names the verb and resource).
//
// Thread-compatible.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "k8sclient/rest_client.h"

namespace draco::kubectl {

// Where the snapshot comes from: the API server, or (tests) a ready document.
struct Source {
  k8s::RestClient* client = nullptr;
  std::string host;
  std::string fixed_document;  // used instead of the client when set
};

// argv[0] is the subcommand ("explain", "pools", "simulate"); `source` is built from the flags
// when its client is null and it has no fixed document.
int PluginMain(int argc, char** argv, std::ostream& out, std::ostream& err, Source source = {});

// The `kubectl-draco` entry point (argv[0] is the program).
int KubectlDracoMain(int argc, char** argv);

}  // namespace draco::kubectl
