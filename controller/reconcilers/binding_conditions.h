// Device binding conditions (KEP-5007, gates DRADeviceBindingConditions and
// DRAResourceClaimDeviceStatus) on the claims of a pod that draco allocates.
//
// What kube-scheduler does on its own (k8s.io/kubernetes v1.37.2, DynamicResources plugin): in
// PreBind it waits (up to its bindingTimeout, default 10 min) until every allocated device that
// has bindingConditions reports all of them True in the claim's status.devices. When a
// bindingFailureCondition turns True or the timeout passes, PreBind fails, Unreserve removes the
// pod from reservedFor, the next cycle's Filter finds the claim unusable on every node, and
// PostFilter clears status.allocation; the cycle after that allocates the claim again with
// kube-scheduler's own allocator, outside draco's AllocationPolicies and namespace limits. A pod
// cannot be given its scheduling gate back, so draco cannot take over once it has released it.
//
// What draco does instead: it keeps a gated pod gated until every claim of the pod is ready to
// bind (every device with bindingConditions has them all True and none of its
// bindingFailureConditions True). kube-scheduler then finds the conditions met and binds at
// once. While the pod waits, a True failure condition or the timeout (allocationTimestamp +
// draco's binding timeout, like kube-scheduler's Filter check) makes draco deallocate the claim
// itself and allocate it again in its next pass, under its policies and limits.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "controller/api/types.h"

namespace draco::reconcilers {

enum class BindingState {
  kReady,     // no device waits (also: no device has binding conditions, or no allocation)
  kPending,   // some condition is not True yet, none failed, not timed out
  kFailed,    // a bindingFailureCondition of an allocated device is True
  kTimedOut,  // still pending after allocationTimestamp + timeout
};

struct BindingCheck {
  BindingState state = BindingState::kReady;
  std::string device;     // "driver/pool/device" that decided the state (empty when ready)
  std::string condition;  // pending/timed out: first condition not True; failed: the failure one
  std::string reason;     // failed: the failure condition's reason and message
  std::string message;
  // Pending or timed out, when the allocation has a timestamp: allocationTimestamp + timeout.
  std::optional<std::chrono::system_clock::time_point> deadline;
};

// Evaluates the binding conditions of `claim`'s allocation at wall time `now`. A failure on any
// device wins over pending devices. Without an (parseable) allocationTimestamp the wait never
// times out, as in kube-scheduler.
BindingCheck CheckBindingConditions(const api::ResourceClaim& claim,
                                    std::chrono::system_clock::time_point now,
                                    std::chrono::milliseconds timeout);

// One-line explanation for Events and logs, e.g. `device d/p/gpu-0: binding failure condition
// AttachFailed is True (FabricError: no path)`. Empty for kReady.
std::string DescribeBindingCheck(const BindingCheck& check, std::chrono::milliseconds timeout);

}  // namespace draco::reconcilers
