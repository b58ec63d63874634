#include "controller/reconcilers/scheduler_holds.h"

#include <algorithm>
#include <optional>

#include "controller/api/extended_resource.h"
#include "controller/reconcilers/claim_util.h"
#include "controller/reconcilers/extended_resource.h"
#include "controller/reconcilers/node_fit.h"

namespace draco::reconcilers {
bool InSchedulersHands(const api::Pod& pod) {
  if (!pod.spec.node_name.empty() || !pod.spec.scheduling_gates.empty()) return false;
  if (PodReleasesClaims(pod)) return false;
  return !pod.spec.resource_claims.empty() || AsksDraExtendedResources(pod);
}

std::vector<WaitingPod> WaitingForScheduler(const ClusterCache& cache,
                                            const std::vector<PodPtr>& pods, std::string* key) {
  std::vector<WaitingPod> out;
  std::optional<std::vector<api::DeviceClass>> classes;  // read once, when a pod needs them
  auto add = [key](WaitingPod& w, ClaimPtr c) {
    if (key) key->append(c->metadata.uid).append("@").append(c->metadata.resource_version) += ',';
    (c->status.allocation ? w.allocated : w.unallocated).push_back(std::move(c));
  };
  for (const PodPtr& pod : pods) {
    if (!InSchedulersHands(*pod)) continue;
    WaitingPod w{pod, {}, {}};
    for (const auto& pc : pod->spec.resource_claims) {
      auto r = ResolveClaimName(*pod, pc);
      if (r.ok() && r->not_created_yet && pc.resource_claim_template_name) {
        // A template claim not created yet: the scheduler waits for it (PreFilter) and allocates
        // it the moment it exists, from a cache that may not show draco's newest allocations
        // yet; so it holds now, as the claim its template gives (a burst of pods whose claims are
        // created while draco allocates gated ones, e.g. once the claim lifecycle is decided).
        TemplatePtr t =
            cache.GetTemplate(pod->metadata.namespace_, *pc.resource_claim_template_name);
        if (!t) continue;
        auto planned = std::make_shared<api::ResourceClaim>(ClaimFromTemplate(*pod, pc, *t, false));
        planned->metadata.uid = "planned/" + pod->metadata.uid + "/" + pc.name;
        add(w, std::move(planned));
        continue;
      }
      if (!r.ok() || !r->name) continue;
      ClaimPtr c = cache.GetClaim(pod->metadata.namespace_, *r->name);
      if (c && !c->metadata.deletion_timestamp) add(w, std::move(c));
    }
    if (std::string name = ExtendedClaimName(*pod); !name.empty()) {
      ClaimPtr c = cache.GetClaim(pod->metadata.namespace_, name);
      if (c && !c->metadata.deletion_timestamp) add(w, std::move(c));
    } else if (AsksDraExtendedResources(*pod)) {
      if (!classes) classes = cache.DeviceClasses();
      if (ClaimPtr planned = PlannedExtendedClaim(*pod, *classes)) add(w, std::move(planned));
    }
    if (w.unallocated.empty()) continue;
    if (key) {
      key->append(pod->metadata.uid).append("@").append(pod->metadata.resource_version) += ';';
    }
    out.push_back(std::move(w));
  }
  return out;
}

SchedulerHolds ComputeSchedulerHolds(const ClusterCache& cache, alloc::Allocator::Config config,
                                     const std::shared_ptr<const alloc::Snapshot>& snapshot,
                                     const std::vector<const api::ResourceClaim*>& allocated,
                                     const std::vector<WaitingPod>& waiting) {
  SchedulerHolds holds;
  if (waiting.empty() || !snapshot) return holds;
  config.policies.clear();  // the scheduler's own allocator: upstream order, no limits
  auto scratch = alloc::Allocator::Create(config, snapshot, allocated);
  if (!scratch.ok()) return holds;  // same inputs as draco's allocator, which reports the error
  const std::vector<NodePtr> nodes = cache.Nodes();
  std::vector<std::string> keys;
  for (const WaitingPod& w : waiting) {
    const api::Pod& pod = *w.pod;
    std::vector<const api::ResourceClaim*> claims;
    for (const auto& c : w.unallocated) claims.push_back(c.get());
    const std::string pod_key = pod.metadata.namespace_ + "/" + pod.metadata.name;
    bool held = false;
    for (const NodePtr& node : FilterNodes(&pod, nodes, w.allocated, cache).fit) {
      for (int round = 0; round < kRoundsPerNode; ++round) {
        alloc::Outcome out = (*scratch)->Allocate(*node, claims);
        if (out.kind != alloc::Outcome::Kind::kAllocated) break;
        for (size_t i = 0; i < claims.size() && i < out.results.size(); ++i) {
          (*scratch)->Commit(*claims[i], out.results[i]);
          api::ResourceClaim h = *claims[i];
          h.metadata.uid = "scheduler-hold/" + pod.metadata.uid + "/" + claims[i]->metadata.name +
                           "/" + node->metadata.name + "/" + std::to_string(round);
          for (const auto& r : out.results[i].devices.results) {
            keys.push_back(pod_key + ":" + r.driver + "/" + r.pool + "/" + r.device);
            ++holds.devices;
          }
          h.status.allocation = std::move(out.results[i]);
          holds.claims.push_back(std::move(h));
          held = true;
        }
      }
    }
    if (held) holds.pods.push_back(pod_key);
  }
  std::ranges::sort(keys);
  for (const auto& k : keys) holds.fingerprint.append(k).push_back('\n');
  return holds;
}

std::string DescribeHolds(const SchedulerHolds& holds) {
  if (holds.devices == 0) return "";
  std::string s = std::to_string(holds.devices) + " device(s) held for " +
                  std::to_string(holds.pods.size()) + " pod(s) another scheduler is placing (";
  constexpr size_t kShown = 3;
  for (size_t i = 0; i < holds.pods.size() && i < kShown; ++i) {
    if (i > 0) s += ", ";
    s += holds.pods[i];
  }
  if (holds.pods.size() > kShown) s += ", ...";
  return s + ")";
}

}  // namespace draco::reconcilers
