// Direct conversions between the API model (controller/api: what the API server serves, decoded
// by api::Decode) and the allocator's compute model (model.h), without JSON text in between.
//
// Contract: every To* function mirrors the API object field by field (nil-vs-empty distinctions
// kept where upstream's Go code makes them, maps turned into name-sorted lists, quantities with
// their exact value and canonical text; see from_api_test.cc). Opaque parameters keep the API
// model's compact JSON text. Nothing here can fail: quantities were parsed by the api codec; an
// attribute takes its first member set (int, bool, string, version, then the non-empty lists) and
// one without a value becomes Attribute::Kind::kNone. ToAllocPolicy is the exception: it enforces
// the AllocationPolicy CRD's structural rules and returns INVALID_ARGUMENT naming the policy.
//
// ToApiAllocationResult is the reverse for what the allocator produces; it equals
// api::Decode<api::AllocationResult>(AllocationResultToJson(r)).
//
// All functions are pure and thread-safe.
#pragma once

#include "base/status.h"
#include "controller/allocator/compute_model.h"
#include "controller/api/policy_types.h"
#include "controller/api/types.h"

namespace draco::alloc {

ResourceSlice ToAllocSlice(const api::ResourceSlice& slice);
DeviceClass ToAllocClass(const api::DeviceClass& cls);
// The claim with its status.allocation; DefaultClaim (allocator.h) is applied.
ResourceClaim ToAllocClaim(const api::ResourceClaim& claim);
// ToAllocClaim without DefaultClaim: the claim as written (upstream's allocator tests hand over
// claims without API-server defaulting).
ResourceClaim ToAllocClaimAsGiven(const api::ResourceClaim& claim);
// The claim a template's spec.spec describes, named like the template (name and namespace only;
// no annotations, uid or status); DefaultClaim is applied.
ResourceClaim ToAllocClaimTemplate(const api::ResourceClaimTemplate& tmpl);
AllocationResult ToAllocAllocationResult(const api::AllocationResult& result);
DeviceTaintRule ToAllocTaintRule(const api::DeviceTaintRule& rule);
// Name, labels and status.declaredFeatures.
Node ToAllocNode(const api::Node& node);
StatusOr<AllocationPolicy> ToAllocPolicy(const api::AllocationPolicy& policy);

api::AllocationResult ToApiAllocationResult(const AllocationResult& result);

}  // namespace draco::alloc
