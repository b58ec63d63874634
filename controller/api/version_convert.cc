#include "controller/api/version_convert.h"

#include <array>

namespace draco::api {
namespace {

using rapidjson::Value;
using Alloc = rapidjson::Document::AllocatorType;

constexpr std::string_view kV1 = "resource.k8s.io/v1";
constexpr std::string_view kV1beta2 = "resource.k8s.io/v1beta2";
constexpr std::string_view kV1beta1 = "resource.k8s.io/v1beta1";

// The v1beta1 DeviceRequest fields that v1 moved into ExactDeviceRequest.
constexpr std::array<const char*, 8> kExactFields = {
    "deviceClassName", "selectors",   "allocationMode", "count",
    "adminAccess",     "tolerations", "capacity",       "derivedAttributes"};

// The v1beta1 BasicDevice fields that v1 put on Device itself.
constexpr std::array<const char*, 12> kBasicFields = {"attributes",
                                                      "capacity",
                                                      "consumesCounters",
                                                      "nodeName",
                                                      "nodeSelector",
                                                      "allNodes",
                                                      "taints",
                                                      "bindsToNode",
                                                      "bindingConditions",
                                                      "bindingFailureConditions",
                                                      "allowMultipleAllocations",
                                                      "nodeAllocatableResources"};

Value* Member(Value& v, const char* name) {
  if (!v.IsObject()) return nullptr;
  auto it = v.FindMember(name);
  return it == v.MemberEnd() ? nullptr : &it->value;
}

// Upstream's hasAnyMainRequestFieldsSet: a field counts when it is present and not the zero
// value Go's decoder would leave (null, "", 0).
bool IsSet(const Value& v) {
  if (v.IsNull()) return false;
  if (v.IsString()) return v.GetStringLength() > 0;
  if (v.IsNumber()) return v.GetDouble() != 0;
  return true;
}

void ConvertRequest(Value& req, Alloc& a) {
  if (!req.IsObject()) return;
  bool any = false;
  for (const char* f : kExactFields) {
    if (const Value* v = Member(req, f); v && IsSet(*v)) any = true;
  }
  Value exactly(rapidjson::kObjectType);
  for (const char* f : kExactFields) {
    auto it = req.FindMember(f);
    if (it == req.MemberEnd()) continue;
    if (any && IsSet(it->value)) {
      exactly.AddMember(Value(f, a), Value(it->value, a), a);
    }
    req.RemoveMember(it);
  }
  if (any) req.AddMember("exactly", exactly, a);
}

void ConvertDeviceClaim(Value* devices, Alloc& a) {
  if (!devices) return;
  if (Value* reqs = Member(*devices, "requests"); reqs && reqs->IsArray()) {
    for (Value& r : reqs->GetArray()) ConvertRequest(r, a);
  }
}

void ConvertDevice(Value& dev, Alloc& a) {
  if (!dev.IsObject()) return;
  auto basic = dev.FindMember("basic");
  if (basic == dev.MemberEnd()) return;
  Value b(basic->value, a);
  dev.RemoveMember(basic);
  if (!b.IsObject()) return;
  for (const char* f : kBasicFields) {
    auto it = b.FindMember(f);
    if (it == b.MemberEnd() || it->value.IsNull()) continue;
    dev.RemoveMember(f);
    dev.AddMember(Value(f, a), Value(it->value, a), a);
  }
}

void ConvertSliceSpec(Value* spec, Alloc& a) {
  if (!spec || !spec->IsObject()) return;
  if (Value* n = Member(*spec, "nodeName"); n && n->IsString() && n->GetStringLength() == 0) {
    spec->RemoveMember("nodeName");
  }
  if (Value* all = Member(*spec, "allNodes"); all && all->IsBool() && !all->GetBool()) {
    spec->RemoveMember("allNodes");
  }
  if (Value* devs = Member(*spec, "devices"); devs && devs->IsArray()) {
    for (Value& d : devs->GetArray()) ConvertDevice(d, a);
  }
}

void ConvertV1beta1(Value& obj, std::string_view kind, Alloc& a) {
  Value* spec = Member(obj, "spec");
  if (kind == "ResourceClaim" && spec) {
    ConvertDeviceClaim(Member(*spec, "devices"), a);
  } else if (kind == "ResourceClaimTemplate" && spec) {
    if (Value* inner = Member(*spec, "spec")) ConvertDeviceClaim(Member(*inner, "devices"), a);
  } else if (kind == "ResourceSlice") {
    ConvertSliceSpec(spec, a);
  }
}

}  // namespace

Status CheckApiVersion(std::string_view api_version, std::string_view kind) {
  std::string_view group;
  if (auto slash = api_version.find('/'); slash != std::string_view::npos) {
    group = api_version.substr(0, slash);
  }
  if (group.empty()) {
    if (api_version == "v1") return OkStatus();
    return InvalidArgumentError("apiVersion \"" + std::string(api_version) + "\" of " +
                                std::string(kind) + " is not supported (core objects are v1)");
  }
  if (group == kResourceGroup) {
    if (api_version == kV1 || api_version == kV1beta2 || api_version == kV1beta1) {
      return OkStatus();
    }
    return InvalidArgumentError(
        "apiVersion \"" + std::string(api_version) + "\" of " + std::string(kind) +
        " is not supported: draco reads resource.k8s.io/v1, v1beta2 and v1beta1");
  }
  if (group == "draco.dev" && api_version != "draco.dev/v1alpha1") {
    return InvalidArgumentError("apiVersion \"" + std::string(api_version) + "\" of " +
                                std::string(kind) +
                                " is not supported: draco reads draco.dev/v1alpha1");
  }
  return OkStatus();
}

Status ConvertResourceToV1(Value& obj, Alloc& alloc) {
  if (!obj.IsObject()) return InvalidArgumentError("expected an object");
  Value* api = Member(obj, "apiVersion");
  Value* kind = Member(obj, "kind");
  if (!api || !api->IsString() || !kind || !kind->IsString()) {
    return InvalidArgumentError("apiVersion and kind: expected strings");
  }
  std::string version(api->GetString(), api->GetStringLength());
  std::string k(kind->GetString(), kind->GetStringLength());
  if (Status s = CheckApiVersion(version, k); !s.ok()) return s;
  if (version != kV1beta1 && version != kV1beta2) return OkStatus();
  if (version == kV1beta1) ConvertV1beta1(obj, k, alloc);
  // v1beta2 has v1's shape (v1 was graduated from it without field changes).
  Member(obj, "apiVersion")
      ->SetString(kV1.data(), static_cast<rapidjson::SizeType>(kV1.size()), alloc);
  return OkStatus();
}

}  // namespace draco::api
