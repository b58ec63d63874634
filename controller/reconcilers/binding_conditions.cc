#include "controller/reconcilers/binding_conditions.h"

#include <spdlog/spdlog.h>

#include "controller/reconcilers/claim_util.h"
#include "controller/reconcilers/controller.h"
#include "k8sclient/api_error.h"

namespace draco::reconcilers {
namespace {

const api::AllocatedDeviceStatus* DeviceStatus(const api::ResourceClaim& claim,
                                               const api::DeviceRequestAllocationResult& r) {
  // kube-scheduler matches on driver, pool and device (not shareID).
  for (const auto& d : claim.status.devices) {
    if (d.driver == r.driver && d.pool == r.pool && d.device == r.device) return &d;
  }
  return nullptr;
}

const api::Condition* FindCondition(const api::AllocatedDeviceStatus* s, const std::string& type) {
  if (!s) return nullptr;
  for (const auto& c : s->conditions) {
    if (c.type == type) return &c;
  }
  return nullptr;
}

std::string DeviceName(const api::DeviceRequestAllocationResult& r) {
  return r.driver + "/" + r.pool + "/" + r.device;
}

std::string Seconds(std::chrono::milliseconds d) {
  return std::to_string(std::chrono::duration_cast<std::chrono::seconds>(d).count()) + "s";
}

}  // namespace

BindingCheck CheckBindingConditions(const api::ResourceClaim& claim,
                                    std::chrono::system_clock::time_point now,
                                    std::chrono::milliseconds timeout) {
  BindingCheck out;
  if (!claim.status.allocation) return out;
  BindingCheck pending;
  bool waiting = false;
  for (const auto& r : claim.status.allocation->devices.results) {
    if (r.binding_conditions.empty()) continue;
    const api::AllocatedDeviceStatus* status = DeviceStatus(claim, r);
    for (const auto& f : r.binding_failure_conditions) {
      const api::Condition* c = FindCondition(status, f);
      if (c && c->status == "True") {
        out.state = BindingState::kFailed;
        out.device = DeviceName(r);
        out.condition = f;
        out.reason = c->reason;
        out.message = c->message;
        return out;
      }
    }
    if (waiting) continue;
    for (const auto& b : r.binding_conditions) {
      const api::Condition* c = FindCondition(status, b);
      if (!c || c->status != "True") {
        waiting = true;
        pending.device = DeviceName(r);
        pending.condition = b;
        break;
      }
    }
  }
  if (!waiting) return out;
  pending.state = BindingState::kPending;
  const auto& ts = claim.status.allocation->allocation_timestamp;
  if (auto at = ts ? ParseTimestamp(*ts) : std::nullopt) {
    pending.deadline = *at + timeout;
    // kube-scheduler: timed out when timestamp + timeout is before now.
    if (*pending.deadline < now) pending.state = BindingState::kTimedOut;
  }
  return pending;
}

std::string DescribeBindingCheck(const BindingCheck& check, std::chrono::milliseconds timeout) {
  switch (check.state) {
    case BindingState::kReady:
      return "";
    case BindingState::kPending:
      return "device " + check.device + ": binding condition " + check.condition +
             " is not True yet";
    case BindingState::kTimedOut:
      return "device " + check.device + ": binding condition " + check.condition +
             " is still not True " + Seconds(timeout) + " after the allocation (binding timeout)";
    case BindingState::kFailed: {
      std::string why = check.reason;
      if (!check.message.empty()) why += (why.empty() ? "" : ": ") + check.message;
      return "device " + check.device + ": binding failure condition " + check.condition +
             " is True" + (why.empty() ? "" : " (" + why + ")");
    }
  }
  return "";
}

std::optional<StatusOr<Result>> Controller::HoldForBindingConditions(const api::Pod& pod,
                                                                     const PodClaims& pc) {
  const std::string& ns = pod.metadata.namespace_;
  const EventTarget pod_target{"v1", "Pod", ns, pod.metadata.name, pod.metadata.uid};
  const auto now = clock_.WallNow();
  const auto timeout = options_.binding_timeout;
  std::optional<std::chrono::system_clock::time_point> wake;
  std::string pending;
  bool deallocated = false;
  for (const auto& stale : pc.claims) {
    if (!stale) continue;
    // The cache has our own writes of this pass (assumed) and the driver's latest status.
    ClaimPtr c = cache_.GetClaim(ns, stale->metadata.name);
    if (!c || c->metadata.uid != stale->metadata.uid) return StatusOr<Result>(Result{});
    BindingCheck check = CheckBindingConditions(*c, now, timeout);
    if (check.state == BindingState::kReady) continue;
    const std::string what = DescribeBindingCheck(check, timeout);
    if (check.state == BindingState::kPending) {
      if (pending.empty()) pending = "ResourceClaim " + c->metadata.name + ", " + what;
      if (check.deadline && (!wake || *check.deadline < *wake)) wake = check.deadline;
      continue;
    }
    const EventTarget claim_target{"resource.k8s.io/v1", "ResourceClaim", ns, c->metadata.name,
                                   c->metadata.uid};
    const char* reason = check.state == BindingState::kFailed ? "BindingConditionsFailed"
                                                              : "BindingConditionsTimeout";
    bool others = false;
    for (const auto& r : c->status.reserved_for) others = others || r.uid != pod.metadata.uid;
    if (others || c->metadata.deletion_timestamp) {
      // In use by another consumer (or going away): not ours to take back.
      std::string msg = "ResourceClaim " + c->metadata.name + ", " + what +
                        "; the claim is reserved for other consumers, so draco cannot allocate "
                        "it again; the pod stays gated";
      events_.Record(pod_target, "Warning", reason, msg);
      return StatusOr<Result>(Result{});  // the claim's next update wakes the pod
    }
    api::ResourceClaim copy = *c;
    copy.status.allocation.reset();
    copy.status.devices.clear();
    copy.status.reserved_for.clear();
    auto updated = writer_.UpdateClaimStatus(copy);  // resourceVersion precondition
    if (!updated.ok()) {
      if (k8s::IsNotFound(updated.status())) return StatusOr<Result>(Result{});
      return StatusOr<Result>(
          updated.status().WithPrefix("deallocate " + ns + "/" + c->metadata.name));
    }
    cache_.AssumeClaim(*updated);
    deallocated = true;
    std::string msg = "ResourceClaim " + c->metadata.name + ", " + what +
                      "; draco deallocated the claim and allocates it again (the pod stays "
                      "gated until its devices are ready to bind)";
    events_.Record(pod_target, "Warning", reason, msg);
    events_.Record(claim_target, "Warning", reason, msg);
    if (metrics_) {
      metrics_->IncBindingConditionsDeallocation(check.state == BindingState::kTimedOut);
    }
    spdlog::info("pod {}/{}: {}", ns, pod.metadata.name, msg);
  }
  if (deallocated) {
    cache_.ClearNomination(ns + "/" + pod.metadata.name);
    // Allocate again in this same pass, before the deallocation's watch event wakes the pods
    // parked on the freed devices or namespace budget: the pod that lost its device comes first.
    // (The new allocation has no device status and a fresh timestamp: it is pending, so this
    // does not recurse again.)
    return static_cast<StatusOr<Result>>(SyncPod(ns, pod.metadata.name));
  }
  if (pending.empty()) return std::nullopt;
  events_.Record(pod_target, "Normal", "BindingConditionsPending",
                 "waiting for device binding conditions before releasing the pod to the "
                 "scheduler: " +
                     pending);
  if (!wake) return StatusOr<Result>(Result{});  // no timestamp: only status updates wake it
  auto left = *wake - now;
  // Wake just after the deadline (the check is "deadline before now").
  return StatusOr<Result>(
      Result{std::chrono::duration_cast<Clock::Duration>(left) + std::chrono::milliseconds(100)});
}

}  // namespace draco::reconcilers
