#include "controller/run/server_profile.h"

#include "controller/allocator/features.h"

namespace draco::run {

std::string ServerProfile::Summary() const {
  return "Kubernetes " + version.git_version + " (1." + std::to_string(version.minor) +
         "): DeviceTaintRules " + (device_taint_rules ? "served" : "not served") + ", PodGroups " +
         (pod_groups ? "served" : "not served") + ", MutatingAdmissionPolicy " +
         (mutating_admission_policy_version.empty() ? "not served"
                                                    : mutating_admission_policy_version) +
         "; feature gates " + alloc::FeatureGatesString(features);
}

StatusOr<ServerProfile> DiscoverServer(k8s::Discovery& discovery, std::string_view feature_gates) {
  ServerProfile p;
  StatusOr<k8s::ServerVersion> v = discovery.Version();
  if (!v.ok()) return v.status();
  p.version = *v;
  StatusOr<bool> claims = discovery.Serves({"resource.k8s.io", "v1", "resourceclaims"});
  if (!claims.ok()) return claims.status();
  if (!*claims) {
    return FailedPreconditionError("the API server (" + p.version.git_version +
                                   ") does not serve resource.k8s.io/v1 resourceclaims; draco "
                                   "needs Kubernetes 1.34 or newer with DRA enabled");
  }
  StatusOr<bool> rules = discovery.Serves({"resource.k8s.io", "v1", "devicetaintrules"});
  if (!rules.ok()) return rules.status();
  p.device_taint_rules = *rules;
  StatusOr<bool> groups = discovery.Serves({"scheduling.k8s.io", "v1beta1", "podgroups"});
  if (!groups.ok()) return groups.status();
  p.pod_groups = *groups;
  auto map = discovery.FirstServed("admissionregistration.k8s.io", "mutatingadmissionpolicies",
                                   {"v1", "v1beta1"});
  if (!map.ok()) return map.status();
  p.mutating_admission_policy_version = map->value_or("");
  p.features = alloc::DefaultFeatures(p.version.minor);
  if (Status s = alloc::ApplyFeatureGates(feature_gates, p.version.minor, p.features); !s.ok()) {
    return s.WithPrefix("--feature-gates");
  }
  return p;
}

}  // namespace draco::run
