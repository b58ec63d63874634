// ClaimLifecycle: who owns the claim lifecycle in this cluster, draco or kube-controller-manager's
// resourceclaim controller ("upstream"), and the evidence behind that.
//
// The lifecycle is everything upstream's controller (pkg/controller/resourceclaim) does: create
// claims from a pod's (or a PodGroup's) templates, record them in the owner's
// status.resourceClaimStatuses, reserve allocated claims for pods bound without a reservation,
// drop reservedFor entries of finished or deleted consumers, deallocate a claim carrying the
// delete-protection finalizer when its last consumer goes, and delete generated claims (also
// KEP-5004 extended-resource claims) of finished owners. On managed control planes (GKE, EKS,
// AKS) that controller cannot be turned off; if draco did the same work next to it, pods would get
// two claims per entry. Allocation, the gate, node choice, policies, limits, groups, Events and
// explanations are draco's in either case.
//
// Modes (`draco run --claim-lifecycle`, chart value `claimLifecycle`):
//   kDraco, kUpstream  fixed: the owner never changes.
//   kAuto (default)    detected. The owner starts kUndecided (draco creates and releases nothing
//                      until it knows) and follows the evidence:
//     - upstream: a claim upstream's controller created (a pod-generated claim whose name is not
//       the one draco derives, and whose creating field manager is not draco's) was seen being
//       created, or the probe pod got a claim (LifecycleProbe). Switches at once.
//     - draco: a probe ended without its claim and without any such claim seen while it ran.
// A switch calls the change callback (the controller requeues every pod and claim, the term
// records the owner on draco's Lease for `kubectl draco status`), logs and sets the metric.
//
// Thread-safety: all methods are thread-safe; Owner() is one atomic load (it is on every pod's
// path).
#pragma once

#include <atomic>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "base/status.h"
#include "controller/api/types.h"

namespace draco::reconcilers {

enum class LifecycleMode { kAuto, kDraco, kUpstream };
enum class LifecycleOwner { kUndecided, kDraco, kUpstream };

// "auto" | "draco" | "upstream".
StatusOr<LifecycleMode> ParseLifecycleMode(std::string_view s);
std::string_view LifecycleModeName(LifecycleMode m);
// "undecided" | "draco" | "upstream".
std::string_view LifecycleOwnerName(LifecycleOwner o);

// True when `claim` is a pod-generated claim (pod controller owner and the pod-claim-name
// annotation) that draco did not create: its name is not the one draco derives for the pod's UID
// and entry (GeneratedClaimName), and no field manager of the main resource is draco's.
bool CreatedByUpstreamController(const api::ResourceClaim& claim);

class ClaimLifecycle {
 public:
  using OnChange = std::function<void(LifecycleOwner now, const std::string& reason)>;

  ClaimLifecycle(LifecycleMode mode, Clock& clock);

  LifecycleMode Mode() const { return mode_; }
  LifecycleOwner Owner() const { return owner_.load(std::memory_order_acquire); }
  bool DracoOwns() const { return Owner() == LifecycleOwner::kDraco; }
  // Called (outside the lock) after every switch, with the new owner and why. Set before use.
  void SetOnChange(OnChange f);

  // Evidence from the watch: `claim` was added; counts when CreatedByUpstreamController and
  // created within the last minute (an old claim in the initial LIST proves nothing about now).
  void ObserveClaimAdded(const api::ResourceClaim& claim);
  // When the latest evidence for upstream was seen (epoch when never).
  Clock::TimePoint LastUpstreamEvidence() const;

  // A probe's verdict. `claim_seen`: the probe pod got a claim. `started`: when the probe pod was
  // created. Without a claim, draco takes over only if no upstream evidence arrived since
  // `started` (a busy upstream controller may reach the probe late; its other claims show it).
  void ProbeFinished(bool claim_seen, Clock::TimePoint started);

  // Starts from what an earlier term recorded (auto mode, still undecided; kUndecided is
  // ignored), so a restart or a handover does not wait for a probe; the probe checks it again.
  // No change callback. Returns whether it was taken.
  bool Restore(LifecycleOwner owner, const std::string& reason);

  // Why the owner is what it is (for logs and `kubectl draco status`).
  std::string Reason() const;

 private:
  void Switch(LifecycleOwner to, std::string reason);

  const LifecycleMode mode_;
  Clock& clock_;
  std::atomic<LifecycleOwner> owner_;
  mutable std::mutex mu_;
  Clock::TimePoint last_evidence_{};
  std::string reason_;
  OnChange on_change_;
};

}  // namespace draco::reconcilers
