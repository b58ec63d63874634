// Plain C++ model of the Kubernetes objects draco reads and writes: resource.k8s.io/v1
// (DeviceClass, ResourceClaim, ResourceClaimTemplate, ResourceSlice, DeviceTaintRule) and the
// parts of core/v1 Pod and Node the controller needs.
//
// Conventions:
// - Members are the snake_case form of the JSON field name (deviceClassName ->
//   device_class_name); the exact JSON names live in the codec_*_fields.inc lists and in the
//   comments where they differ in more than case.
// - Go pointers and `omitempty` scalars whose absence matters are std::optional; lists and maps
//   are empty when absent (the encoder omits empty lists/maps, like Go's omitempty).
// - Every object-valued struct has an `unknown` member holding JSON members the decoder did not
//   recognise, verbatim, so that decode -> modify -> encode does not drop fields added by newer
//   API servers (see codec.h).
// - Timestamps are kept as the RFC 3339 strings the API server sends.
//
// All types are value types: thread-compatible, no hidden sharing.
//
// This is the umbrella header; the types live in:
//   meta_types.h      UnknownFields, RawJson, StringMap, ResourceList, meta/v1
//   core_types.h      core/v1 node selection, pod scheduling constraints, volumes, Pod, Node
//   resource_types.h  resource.k8s.io/v1
#pragma once

#include "controller/api/core_types.h"      // IWYU pragma: export
#include "controller/api/meta_types.h"      // IWYU pragma: export
#include "controller/api/resource_types.h"  // IWYU pragma: export
