// Internal to validation.h; include only from the validation*.cc files. Holds upstream's limits
// and the Validator, which collects FieldErrors while walking an object. Its members are defined
// in validation.cc (names, selectors, tolerations, taints), validation_claim.cc (ResourceClaim
// spec and status) and validation_slice.cc (ResourceSlice).
//
// A Validator is single-use and not thread-safe; the functions of validation.h each make their
// own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "controller/api/types.h"
#include "controller/api/validation.h"

namespace draco::api::validation_internal {

inline constexpr size_t kDeviceRequestsMaxSize = 32;
inline constexpr size_t kFirstAvailableMaxSize = 8;
inline constexpr size_t kDeviceSelectorsMaxSize = 32;
inline constexpr size_t kDeviceConstraintsMaxSize = 32;
inline constexpr size_t kDeviceConfigMaxSize = 32;
inline constexpr size_t kDeviceTolerationsMaxLength = 16;
inline constexpr size_t kCelSelectorExpressionMaxLength = size_t{10} * 1024;
inline constexpr size_t kOpaqueParametersMaxLength = size_t{10} * 1024;
inline constexpr size_t kAllocationResultsMaxSize = 32;
inline constexpr size_t kAllocationConfigMaxSize = 2 * kDeviceConfigMaxSize;
inline constexpr size_t kBindingConditionsMaxSize = 4;
inline constexpr size_t kReservedForMaxSize = 256;
inline constexpr size_t kDeviceStatusConditionsMaxSize = 8;
inline constexpr size_t kDeviceStatusDataMaxLength = size_t{10} * 1024;
inline constexpr size_t kNetworkInterfaceNameMaxLength = 256;
inline constexpr size_t kNetworkIpsMaxSize = 16;
inline constexpr size_t kNetworkHardwareAddressMaxLength = 128;
inline constexpr size_t kSliceMaxDevices = 128;
inline constexpr size_t kSliceMaxDevicesWithAdvancedFeatures = 64;
inline constexpr size_t kSliceMaxCounterSets = 8;
inline constexpr size_t kMaxCountersPerSet = 32;
inline constexpr size_t kMaxDeviceCounterConsumptions = 2;
inline constexpr size_t kMaxAttributesAndCapacities = 32;
inline constexpr size_t kMaxAttributeValuesPerDevice = 48;
inline constexpr size_t kAttributeMaxValueLength = 64;
inline constexpr size_t kDeviceTaintsMaxLength = 16;
inline constexpr size_t kValidValuesMaxSize = 10;
inline constexpr size_t kPoolNameMaxLength = 253;
inline constexpr size_t kDriverNameMaxLength = 63;
inline constexpr size_t kCIdentifierMaxLength = 32;

inline std::string Quote(std::string_view s) { return "\"" + std::string(s) + "\""; }
inline std::string Index(const std::string& path, size_t i) {
  return path + "[" + std::to_string(i) + "]";
}
inline std::string Child(const std::string& path, std::string_view name) {
  return path.empty() ? std::string(name) : path + "." + std::string(name);
}

class Validator {
 public:
  FieldErrors errors;

  void Add(const std::string& path, std::string message) {
    errors.push_back({path, std::move(message)});
  }
  void Required(const std::string& path) { Add(path, "Required value"); }
  void Invalid(const std::string& path, std::string_view value, std::string_view why) {
    Add(path, "Invalid value: " + Quote(value) + ": " + std::string(why));
  }
  void TooMany(const std::string& path, size_t n, size_t max) {
    Add(path,
        "Too many: " + std::to_string(n) + ": must have at most " + std::to_string(max) + " items");
  }
  void TooLong(const std::string& path, size_t max) {
    Add(path, "Too long: may not be more than " + std::to_string(max) + " bytes");
  }
  void Duplicate(const std::string& path, std::string_view v) {
    Add(path, "Duplicate value: " + Quote(v));
  }
  void Unsupported(const std::string& path, std::string_view v, std::string_view supported) {
    Add(path, "Unsupported value: " + Quote(v) + ": supported values: " + std::string(supported));
  }
  void Forbidden(const std::string& path, std::string_view why) {
    Add(path, "Forbidden: " + std::string(why));
  }

  template <class T>
  bool MaxItems(const std::vector<T>& v, size_t max, const std::string& path) {
    if (v.size() > max) {
      TooMany(path, v.size(), max);
      return false;
    }
    return true;
  }

  void DnsLabel(std::string_view v, const std::string& path) {
    if (v.empty()) return Required(path);
    if (!IsDnsLabel(v)) {
      Invalid(path, v,
              "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or "
              "'-', and must start and end with an alphanumeric character");
    }
  }
  void DnsSubdomain(std::string_view v, const std::string& path) {
    if (v.empty()) return Required(path);
    if (!IsDnsSubdomain(v)) {
      Invalid(path, v,
              "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
              "characters, '-' or '.', and must start and end with an alphanumeric character");
    }
  }
  void DriverName(std::string_view v, const std::string& path) {
    if (v.empty()) return Required(path);
    if (v.size() > kDriverNameMaxLength) return TooLong(path, kDriverNameMaxLength);
    std::string lower(v);
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    DnsSubdomain(lower, path);
  }
  void PoolName(std::string_view v, const std::string& path) {
    if (v.empty()) return Required(path);
    if (v.size() > kPoolNameMaxLength) return TooLong(path, kPoolNameMaxLength);
    size_t start = 0;
    while (true) {
      size_t slash = v.find('/', start);
      std::string_view part =
          v.substr(start, slash == std::string_view::npos ? v.npos : slash - start);
      if (!IsDnsSubdomain(part)) {
        return Invalid(path, v, "each '/'-separated part must be a DNS subdomain");
      }
      if (slash == std::string_view::npos) break;
      start = slash + 1;
    }
  }
  void QualifiedName(std::string_view v, const std::string& path) {
    if (v.empty()) return Required(path);
    if (!IsQualifiedName(v)) {
      Invalid(path, v,
              "must be a C identifier of at most 32 characters, optionally prefixed by a DNS "
              "subdomain of at most 63 characters and '/'");
    }
  }
  void FullyQualifiedName(std::string_view v, const std::string& path) {
    if (v.empty()) return Required(path);
    if (v.find('/') == std::string_view::npos) {
      return Invalid(path, v, "must include a domain");
    }
    QualifiedName(v, path);
  }
  void LabelName(std::string_view v, const std::string& path) {
    if (v.empty()) return Required(path);
    if (!IsLabelName(v)) {
      Invalid(path, v,
              "name part must consist of alphanumeric characters, '-', '_' or '.', and must start "
              "and end with an alphanumeric character, with an optional DNS subdomain prefix");
    }
  }

  // validation.cc
  void Selectors(const std::vector<DeviceSelector>& selectors, const std::string& path);
  void Opaque(const std::optional<OpaqueDeviceConfiguration>& opaque, const std::string& path);
  void Tolerations(const std::vector<DeviceToleration>& tolerations, const std::string& path);
  void Taint(const DeviceTaint& t, const std::string& path);

  // validation_claim.cc
  void AllocationModeAndCount(const std::string& mode, const std::optional<int64_t>& count,
                              const std::string& path);
  void CapacityRequests(const std::optional<CapacityRequirements>& cap, const std::string& path);
  // Valid "<req>" / "<req>/<sub>" reference.
  void RequestRef(const std::string& ref, const std::map<std::string, std::set<std::string>>& reqs,
                  const std::string& path);
  void ClaimSpec(const ResourceClaimSpec& spec, const std::string& spec_path);
  void RequestRefs(const std::vector<std::string>& refs,
                   const std::map<std::string, std::set<std::string>>& names,
                   const std::string& path);
  void BindingConditions(const std::vector<std::string>& conds,
                         const std::vector<std::string>& failures, const std::string& path,
                         bool require_pairing);
  void ClaimStatus(const ResourceClaimStatus& st, const ResourceClaimSpec& spec);

  // validation_slice.cc
  void NodeSelectorOneTerm(const NodeSelector& sel, const std::string& path);
  void Attribute(const std::string& name, const DeviceAttribute& a, const std::string& path,
                 size_t* values);
  void RequestPolicy(const DeviceCapacity& cap, const std::string& path);
  void SliceDevice(const Device& d, const std::string& p, bool per_device_nodes);
  void Counters(const std::map<std::string, Counter>& counters, const std::string& path);
  void Slice(const ResourceSlice& obj);
};

}  // namespace draco::api::validation_internal
