#include "controller/reconcilers/claim_util.h"

#include <algorithm>
#include <cstdint>

namespace draco::reconcilers {

bool IsPodDone(const api::Pod& pod) {
  const std::string& phase = pod.status.phase;
  if (phase == "Succeeded" || phase == "Failed") return true;
  return pod.metadata.deletion_timestamp.has_value() && pod.spec.node_name.empty();
}

bool PodReleasesClaims(const api::Pod& pod) {
  return IsPodDone(pod) || pod.metadata.deletion_timestamp.has_value();
}

bool HasSchedulingGate(const api::Pod& pod, std::string_view gate) {
  for (const auto& g : pod.spec.scheduling_gates) {
    if (g.name == gate) return true;
  }
  return false;
}

namespace {
const api::OwnerReference* ControllerPodRef(const api::ResourceClaim& claim) {
  for (const auto& o : claim.metadata.owner_references) {
    if (o.controller.value_or(false) && o.api_version == "v1" && o.kind == "Pod") return &o;
  }
  return nullptr;
}
}  // namespace

std::string OwnerPodUid(const api::ResourceClaim& claim) {
  const auto* o = ControllerPodRef(claim);
  return o ? o->uid : "";
}

std::string OwnerPodName(const api::ResourceClaim& claim) {
  const auto* o = ControllerPodRef(claim);
  return o ? o->name : "";
}

bool IsClaimForPod(const api::ResourceClaim& claim, const api::Pod& pod) {
  if (claim.metadata.namespace_ != pod.metadata.namespace_) return false;
  return !pod.metadata.uid.empty() && OwnerPodUid(claim) == pod.metadata.uid;
}

bool IsReservedFor(const api::ResourceClaim& claim, std::string_view uid) {
  for (const auto& r : claim.status.reserved_for) {
    if (r.uid == uid) return true;
  }
  return false;
}

bool HasFinalizer(const api::ObjectMeta& meta, std::string_view finalizer) {
  return std::find(meta.finalizers.begin(), meta.finalizers.end(), finalizer) !=
         meta.finalizers.end();
}

bool WantsImmediateAllocation(const api::ResourceClaim& claim) {
  auto it = claim.metadata.annotations.find(std::string(kAllocationAnnotation));
  return it != claim.metadata.annotations.end() && it->second == kImmediateAllocation;
}

std::string GeneratedClaimPrefix(std::string_view pod_name, std::string_view claim_name) {
  std::string prefix = std::string(pod_name) + "-" + std::string(claim_name) + "-";
  constexpr size_t kMax = 57;  // leaves room for the 5 random characters and a margin
  if (prefix.size() <= kMax) return prefix;
  size_t len = prefix.size();
  size_t pod_len = pod_name.size() * kMax / len;
  size_t claim_len = claim_name.size() * kMax / len;
  return std::string(pod_name.substr(0, pod_len)) + "-" +
         std::string(claim_name.substr(0, claim_len));
}

std::string GeneratedClaimName(std::string_view prefix, std::string_view pod_uid,
                               std::string_view pod_claim_name) {
  // FNV-1a over "<uid>/<claim>"; the alphabet is apiserver's generateName alphabet.
  constexpr std::string_view kAlphabet = "bcdfghjklmnpqrstvwxz2456789";
  uint64_t h = 14695981039346656037ull;
  auto mix = [&h](std::string_view s) {
    for (unsigned char ch : s) {
      h ^= ch;
      h *= 1099511628211ull;
    }
  };
  mix(pod_uid);
  mix("/");
  mix(pod_claim_name);
  std::string name(prefix);
  for (int i = 0; i < 5; ++i) {
    name += kAlphabet[h % kAlphabet.size()];
    h /= kAlphabet.size();
  }
  return name;
}

api::ResourceClaim ClaimFromTemplate(const api::Pod& pod, const api::PodResourceClaim& pc,
                                     const api::ResourceClaimTemplate& tmpl, bool with_finalizer) {
  api::ResourceClaim c;
  c.metadata.generate_name = GeneratedClaimPrefix(pod.metadata.name, pc.name);
  c.metadata.name = GeneratedClaimName(c.metadata.generate_name, pod.metadata.uid, pc.name);
  c.metadata.namespace_ = pod.metadata.namespace_;
  c.metadata.labels = tmpl.spec.metadata.labels;
  c.metadata.annotations = tmpl.spec.metadata.annotations;
  c.metadata.annotations[std::string(kPodClaimNameAnnotation)] = pc.name;
  api::OwnerReference owner;
  owner.api_version = "v1";
  owner.kind = "Pod";
  owner.name = pod.metadata.name;
  owner.uid = pod.metadata.uid;
  owner.controller = true;
  c.metadata.owner_references.push_back(std::move(owner));
  if (with_finalizer) c.metadata.finalizers.emplace_back(kDeleteProtectionFinalizer);
  c.spec = tmpl.spec.spec;
  return c;
}

api::ResourceClaimConsumerReference PodConsumer(const api::Pod& pod) {
  api::ResourceClaimConsumerReference r;
  r.resource = "pods";
  r.name = pod.metadata.name;
  r.uid = pod.metadata.uid;
  return r;
}

std::string PodGroupNameOf(const api::Pod& pod) {
  if (!pod.spec.scheduling_group || !pod.spec.scheduling_group->pod_group_name) return "";
  return *pod.spec.scheduling_group->pod_group_name;
}

namespace {
const api::OwnerReference* ControllerPodGroupRef(const api::ResourceClaim& claim) {
  const std::string prefix = std::string(api::kSchedulingGroup) + "/";
  for (const auto& o : claim.metadata.owner_references) {
    // The version is ignored (it changes as the API matures), the group is not.
    if (o.controller.value_or(false) && o.kind == "PodGroup" && o.api_version.starts_with(prefix)) {
      return &o;
    }
  }
  return nullptr;
}
}  // namespace

std::string OwnerPodGroupUid(const api::ResourceClaim& claim) {
  const auto* o = ControllerPodGroupRef(claim);
  return o ? o->uid : "";
}

std::string OwnerPodGroupName(const api::ResourceClaim& claim) {
  const auto* o = ControllerPodGroupRef(claim);
  return o ? o->name : "";
}

bool IsClaimForPodGroup(const api::ResourceClaim& claim, const api::PodGroup& group) {
  return claim.metadata.namespace_ == group.metadata.namespace_ && !group.metadata.uid.empty() &&
         OwnerPodGroupUid(claim) == group.metadata.uid;
}

api::ResourceClaimConsumerReference PodGroupConsumer(const api::PodGroup& group) {
  api::ResourceClaimConsumerReference r;
  r.api_group = api::kSchedulingGroup;
  r.resource = api::kPodGroupResource;
  r.name = group.metadata.name;
  r.uid = group.metadata.uid;
  return r;
}

bool IsPodGroupConsumer(const api::ResourceClaimConsumerReference& ref) {
  return ref.api_group == api::kSchedulingGroup && ref.resource == api::kPodGroupResource;
}

StatusOr<api::ResourceClaimConsumerReference> BindTo(const api::Pod& pod,
                                                     const api::PodGroup* group,
                                                     const api::PodResourceClaim& pc) {
  if (!pc.resource_claim_name && !pc.resource_claim_template_name) {
    return InvalidArgumentError("pod claim " + pc.name +
                                ": neither resourceClaimName nor resourceClaimTemplateName is set");
  }
  if (group) {
    if (PodGroupNameOf(pod) != group->metadata.name ||
        pod.metadata.namespace_ != group->metadata.namespace_) {
      return InvalidArgumentError("pod " + pod.metadata.namespace_ + "/" + pod.metadata.name +
                                  " is not a member of PodGroup " + group->metadata.namespace_ +
                                  "/" + group->metadata.name);
    }
    for (const auto& gc : group->spec.resource_claims) {
      if (gc.name == pc.name && gc.resource_claim_name == pc.resource_claim_name &&
          gc.resource_claim_template_name == pc.resource_claim_template_name) {
        return PodGroupConsumer(*group);
      }
    }
  }
  return PodConsumer(pod);
}

bool IsReservedForPodOrGroup(const api::ResourceClaim& claim, const api::Pod& pod,
                             bool accept_group) {
  const std::string group = accept_group ? PodGroupNameOf(pod) : "";
  for (const auto& r : claim.status.reserved_for) {
    if (r.uid == pod.metadata.uid) return true;
    if (!group.empty() && IsPodGroupConsumer(r) && r.name == group) return true;
  }
  return false;
}

api::ResourceClaim ClaimFromPodGroupTemplate(const api::PodGroup& group,
                                             const api::PodGroupResourceClaim& gc,
                                             const api::ResourceClaimTemplate& tmpl) {
  api::ResourceClaim c;
  c.metadata.generate_name = GeneratedClaimPrefix(group.metadata.name, gc.name);
  c.metadata.namespace_ = group.metadata.namespace_;
  c.metadata.labels = tmpl.spec.metadata.labels;
  c.metadata.annotations = tmpl.spec.metadata.annotations;
  c.metadata.annotations[std::string(kPodClaimNameAnnotation)] = gc.name;
  api::OwnerReference owner;
  owner.api_version = std::string(api::kSchedulingGroup) + "/" + api::kPodGroupVersion;
  owner.kind = "PodGroup";
  owner.name = group.metadata.name;
  owner.uid = group.metadata.uid;
  owner.controller = true;
  c.metadata.owner_references.push_back(std::move(owner));
  c.spec = tmpl.spec.spec;
  return c;
}

bool SelectsOnlyNode(const std::optional<api::NodeSelector>& selector, std::string_view node) {
  if (!selector || selector->node_selector_terms.size() != 1) return false;
  const auto& term = selector->node_selector_terms.front();
  if (!term.match_expressions.empty() || term.match_fields.size() != 1) return false;
  const auto& r = term.match_fields.front();
  return r.key == "metadata.name" && r.operator_ == "In" && r.values.size() == 1 &&
         r.values.front() == node;
}

std::optional<std::string> PinnedNode(const api::Pod& pod) {
  if (!pod.spec.affinity || !pod.spec.affinity->node_affinity ||
      !pod.spec.affinity->node_affinity->required_during_scheduling_ignored_during_execution) {
    return std::nullopt;
  }
  const auto& terms =
      pod.spec.affinity->node_affinity->required_during_scheduling_ignored_during_execution
          ->node_selector_terms;
  std::optional<std::string> node;
  for (const auto& t : terms) {
    std::optional<std::string> in_term;
    for (const auto& r : t.match_fields) {
      if (r.key == "metadata.name" && r.operator_ == "In" && r.values.size() == 1) {
        in_term = r.values.front();
      }
    }
    if (!in_term || (node && *node != *in_term)) return std::nullopt;
    node = in_term;
  }
  return node;
}

bool StatusesRecorded(const api::Pod& pod,
                      const std::vector<api::PodResourceClaimStatus>& statuses) {
  const auto& have = pod.status.resource_claim_statuses;
  if (have.size() != statuses.size()) return false;
  for (size_t i = 0; i < have.size(); ++i) {
    if (have[i].name != statuses[i].name ||
        have[i].resource_claim_name != statuses[i].resource_claim_name) {
      return false;
    }
  }
  return true;
}

}  // namespace draco::reconcilers
