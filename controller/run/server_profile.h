// ServerProfile: what the API server draco talks to serves, discovered once at start-up, and the
// allocator features that follow from its version. draco never watches a resource or sends a
// field the server does not have: DeviceTaintRules are watched only where resource.k8s.io/v1
// serves them, and the allocator's DRA features default to kube-scheduler 1.<minor>'s gate
// defaults (so draco allocates what the cluster's own scheduler would), overridden by
// --feature-gates.
//
// Blocking: DiscoverServer issues a few GETs (retried by the RestClient). Thread-compatible.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"
#include "controller/allocator/features.h"
#include "k8sclient/discovery.h"
#include "k8sclient/rest_client.h"

namespace draco::run {

struct ServerProfile {
  k8s::ServerVersion version;
  alloc::Features features;
  // resource.k8s.io/v1 devicetaintrules is served (GA in 1.37; v1alpha3/v1beta2 before).
  bool device_taint_rules = false;
  // scheduling.k8s.io/v1beta1 podgroups is served (GenericWorkload, 1.37).
  bool pod_groups = false;
  // The served admissionregistration.k8s.io version of MutatingAdmissionPolicy ("v1",
  // "v1beta1") or "" when the server has none (draco's gate then needs the webhook).
  std::string mutating_admission_policy_version;
  // The one-line summary draco logs at start-up.
  std::string Summary() const;
};

// Discovers the server's version and resources through `discovery` and derives the features:
// DefaultFeatures(minor) with `feature_gates` applied. A resource.k8s.io group that does not
// serve v1 is FailedPrecondition (draco needs Kubernetes 1.34 or newer); a bad gate list is
// InvalidArgument.
StatusOr<ServerProfile> DiscoverServer(k8s::Discovery& discovery, std::string_view feature_gates);

}  // namespace draco::run
