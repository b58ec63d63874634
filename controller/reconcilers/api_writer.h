// Production ApiWriter over k8s::RestClient (the EventSink is AsyncEventRecorder,
// event_recorder.h).
//
// RestApiWriter encodes controller/api objects with api::Encode (unknown fields preserved, so a
// PUT never drops what a newer API server sent) and decodes responses with api::Decode.
// Thread-safe; every call blocks for one request (the RestClient's rate limiter may delay it).
// Errors are the client's: a transport failure or 5xx stays what it is (k8s::IsRetryable) and is
// never taken for a refusal (k8s::IsRefusal).
#pragma once

#include <optional>
#include <string>

#include "controller/reconcilers/interfaces.h"
#include "k8sclient/rest_client.h"

namespace draco::reconcilers {

inline const k8s::GroupVersionResource kResourceClaimsGvr{"resource.k8s.io", "v1",
                                                          "resourceclaims"};
inline const k8s::GroupVersionResource kPodGroupsGvr{"scheduling.k8s.io", "v1beta1", "podgroups"};

class RestApiWriter : public ApiWriter {
 public:
  explicit RestApiWriter(k8s::RestClient& client) : client_(client) {}
  StatusOr<ClaimPtr> CreateClaim(const api::ResourceClaim& claim) override;
  StatusOr<ClaimPtr> UpdateClaim(const api::ResourceClaim& claim) override;
  StatusOr<ClaimPtr> UpdateClaimStatus(const api::ResourceClaim& claim) override;
  Status DeleteClaim(const std::string& ns, const std::string& name,
                     const std::string& uid) override;
  StatusOr<PodPtr> ApplyPodClaimStatuses(
      const api::Pod& pod, const std::vector<api::PodResourceClaimStatus>& statuses) override;
  StatusOr<PodPtr> NominatePod(const api::Pod& pod,
                               const std::vector<api::PodResourceClaimStatus>* statuses,
                               const std::string& node) override;
  StatusOr<PodPtr> RemoveSchedulingGate(const api::Pod& pod, std::string_view gate,
                                        const std::string& pin_node) override;
  StatusOr<PodPtr> GetPodLive(const std::string& ns, const std::string& name) override;
  StatusOr<PodGroupPtr> ApplyPodGroupClaimStatuses(
      const api::PodGroup& group,
      const std::vector<api::PodGroupResourceClaimStatus>& statuses) override;
  StatusOr<PodGroupPtr> GetPodGroupLive(const std::string& ns, const std::string& name) override;
  StatusOr<PodPtr> CreatePod(const api::Pod& pod) override;
  Status DeletePod(const std::string& ns, const std::string& name, const std::string& uid) override;
  Status CreateClaimTemplate(const api::ResourceClaimTemplate& tmpl) override;

 private:
  k8s::RestClient& client_;
};

// The JSON patch RestApiWriter::RemoveSchedulingGate sends (exposed for tests): a test of the
// gate entry and its removal; with a non-empty `pin_node` also a test of metadata.resourceVersion
// and the additions that AND `metadata.name In [pin_node]` into every required node affinity term
// (or create the required affinity when the pod has none). nullopt when `gate` is not on the pod.
// With `pin_node`, a pod whose required affinity has no terms (it matches no node) is not pinned.
std::optional<std::string> GateRemovalPatch(const api::Pod& pod, std::string_view gate,
                                            std::string_view pin_node);

// The JSON patch of pods/status behind ApplyPodClaimStatuses and NominatePod (exposed for tests):
// a test of metadata.uid, then resourceClaimStatuses set to `*statuses` (left alone when null)
// and status.nominatedNodeName set to `nominated_node` (left alone when empty).
std::string PodStatusPatch(const api::Pod& pod,
                           const std::vector<api::PodResourceClaimStatus>* statuses,
                           std::string_view nominated_node);

}  // namespace draco::reconcilers
