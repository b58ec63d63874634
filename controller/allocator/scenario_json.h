// The JSON of the `oracle allocate` scenario protocol that is not an API object: the feature
// switches a scenario sets, and AllocationResult written exactly like encoding/json of the v1 Go
// struct (field order, omitempty), so that outputs can be compared with the upstream oracle. API
// objects in scenarios are decoded with api::Decode and converted with from_api.h.
//
// Thread-safe (pure functions).
#pragma once

#include <string>
#include <string_view>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "base/status.h"
#include "controller/allocator/features.h"
#include "controller/api/codec.h"

namespace draco::alloc {

// The keys are Features' members in lowerCamelCase; keys that are absent or not booleans keep
// their defaults.
Features DecodeFeatures(const rapidjson::Value& v);

using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;

// An API object inside a scenario line (type A of controller/api), decoded with api::Decode like
// the controller decodes what the API server serves.
template <class A>
StatusOr<A> DecodeApiValue(const rapidjson::Value& v) {
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  v.Accept(w);
  return api::Decode<A>(std::string_view(buf.GetString(), buf.GetSize()));
}

void EncodeAllocationResult(const api::AllocationResult& r, JsonWriter& w);
std::string AllocationResultToJson(const api::AllocationResult& r);

// The same for the allocator's compute form (allocator-internal, compute_model.h).
struct AllocationResult;
void EncodeComputeResult(const AllocationResult& r, JsonWriter& w);
std::string ComputeResultToJson(const AllocationResult& r);

}  // namespace draco::alloc
