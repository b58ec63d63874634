// FencedClient: the RestClient through which a leader writes during one term.
//
// A leader must not write once its authority may have ended: every write (Create, Update,
// UpdateStatus, Patch, Delete) is admitted only while the fence is open and the Clock is before
// valid_until() (LeaderElector::ValidUntil()); otherwise it fails at once, without contacting the
// server, with a kFailedPrecondition Status for which IsFenced() is true. Close() shuts the fence
// for good and cancels the inner client, so requests in flight are aborted and waits between
// retries end (call it when the term ends: LeaderElectionConfig::on_stopped_leading, or SIGTERM).
// Reads (Get, List, GetPath) and watches are forwarded unfenced; Close() aborts them too.
//
// One FencedClient per term (Close() is final); build its inner client ahead of time so that the
// first write of a term does not pay for connection setup.
//
// Thread-safe. The Clock must outlive the client.
#pragma once

#include <atomic>
#include <functional>
#include <memory>

#include "base/clock.h"
#include "k8sclient/rest_client.h"

namespace draco::k8s {

class FencedClient final : public RestClient {
 public:
  FencedClient(std::shared_ptr<RestClient> inner, Clock& clock,
               std::function<Clock::TimePoint()> valid_until);

  StatusOr<std::string> Get(const GroupVersionResource& gvr, std::string_view ns,
                            std::string_view name, const GetOptions& opts) override;
  StatusOr<ObjectList> List(const GroupVersionResource& gvr, std::string_view ns,
                            const ListOptions& opts) override;
  StatusOr<std::unique_ptr<Watcher>> Watch(const GroupVersionResource& gvr, std::string_view ns,
                                           const ListOptions& opts) override;
  StatusOr<std::string> Create(const GroupVersionResource& gvr, std::string_view ns,
                               std::string_view body, const CreateOptions& opts) override;
  StatusOr<std::string> Update(const GroupVersionResource& gvr, std::string_view ns,
                               std::string_view name, std::string_view body,
                               const UpdateOptions& opts) override;
  StatusOr<std::string> UpdateStatus(const GroupVersionResource& gvr, std::string_view ns,
                                     std::string_view name, std::string_view body,
                                     const UpdateOptions& opts) override;
  StatusOr<std::string> Patch(const GroupVersionResource& gvr, std::string_view ns,
                              std::string_view name, PatchType type, std::string_view body,
                              const PatchOptions& opts, std::string_view subresource) override;
  StatusOr<std::string> Delete(const GroupVersionResource& gvr, std::string_view ns,
                               std::string_view name, const DeleteOptions& opts) override;
  StatusOr<std::string> GetPath(std::string_view path) override;

  // Shuts the fence and cancels the inner client. Irreversible, idempotent.
  void Close();
  void Cancel() override { Close(); }
  // True while writes are admitted.
  bool Open() const;

 private:
  Status Admit(std::string_view verb, const GroupVersionResource& gvr, std::string_view name) const;

  std::shared_ptr<RestClient> inner_;
  Clock& clock_;
  const std::function<Clock::TimePoint()> valid_until_;
  std::atomic<bool> closed_{false};
};

// True for the Status of a write refused by a FencedClient (the term had ended).
bool IsFenced(const Status& s);

}  // namespace draco::k8s
