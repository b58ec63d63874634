// Production ApiWriter and EventSink over k8s::RestClient.
//
// RestApiWriter encodes controller/api objects with api::Encode (unknown fields preserved, so a
// PUT never drops what a newer API server sent) and decodes responses with api::Decode.
// Thread-safe; every call blocks for one request (the RestClient's rate limiter may delay it).
//
// AsyncEventRecorder posts core/v1 Events from one background thread so that reconcilers never
// wait for them. Identical events (same object UID, reason and message) within 10 minutes are
// sent once (kube's event aggregation would only bump a counter). The queue is bounded (1000);
// when full, new events are dropped and counted in the log. Destruction drains what is queued
// (bounded by a 2 s deadline) and joins the thread.
#pragma once

#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "controller/reconcilers/interfaces.h"
#include "k8sclient/rest_client.h"

namespace draco::reconcilers {

inline const k8s::GroupVersionResource kResourceClaimsGvr{"resource.k8s.io", "v1",
                                                          "resourceclaims"};
inline const k8s::GroupVersionResource kEventsGvr{"", "v1", "events"};

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
  StatusOr<PodPtr> RemoveSchedulingGate(const api::Pod& pod, std::string_view gate,
                                        const std::string& pin_node) override;
  StatusOr<PodPtr> GetPodLive(const std::string& ns, const std::string& name) override;

 private:
  k8s::RestClient& client_;
};

class AsyncEventRecorder : public EventSink {
 public:
  // `client` and `clock` must outlive the recorder. `component` is the event source
  // (reportingController), `instance` this replica's identity.
  AsyncEventRecorder(k8s::RestClient& client, Clock& clock, std::string component,
                     std::string instance);
  ~AsyncEventRecorder() override;
  void Record(const EventTarget& target, std::string_view type, std::string_view reason,
              std::string message) override;

 private:
  struct Item {
    EventTarget target;
    std::string type, reason, message;
  };
  void Loop();

  k8s::RestClient& client_;
  Clock& clock_;
  const std::string component_, instance_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Item> queue_;
  std::map<std::string, Clock::TimePoint> recent_;  // dedupe key -> when sent
  bool stop_ = false;
  std::thread thread_;
};

// The JSON patch RestApiWriter::RemoveSchedulingGate sends (exposed for tests): a test of the
// gate entry and its removal; with a non-empty `pin_node` also a test of metadata.resourceVersion
// and the additions that AND `metadata.name In [pin_node]` into every required node affinity term
// (or create the required affinity when the pod has none). nullopt when `gate` is not on the pod.
// With `pin_node`, a pod whose required affinity has no terms (it matches no node) is not pinned.
std::optional<std::string> GateRemovalPatch(const api::Pod& pod, std::string_view gate,
                                            std::string_view pin_node);

// The core/v1 Event body for `item` (exposed for tests).
std::string EventJson(const EventTarget& target, std::string_view type, std::string_view reason,
                      std::string_view message, std::string_view component,
                      std::string_view instance, std::string_view timestamp);

}  // namespace draco::reconcilers
