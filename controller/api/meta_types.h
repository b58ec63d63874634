// Shared building blocks of the API model (see types.h for the conventions): UnknownFields,
// RawJson, StringMap, ResourceList and the meta/v1 types every object embeds (OwnerReference,
// ObjectMeta, Condition). Part of the umbrella header controller/api/types.h; includers normally
// include that.
//
// All types are value types: thread-compatible, no hidden sharing.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "controller/api/quantity.h"

namespace draco::api {

// JSON members not modelled by a struct: (name, compact JSON text) in document order.
struct UnknownFields {
  std::vector<std::pair<std::string, std::string>> members;
  bool empty() const { return members.empty(); }
  friend bool operator==(const UnknownFields&, const UnknownFields&) = default;
};

// An arbitrary JSON value kept as compact JSON text (e.g. opaque driver parameters).
struct RawJson {
  std::string json;  // empty = absent
  bool empty() const { return json.empty(); }
  friend bool operator==(const RawJson&, const RawJson&) = default;
};

using StringMap = std::map<std::string, std::string>;
using ResourceList = std::map<std::string, Quantity>;  // core/v1 ResourceList

// ---------------------------------------------------------------------------------------------
// meta/v1

struct OwnerReference {
  std::string api_version;  // apiVersion
  std::string kind;
  std::string name;
  std::string uid;
  std::optional<bool> controller;
  std::optional<bool> block_owner_deletion;
  UnknownFields unknown;
  friend bool operator==(const OwnerReference&, const OwnerReference&) = default;
};

struct ObjectMeta {
  std::string name;
  std::string generate_name;
  std::string namespace_;  // "namespace"
  std::string uid;
  std::string resource_version;
  int64_t generation = 0;
  std::string creation_timestamp;
  std::optional<std::string> deletion_timestamp;
  std::optional<int64_t> deletion_grace_period_seconds;
  StringMap labels;
  StringMap annotations;
  std::vector<OwnerReference> owner_references;
  std::vector<std::string> finalizers;
  UnknownFields unknown;  // managedFields etc.
  friend bool operator==(const ObjectMeta&, const ObjectMeta&) = default;
};

// metav1.Condition.
struct Condition {
  std::string type;
  std::string status;  // "True" | "False" | "Unknown"
  int64_t observed_generation = 0;
  std::string last_transition_time;
  std::string reason;
  std::string message;
  UnknownFields unknown;
  friend bool operator==(const Condition&, const Condition&) = default;
};

}  // namespace draco::api
