// JSON and YAML codec for the types in types.h, storage_types.h, workload_types.h and
// policy_types.h.
//
// JSON: Decode<T>(text) / Encode<T>(obj) for every struct in types.h. Decoding is strict about
// types, as Go's encoding/json is (a number where a string is expected is an error; 1.0 and 1e3
// are not integers), treats `null` like an absent member, and names the failing field:
//   "spec.devices.requests[0].exactly.count: expected integer"
// Quantities accept a JSON string or number, like upstream's Quantity.UnmarshalJSON.
//
// Unknown fields: every struct keeps JSON members it does not model in its `unknown` member
// (name + compact JSON text, in document order) and Encode writes them back after the known
// members. decode -> modify known fields -> encode therefore preserves everything a newer API
// server sent (managedFields, fields of future API versions, ...). Encode omits empty strings,
// zero integers, false booleans, empty lists/maps and empty nested objects (Go's omitempty; for
// Kubernetes decoders an omitted member and its zero value are the same); std::optional members
// that are set are always written.
//
// YAML: DecodeManifests accepts what `kubectl apply -f` accepts: one or more documents separated
// by `---` (JSON is YAML), `kind: List` wrappers expanded, empty documents skipped. Plain scalars
// are resolved like sigs.k8s.io/yaml (YAML 1.1: yes/no/on/off are booleans, 0x/0o/leading-zero
// integers, underscores in numbers); quoted scalars are strings. Each Manifest carries the
// object's JSON text and, for the kinds in types.h, the decoded object.
//
// Limits: nesting deeper than kMaxNestingDepth and YAML alias expansion beyond kMaxYamlNodes are
// rejected (INVALID_ARGUMENT) instead of exhausting the stack or memory.
//
// All functions are thread-safe (no shared state) and never throw.
#pragma once

#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "base/status.h"
#include "controller/api/policy_types.h"
#include "controller/api/storage_types.h"
#include "controller/api/types.h"
#include "controller/api/workload_types.h"

namespace draco::api {

inline constexpr int kMaxNestingDepth = 512;
inline constexpr size_t kMaxYamlNodes = 1 << 20;

// Instantiated for every struct declared in types.h, storage_types.h and workload_types.h, and
// for AllocationPolicy (policy_types.h).
template <typename T>
StatusOr<T> Decode(std::string_view json);
template <typename T>
std::string Encode(const T& obj);
// Like Decode, but the top-level object's metadata.managedFields is dropped while parsing: never
// built as a tree, never kept in metadata.unknown (so Encode does not write it back). For watch
// events of objects draco reads but never writes back whole (pods, nodes): managedFields is often
// the largest part of a pod, and nothing in draco reads it.
template <typename T>
StatusOr<T> DecodeSkippingManagedFields(std::string_view json);
// A YAML (or JSON) text holding exactly one document.
template <typename T>
StatusOr<T> DecodeYaml(std::string_view yaml);

// Converts one YAML document to compact JSON text.
StatusOr<std::string> YamlToJson(std::string_view yaml);

using AnyObject = std::variant<std::monostate, Pod, Node, DeviceClass, ResourceClaim,
                               ResourceClaimTemplate, ResourceSlice, DeviceTaintRule>;

struct Manifest {
  std::string api_version;
  std::string kind;
  std::string raw_json;  // the object as compact JSON
  AnyObject object;      // monostate for kinds/versions not modelled in types.h
};

// Decodes a multi-document manifest. Every document must be an object with string `apiVersion`
// and `kind`; errors are prefixed with "document N: " (1-based).
StatusOr<std::vector<Manifest>> DecodeManifests(std::string_view yaml);

}  // namespace draco::api
