// The admission gate decision and mutation, shared by draco's mutating admission webhook and
// checked against the chart's MutatingAdmissionPolicy.
//
// Overview. draco allocates a pod's claims before kube-scheduler sees the pod by having a
// scheduling gate (kSchedulingGate) added at admission. The chart adds it either with a
// MutatingAdmissionPolicy (Kubernetes >= 1.36, or 1.34/1.35 with the beta API on) or with a
// MutatingWebhookConfiguration that calls draco (every other version). Both select namespaces with
// the same namespaceSelectors rendered from admission.gatedNamespaces, and both decide per pod with
// the conditions in charts/draco/files/gate-conditions.yaml (CEL matchConditions). ShouldGate is
// the C++ form of those conditions; gate_test.cc evaluates the CEL file and ShouldGate on the same
// pod table, so the webhook gates exactly the pods the policy gates.
#pragma once

#include <string>
#include <string_view>

#include "controller/api/types.h"

namespace draco::admission {

// The scheduling gate draco removes once a pod's claims are allocated (fixed in draco).
inline constexpr std::string_view kSchedulingGate = "draco.dev/allocation";

// True when a new pod in a gated namespace must get kSchedulingGate: it has spec.resourceClaims,
// is not bound yet (the API server refuses gates on bound pods), and does not carry the gate
// already. Namespace selection is not part of this decision (the API server applies the
// namespaceSelector before calling the webhook or the policy).
bool ShouldGate(const api::Pod& pod);

// The RFC 6902 JSON patch that adds kSchedulingGate to `pod` and keeps the gates it has:
// `add /spec/schedulingGates` with a one-element list when the pod has none, else an append.
std::string GatePatch(const api::Pod& pod);

}  // namespace draco::admission
