#include "controller/reconcilers/api_writer.h"

#include <array>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <spdlog/spdlog.h>

#include "controller/api/codec.h"
#include "controller/reconcilers/claim_util.h"
#include "controller/reconcilers/controller.h"
#include "controller/reconcilers/informers.h"
#include "k8sclient/api_error.h"

namespace draco::reconcilers {
namespace {

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

StatusOr<ClaimPtr> DecodeClaim(const StatusOr<std::string>& body) {
  if (!body.ok()) return body.status();
  auto c = api::Decode<api::ResourceClaim>(*body);
  if (!c.ok()) return c.status().WithPrefix("decode claim response");
  return std::make_shared<const api::ResourceClaim>(std::move(*c));
}

StatusOr<PodPtr> DecodePod(const StatusOr<std::string>& body) {
  if (!body.ok()) return body.status();
  auto p = api::Decode<api::Pod>(*body);
  if (!p.ok()) return p.status().WithPrefix("decode pod response");
  return std::make_shared<const api::Pod>(std::move(*p));
}

StatusOr<PodGroupPtr> DecodePodGroup(const StatusOr<std::string>& body) {
  if (!body.ok()) return body.status();
  auto g = api::Decode<api::PodGroup>(*body);
  if (!g.ok()) return g.status().WithPrefix("decode PodGroup response");
  return std::make_shared<const api::PodGroup>(std::move(*g));
}

void Str(Writer& w, const char* key, std::string_view v) {
  w.Key(key);
  w.String(v.data(), static_cast<rapidjson::SizeType>(v.size()));
}

// Writes are attributed to draco's field manager (managedFields), as its applies are.
k8s::PatchOptions WriteAs() {
  k8s::PatchOptions opts;
  opts.field_manager = std::string(kFieldManager);
  return opts;
}

}  // namespace

StatusOr<ClaimPtr> RestApiWriter::CreateClaim(const api::ResourceClaim& claim) {
  return DecodeClaim(
      client_.Create(kResourceClaimsGvr, claim.metadata.namespace_, api::Encode(claim)));
}

StatusOr<ClaimPtr> RestApiWriter::UpdateClaim(const api::ResourceClaim& claim) {
  return DecodeClaim(client_.Update(kResourceClaimsGvr, claim.metadata.namespace_,
                                    claim.metadata.name, api::Encode(claim)));
}

StatusOr<ClaimPtr> RestApiWriter::UpdateClaimStatus(const api::ResourceClaim& claim) {
  return DecodeClaim(client_.UpdateStatus(kResourceClaimsGvr, claim.metadata.namespace_,
                                          claim.metadata.name, api::Encode(claim)));
}

Status RestApiWriter::DeleteClaim(const std::string& ns, const std::string& name,
                                  const std::string& uid) {
  k8s::DeleteOptions opts;
  if (!uid.empty()) opts.precondition_uid = uid;
  auto r = client_.Delete(kResourceClaimsGvr, ns, name, opts);
  return r.ok() ? OkStatus() : r.status();
}

StatusOr<PodPtr> RestApiWriter::ApplyPodClaimStatuses(
    const api::Pod& pod, const std::vector<api::PodResourceClaimStatus>& statuses) {
  return DecodePod(client_.Patch(k8s::kPods, pod.metadata.namespace_, pod.metadata.name,
                                 k8s::PatchType::kJsonPatch, PodStatusPatch(pod, &statuses, ""),
                                 WriteAs(), "status"));
}

StatusOr<PodPtr> RestApiWriter::NominatePod(
    const api::Pod& pod, const std::vector<api::PodResourceClaimStatus>* statuses,
    const std::string& node) {
  return DecodePod(client_.Patch(k8s::kPods, pod.metadata.namespace_, pod.metadata.name,
                                 k8s::PatchType::kJsonPatch, PodStatusPatch(pod, statuses, node),
                                 WriteAs(), "status"));
}

namespace {

// A resourceClaimStatuses list (of a pod or a PodGroup): [{name, resourceClaimName?}, ...].
template <typename Status>
void ClaimStatusesArray(Writer& w, const std::vector<Status>& statuses) {
  w.StartArray();
  for (const auto& s : statuses) {
    w.StartObject();
    Str(w, "name", s.name);
    if (s.resource_claim_name) Str(w, "resourceClaimName", *s.resource_claim_name);
    w.EndObject();
  }
  w.EndArray();
}

}  // namespace

std::string PodStatusPatch(const api::Pod& pod,
                           const std::vector<api::PodResourceClaimStatus>* statuses,
                           std::string_view nominated_node) {
  rapidjson::StringBuffer sb;
  Writer w(sb);
  w.StartArray();
  // Guards against writing to a re-created pod of the same name.
  w.StartObject();
  Str(w, "op", "test");
  Str(w, "path", "/metadata/uid");
  Str(w, "value", pod.metadata.uid);
  w.EndObject();
  // "add" of an existing member replaces it (RFC 6902).
  if (statuses != nullptr) {
    w.StartObject();
    Str(w, "op", "add");
    Str(w, "path", "/status/resourceClaimStatuses");
    w.Key("value");
    ClaimStatusesArray(w, *statuses);
    w.EndObject();
  }
  if (!nominated_node.empty()) {
    w.StartObject();
    Str(w, "op", "add");
    Str(w, "path", "/status/nominatedNodeName");
    Str(w, "value", nominated_node);
    w.EndObject();
  }
  w.EndArray();
  return {sb.GetString(), sb.GetSize()};
}

namespace {

void PinRequirement(Writer& w, std::string_view node) {
  w.StartObject();
  Str(w, "key", "metadata.name");
  Str(w, "operator", "In");
  w.Key("values");
  w.StartArray();
  w.String(node.data(), static_cast<rapidjson::SizeType>(node.size()));
  w.EndArray();
  w.EndObject();
}

// Writes `{"op":"add","path":path,"value":` and leaves the value to the caller.
void AddOp(Writer& w, const std::string& path) {
  w.StartObject();
  Str(w, "op", "add");
  Str(w, "path", path);
  w.Key("value");
}

}  // namespace

std::optional<std::string> GateRemovalPatch(const api::Pod& pod, std::string_view gate,
                                            std::string_view pin_node) {
  int index = -1;
  for (size_t i = 0; i < pod.spec.scheduling_gates.size(); ++i) {
    if (pod.spec.scheduling_gates[i].name == gate) index = static_cast<int>(i);
  }
  if (index < 0) return std::nullopt;
  const api::NodeAffinity* na = pod.spec.affinity && pod.spec.affinity->node_affinity
                                    ? &*pod.spec.affinity->node_affinity
                                    : nullptr;
  const api::NodeSelector* required =
      na && na->required_during_scheduling_ignored_during_execution
          ? &*na->required_during_scheduling_ignored_during_execution
          : nullptr;
  // A required affinity without terms matches no node; adding to it would change nothing useful.
  if (required && required->node_selector_terms.empty()) pin_node = {};
  std::string path = "/spec/schedulingGates/" + std::to_string(index);
  rapidjson::StringBuffer sb;
  Writer w(sb);
  w.StartArray();
  if (!pin_node.empty()) {
    // The additions below are computed from this version of the pod.
    w.StartObject();
    Str(w, "op", "test");
    Str(w, "path", "/metadata/resourceVersion");
    Str(w, "value", pod.metadata.resource_version);
    w.EndObject();
  }
  w.StartObject();
  Str(w, "op", "test");
  Str(w, "path", path + "/name");
  Str(w, "value", gate);
  w.EndObject();
  w.StartObject();
  Str(w, "op", "remove");
  Str(w, "path", path);
  w.EndObject();
  if (!pin_node.empty()) {
    auto selector = [&] {
      w.StartObject();
      w.Key("nodeSelectorTerms");
      w.StartArray();
      w.StartObject();
      w.Key("matchFields");
      w.StartArray();
      PinRequirement(w, pin_node);
      w.EndArray();
      w.EndObject();
      w.EndArray();
      w.EndObject();
    };
    if (!required) {
      // Create the missing part of affinity.nodeAffinity.required...: add it at the deepest
      // existing parent, wrapped in the objects that do not exist yet.
      constexpr std::array<const char*, 2> kChain = {
          "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution"};
      constexpr size_t kLevels = kChain.size();
      const size_t have = !pod.spec.affinity ? 0 : !na ? 1 : 2;  // existing levels of kChain
      std::string parent = "/spec/affinity";
      for (size_t i = 0; i < have; ++i) parent.append("/").append(kChain[i]);
      AddOp(w, parent);
      for (size_t i = have; i < kLevels; ++i) {
        w.StartObject();
        w.Key(kChain[i]);
      }
      selector();
      for (size_t i = have; i < kLevels; ++i) w.EndObject();
      w.EndObject();
    } else {
      // Terms are ORed: the requirement goes into every term. For a gated pod the API server
      // accepts additions to a term's requirements (it refuses any other change).
      const std::string terms =
          "/spec/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/"
          "nodeSelectorTerms/";
      for (size_t i = 0; i < required->node_selector_terms.size(); ++i) {
        const auto& fields = required->node_selector_terms[i].match_fields;
        if (fields.empty()) {
          AddOp(w, terms + std::to_string(i) + "/matchFields");
          w.StartArray();
          PinRequirement(w, pin_node);
          w.EndArray();
        } else {
          AddOp(w, terms + std::to_string(i) + "/matchFields/-");
          PinRequirement(w, pin_node);
        }
        w.EndObject();
      }
    }
  }
  w.EndArray();
  return std::string(sb.GetString(), sb.GetSize());
}

StatusOr<PodPtr> RestApiWriter::RemoveSchedulingGate(const api::Pod& pod, std::string_view gate,
                                                     const std::string& pin_node) {
  const api::Pod* current = &pod;
  PodPtr live_holder;
  std::string pin = pin_node;
  constexpr int kAttempts = 3;
  for (int attempt = 1;; ++attempt) {
    auto patch = GateRemovalPatch(*current, gate, pin);
    if (!patch) return attempt == 1 ? PodPtr(nullptr) : live_holder;
    auto r = client_.Patch(k8s::kPods, current->metadata.namespace_, current->metadata.name,
                           k8s::PatchType::kJsonPatch, *patch);
    if (r.ok()) return DecodePod(r);
    if (k8s::IsNotFound(r.status()) || attempt == kAttempts) return r.status();
    // No answer (connection refused/reset, timeout), throttling or a server error says nothing
    // about the patch: the caller retries it as it is (the tests keep a repeat safe).
    if (!k8s::IsRefusal(r.status())) return r.status();
    // The server answered and refused: a test failed (our cached pod was stale) or it refused the
    // affinity. Look at the live pod and decide.
    auto live = GetPodLive(pod.metadata.namespace_, pod.metadata.name);
    if (!live.ok()) return live.status();
    if (!*live || (*live)->metadata.uid != pod.metadata.uid) {
      return k8s::ApiError{404, "NotFound", "pod is gone", {}, 0, "", "", ""}.ToStatus();
    }
    if (!HasSchedulingGate(**live, gate)) return *live;
    const bool stale =
        (*live)->metadata.resource_version != current->metadata.resource_version &&
        (!pin.empty() || (*live)->spec.scheduling_gates != current->spec.scheduling_gates);
    if (!stale) {
      // The patch matched the live pod and was refused anyway.
      if (pin.empty()) return r.status();
      spdlog::warn(
          "pod {}/{}: API server refused pinning to node {} ({}); removing the gate "
          "without it",
          pod.metadata.namespace_, pod.metadata.name, pin, r.status().ToString());
      pin.clear();
    }
    live_holder = *live;
    current = live_holder.get();
  }
}

StatusOr<PodPtr> RestApiWriter::GetPodLive(const std::string& ns, const std::string& name) {
  auto r = client_.Get(k8s::kPods, ns, name);
  if (!r.ok() && k8s::IsNotFound(r.status())) return PodPtr(nullptr);
  return DecodePod(r);
}

StatusOr<PodPtr> RestApiWriter::CreatePod(const api::Pod& pod) {
  return DecodePod(client_.Create(k8s::kPods, pod.metadata.namespace_, api::Encode(pod)));
}

Status RestApiWriter::DeletePod(const std::string& ns, const std::string& name,
                                const std::string& uid) {
  k8s::DeleteOptions opts;
  if (!uid.empty()) opts.precondition_uid = uid;
  auto r = client_.Delete(k8s::kPods, ns, name, opts);
  return r.ok() ? OkStatus() : r.status();
}

Status RestApiWriter::CreateClaimTemplate(const api::ResourceClaimTemplate& tmpl) {
  auto r = client_.Create(kResourceClaimTemplatesGvr, tmpl.metadata.namespace_, api::Encode(tmpl));
  return r.ok() ? OkStatus() : r.status();
}

StatusOr<PodGroupPtr> RestApiWriter::ApplyPodGroupClaimStatuses(
    const api::PodGroup& group, const std::vector<api::PodGroupResourceClaimStatus>& statuses) {
  rapidjson::StringBuffer sb;
  Writer w(sb);
  w.StartObject();
  Str(w, "apiVersion", std::string(api::kSchedulingGroup) + "/" + api::kPodGroupVersion);
  Str(w, "kind", "PodGroup");
  w.Key("metadata");
  w.StartObject();
  Str(w, "name", group.metadata.name);
  Str(w, "namespace", group.metadata.namespace_);
  Str(w, "uid", group.metadata.uid);  // never applies to a re-created group of the same name
  w.EndObject();
  w.Key("status");
  w.StartObject();
  w.Key("resourceClaimStatuses");
  ClaimStatusesArray(w, statuses);
  w.EndObject();
  w.EndObject();
  k8s::PatchOptions opts;
  opts.field_manager = std::string(kFieldManager);
  opts.force = true;
  return DecodePodGroup(client_.Patch(kPodGroupsGvr, group.metadata.namespace_, group.metadata.name,
                                      k8s::PatchType::kApply, sb.GetString(), opts, "status"));
}

StatusOr<PodGroupPtr> RestApiWriter::GetPodGroupLive(const std::string& ns,
                                                     const std::string& name) {
  auto r = client_.Get(kPodGroupsGvr, ns, name);
  if (!r.ok() && k8s::IsNotFound(r.status())) return PodGroupPtr(nullptr);
  return DecodePodGroup(r);
}

}  // namespace draco::reconcilers
