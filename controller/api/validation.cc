#include "controller/api/validation.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "controller/api/codec.h"

namespace draco::api {
namespace {

constexpr size_t kDeviceRequestsMaxSize = 32;
constexpr size_t kFirstAvailableMaxSize = 8;
constexpr size_t kDeviceSelectorsMaxSize = 32;
constexpr size_t kDeviceConstraintsMaxSize = 32;
constexpr size_t kDeviceConfigMaxSize = 32;
constexpr size_t kDeviceTolerationsMaxLength = 16;
constexpr size_t kCelSelectorExpressionMaxLength = 10 * 1024;
constexpr size_t kOpaqueParametersMaxLength = 10 * 1024;
constexpr size_t kAllocationResultsMaxSize = 32;
constexpr size_t kAllocationConfigMaxSize = 2 * kDeviceConfigMaxSize;
constexpr size_t kBindingConditionsMaxSize = 4;
constexpr size_t kReservedForMaxSize = 256;
constexpr size_t kDeviceStatusConditionsMaxSize = 8;
constexpr size_t kDeviceStatusDataMaxLength = 10 * 1024;
constexpr size_t kNetworkInterfaceNameMaxLength = 256;
constexpr size_t kNetworkIpsMaxSize = 16;
constexpr size_t kNetworkHardwareAddressMaxLength = 128;
constexpr size_t kSliceMaxDevices = 128;
constexpr size_t kSliceMaxDevicesWithAdvancedFeatures = 64;
constexpr size_t kSliceMaxCounterSets = 8;
constexpr size_t kMaxCountersPerSet = 32;
constexpr size_t kMaxDeviceCounterConsumptions = 2;
constexpr size_t kMaxAttributesAndCapacities = 32;
constexpr size_t kMaxAttributeValuesPerDevice = 48;
constexpr size_t kAttributeMaxValueLength = 64;
constexpr size_t kDeviceTaintsMaxLength = 16;
constexpr size_t kValidValuesMaxSize = 10;
constexpr size_t kPoolNameMaxLength = 253;
constexpr size_t kDriverNameMaxLength = 63;
constexpr size_t kCIdentifierMaxLength = 32;

bool IsAlnumLower(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool IsAlnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

std::string Quote(std::string_view s) { return "\"" + std::string(s) + "\""; }
std::string Index(const std::string& path, size_t i) {
  return path + "[" + std::to_string(i) + "]";
}
std::string Child(const std::string& path, std::string_view name) {
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

  void Selectors(const std::vector<DeviceSelector>& selectors, const std::string& path) {
    if (!MaxItems(selectors, kDeviceSelectorsMaxSize, path)) return;
    for (size_t i = 0; i < selectors.size(); ++i) {
      const std::string p = Index(path, i);
      if (!selectors[i].cel) {
        Required(Child(p, "cel"));
        continue;
      }
      const std::string& expr = selectors[i].cel->expression;
      const std::string ep = Child(Child(p, "cel"), "expression");
      if (expr.empty()) {
        Required(ep);
      } else if (expr.size() > kCelSelectorExpressionMaxLength) {
        TooLong(ep, kCelSelectorExpressionMaxLength);
      }
    }
  }

  void Opaque(const std::optional<OpaqueDeviceConfiguration>& opaque, const std::string& path) {
    if (!opaque) return Required(Child(path, "opaque"));
    const std::string p = Child(path, "opaque");
    DriverName(opaque->driver, Child(p, "driver"));
    const std::string pp = Child(p, "parameters");
    if (opaque->parameters.empty()) return Required(pp);
    if (opaque->parameters.json.front() != '{') {
      Invalid(pp, "<value omitted>", "parameters must be a valid JSON object");
    } else if (opaque->parameters.json.size() > kOpaqueParametersMaxLength) {
      TooLong(pp, kOpaqueParametersMaxLength);
    }
  }

  void Tolerations(const std::vector<DeviceToleration>& tolerations, const std::string& path) {
    if (!MaxItems(tolerations, kDeviceTolerationsMaxLength, path)) return;
    for (size_t i = 0; i < tolerations.size(); ++i) {
      const DeviceToleration& t = tolerations[i];
      const std::string p = Index(path, i);
      if (!t.key.empty()) LabelName(t.key, Child(p, "key"));
      if (t.operator_.empty() || t.operator_ == "Equal") {
        if (t.key.empty()) {
          Invalid(Child(p, "operator"), t.operator_,
                  "value must be Exists when `key` is empty, which means \"match all values and "
                  "all keys\"");
        }
        if (!IsLabelValue(t.value)) Invalid(Child(p, "value"), t.value, "must be a label value");
      } else if (t.operator_ == "Exists") {
        if (!t.value.empty()) {
          Invalid(Child(p, "operator"), t.value, "value must be empty when `operator` is 'Exists'");
        }
      } else {
        Unsupported(Child(p, "operator"), t.operator_, "\"Equal\", \"Exists\"");
      }
      if (!t.effect.empty() && t.effect != "None" && t.effect != "NoSchedule" &&
          t.effect != "NoExecute") {
        Unsupported(Child(p, "effect"), t.effect, "\"NoExecute\", \"NoSchedule\", \"None\"");
      }
    }
  }

  void Taint(const DeviceTaint& t, const std::string& path) {
    LabelName(t.key, Child(path, "key"));
    if (!IsLabelValue(t.value)) Invalid(Child(path, "value"), t.value, "must be a label value");
    if (t.effect.empty()) {
      Required(Child(path, "effect"));
    } else if (t.effect != "None" && t.effect != "NoSchedule" && t.effect != "NoExecute") {
      Unsupported(Child(path, "effect"), t.effect, "\"NoExecute\", \"NoSchedule\", \"None\"");
    }
  }

  void AllocationModeAndCount(const std::string& mode, const std::optional<int64_t>& count,
                              const std::string& path) {
    if (mode.empty() || mode == kAllocationModeExactCount) {
      if (count && *count <= 0) {
        Invalid(Child(path, "count"), std::to_string(*count), "must be greater than zero");
      }
    } else if (mode == kAllocationModeAll) {
      if (count && *count != 0) {
        Invalid(Child(path, "count"), std::to_string(*count),
                "must not be specified when allocationMode is 'All'");
      }
    } else {
      Unsupported(Child(path, "allocationMode"), mode, "\"All\", \"ExactCount\"");
    }
  }

  void CapacityRequests(const std::optional<CapacityRequirements>& cap, const std::string& path) {
    if (!cap) return;
    for (const auto& [name, q] : cap->requests) {
      const std::string p = Child(Child(Child(path, "capacity"), "requests"), name);
      QualifiedName(name, p);
      if (q.Sign() < 0) Invalid(p, q.ToString(), "must be greater than or equal to 0");
    }
  }

  // Valid "<req>" / "<req>/<sub>" reference.
  void RequestRef(const std::string& ref, const std::map<std::string, std::set<std::string>>& reqs,
                  const std::string& path) {
    size_t slash = ref.find('/');
    std::string req = ref.substr(0, slash);
    auto it = reqs.find(req);
    if (it == reqs.end()) return Invalid(path, ref, "must be the name of a request in the claim");
    if (slash == std::string::npos) return;
    std::string sub = ref.substr(slash + 1);
    if (sub.find('/') != std::string::npos) {
      return Invalid(path, ref,
                     "must be the name of a request in the claim or the name of a "
                     "request and a subrequest separated by '/'");
    }
    if (!it->second.count(sub)) {
      Invalid(path, ref, "must be the name of a subrequest of the request");
    }
  }

  void ClaimSpec(const ResourceClaimSpec& spec, const std::string& spec_path) {
    const std::string dpath = Child(spec_path, "devices");
    const DeviceClaim& d = spec.devices;
    std::map<std::string, std::set<std::string>> names;
    const std::string rpath = Child(dpath, "requests");
    if (MaxItems(d.requests, kDeviceRequestsMaxSize, rpath)) {
      for (size_t i = 0; i < d.requests.size(); ++i) {
        const DeviceRequest& r = d.requests[i];
        const std::string p = Index(rpath, i);
        DnsLabel(r.name, Child(p, "name"));
        if (names.count(r.name)) Duplicate(Child(p, "name"), r.name);
        std::set<std::string>& subs = names[r.name];
        const bool has_exact = r.exactly.has_value();
        const bool has_first = !r.first_available.empty();
        if (has_exact == has_first) {
          Invalid(p, r.name, "exactly one of `exactly` or `firstAvailable` is required");
        }
        if (has_exact) {
          const ExactDeviceRequest& e = *r.exactly;
          const std::string ep = Child(p, "exactly");
          DnsSubdomain(e.device_class_name, Child(ep, "deviceClassName"));
          Selectors(e.selectors, Child(ep, "selectors"));
          AllocationModeAndCount(e.allocation_mode, e.count, ep);
          Tolerations(e.tolerations, Child(ep, "tolerations"));
          CapacityRequests(e.capacity, ep);
        }
        const std::string fp = Child(p, "firstAvailable");
        if (MaxItems(r.first_available, kFirstAvailableMaxSize, fp)) {
          for (size_t j = 0; j < r.first_available.size(); ++j) {
            const DeviceSubRequest& s = r.first_available[j];
            const std::string sp = Index(fp, j);
            DnsLabel(s.name, Child(sp, "name"));
            if (!subs.insert(s.name).second) Duplicate(Child(sp, "name"), s.name);
            DnsSubdomain(s.device_class_name, Child(sp, "deviceClassName"));
            Selectors(s.selectors, Child(sp, "selectors"));
            AllocationModeAndCount(s.allocation_mode, s.count, sp);
            Tolerations(s.tolerations, Child(sp, "tolerations"));
            CapacityRequests(s.capacity, sp);
          }
        }
      }
    }
    const std::string cpath = Child(dpath, "constraints");
    if (MaxItems(d.constraints, kDeviceConstraintsMaxSize, cpath)) {
      for (size_t i = 0; i < d.constraints.size(); ++i) {
        const DeviceConstraint& c = d.constraints[i];
        const std::string p = Index(cpath, i);
        RequestRefs(c.requests, names, Child(p, "requests"));
        if (c.match_attribute.has_value() == c.distinct_attribute.has_value()) {
          Invalid(p, "", "exactly one of `matchAttribute` or `distinctAttribute` is required");
        }
        if (c.match_attribute) FullyQualifiedName(*c.match_attribute, Child(p, "matchAttribute"));
        if (c.distinct_attribute) {
          FullyQualifiedName(*c.distinct_attribute, Child(p, "distinctAttribute"));
        }
      }
    }
    const std::string gpath = Child(dpath, "config");
    if (MaxItems(d.config, kDeviceConfigMaxSize, gpath)) {
      for (size_t i = 0; i < d.config.size(); ++i) {
        const std::string p = Index(gpath, i);
        RequestRefs(d.config[i].requests, names, Child(p, "requests"));
        Opaque(d.config[i].opaque, p);
      }
    }
  }

  void RequestRefs(const std::vector<std::string>& refs,
                   const std::map<std::string, std::set<std::string>>& names,
                   const std::string& path) {
    if (!MaxItems(refs, kDeviceRequestsMaxSize, path)) return;
    std::set<std::string> seen;
    for (size_t j = 0; j < refs.size(); ++j) {
      if (!seen.insert(refs[j]).second) Duplicate(Index(path, j), refs[j]);
      RequestRef(refs[j], names, Index(path, j));
    }
  }

  void BindingConditions(const std::vector<std::string>& conds,
                         const std::vector<std::string>& failures, const std::string& path,
                         bool require_pairing) {
    const std::string cp = Child(path, "bindingConditions");
    const std::string fp = Child(path, "bindingFailureConditions");
    MaxItems(conds, kBindingConditionsMaxSize, cp);
    MaxItems(failures, kBindingConditionsMaxSize, fp);
    std::set<std::string> seen;
    for (size_t i = 0; i < conds.size(); ++i) {
      LabelName(conds[i], Index(cp, i));
      if (!seen.insert(conds[i]).second) Duplicate(Index(cp, i), conds[i]);
    }
    std::set<std::string> seen_f;
    for (size_t i = 0; i < failures.size(); ++i) {
      LabelName(failures[i], Index(fp, i));
      if (!seen_f.insert(failures[i]).second) Duplicate(Index(fp, i), failures[i]);
      if (seen.count(failures[i])) {
        Invalid(Index(fp, i), failures[i], "must not be present in bindingConditions");
      }
    }
    if (require_pairing && conds.empty() != failures.empty()) {
      Invalid(conds.empty() ? cp : fp, "",
              "bindingConditions and bindingFailureConditions must both be set or both be "
              "empty");
    }
  }

  void ClaimStatus(const ResourceClaimStatus& st, const ResourceClaimSpec& spec) {
    const std::string spath = "status";
    std::map<std::string, std::set<std::string>> names;
    for (const DeviceRequest& r : spec.devices.requests) {
      for (const DeviceSubRequest& s : r.first_available) names[r.name].insert(s.name);
      names[r.name];
    }
    if (st.allocation) {
      const std::string ap = Child(spath, "allocation");
      const std::string rp = Child(Child(ap, "devices"), "results");
      const auto& results = st.allocation->devices.results;
      if (MaxItems(results, kAllocationResultsMaxSize, rp)) {
        for (size_t i = 0; i < results.size(); ++i) {
          const DeviceRequestAllocationResult& r = results[i];
          const std::string p = Index(rp, i);
          RequestRef(r.request, names, Child(p, "request"));
          DriverName(r.driver, Child(p, "driver"));
          PoolName(r.pool, Child(p, "pool"));
          DnsLabel(r.device, Child(p, "device"));
          Tolerations(r.tolerations, Child(p, "tolerations"));
          BindingConditions(r.binding_conditions, r.binding_failure_conditions, p, false);
          for (const auto& [name, q] : r.consumed_capacity) {
            QualifiedName(name, Child(Child(p, "consumedCapacity"), name));
          }
        }
      }
      const std::string cp = Child(Child(ap, "devices"), "config");
      const auto& config = st.allocation->devices.config;
      if (MaxItems(config, kAllocationConfigMaxSize, cp)) {
        for (size_t i = 0; i < config.size(); ++i) {
          const std::string p = Index(cp, i);
          if (config[i].source != kAllocationConfigSourceClass &&
              config[i].source != kAllocationConfigSourceClaim) {
            Unsupported(Child(p, "source"), config[i].source, "\"FromClaim\", \"FromClass\"");
          }
          RequestRefs(config[i].requests, names, Child(p, "requests"));
          Opaque(config[i].opaque, p);
        }
      }
      if (st.allocation->node_selector &&
          st.allocation->node_selector->node_selector_terms.empty()) {
        Required(Child(Child(ap, "nodeSelector"), "nodeSelectorTerms"));
      }
    } else if (!st.reserved_for.empty()) {
      Forbidden(Child(spath, "reservedFor"), "may not be specified when `allocated` is not set");
    }
    const std::string rfp = Child(spath, "reservedFor");
    if (MaxItems(st.reserved_for, kReservedForMaxSize, rfp)) {
      std::set<std::string> uids;
      for (size_t i = 0; i < st.reserved_for.size(); ++i) {
        const ResourceClaimConsumerReference& r = st.reserved_for[i];
        const std::string p = Index(rfp, i);
        if (r.resource.empty()) Required(Child(p, "resource"));
        if (r.name.empty()) Required(Child(p, "name"));
        if (r.uid.empty()) Required(Child(p, "uid"));
        if (!r.uid.empty() && !uids.insert(r.uid).second) Duplicate(Child(p, "uid"), r.uid);
      }
    }
    const std::string dp = Child(spath, "devices");
    std::set<std::string> keys;
    for (size_t i = 0; i < st.devices.size(); ++i) {
      const AllocatedDeviceStatus& d = st.devices[i];
      const std::string p = Index(dp, i);
      DriverName(d.driver, Child(p, "driver"));
      PoolName(d.pool, Child(p, "pool"));
      DnsLabel(d.device, Child(p, "device"));
      std::string key = d.driver + "/" + d.pool + "/" + d.device + "/" + d.share_id.value_or("");
      if (!keys.insert(key).second) Duplicate(p, key);
      bool allocated = false;
      if (st.allocation) {
        for (const DeviceRequestAllocationResult& r : st.allocation->devices.results) {
          allocated |= r.driver == d.driver && r.pool == d.pool && r.device == d.device &&
                       r.share_id == d.share_id;
        }
      }
      if (!allocated) Invalid(p, key, "must be an allocated device in the claim");
      MaxItems(d.conditions, kDeviceStatusConditionsMaxSize, Child(p, "conditions"));
      if (!d.data.empty()) {
        if (d.data.json.front() != '{') {
          Invalid(Child(p, "data"), "<value omitted>", "must be a valid JSON object");
        } else if (d.data.json.size() > kDeviceStatusDataMaxLength) {
          TooLong(Child(p, "data"), kDeviceStatusDataMaxLength);
        }
      }
      if (d.network_data) {
        const std::string np = Child(p, "networkData");
        if (d.network_data->interface_name.size() > kNetworkInterfaceNameMaxLength) {
          TooLong(Child(np, "interfaceName"), kNetworkInterfaceNameMaxLength);
        }
        if (d.network_data->hardware_address.size() > kNetworkHardwareAddressMaxLength) {
          TooLong(Child(np, "hardwareAddress"), kNetworkHardwareAddressMaxLength);
        }
        const auto& ips = d.network_data->ips;
        if (MaxItems(ips, kNetworkIpsMaxSize, Child(np, "ips"))) {
          std::set<std::string> seen;
          for (size_t j = 0; j < ips.size(); ++j) {
            if (ips[j].find('/') == std::string::npos) {
              Invalid(Index(Child(np, "ips"), j), ips[j], "must be an IP address in CIDR form");
            }
            if (!seen.insert(ips[j]).second) Duplicate(Index(Child(np, "ips"), j), ips[j]);
          }
        }
      }
    }
  }

  void NodeSelectorOneTerm(const NodeSelector& sel, const std::string& path) {
    if (sel.node_selector_terms.size() != 1) {
      Invalid(Child(path, "nodeSelectorTerms"), std::to_string(sel.node_selector_terms.size()),
              "must have exactly one node selector term");
    }
  }

  void Attribute(const std::string& name, const DeviceAttribute& a, const std::string& path,
                 size_t* values) {
    int set = a.int_value.has_value() + a.bool_value.has_value() + a.string_value.has_value() +
              a.version_value.has_value() + a.ints.has_value() + a.bools.has_value() +
              a.strings.has_value() + a.versions.has_value();
    (void)name;
    if (set != 1) {
      Invalid(path, "", "exactly one value must be specified");
      return;
    }
    auto check_string = [&](const std::string& s, const std::string& p) {
      if (s.size() > kAttributeMaxValueLength) TooLong(p, kAttributeMaxValueLength);
    };
    auto check_version = [&](const std::string& s, const std::string& p) {
      if (!IsStrictSemver(s)) {
        Invalid(p, s, "must be a string compatible with semver.org spec 2.0.0");
      }
      if (s.size() > kAttributeMaxValueLength) TooLong(p, kAttributeMaxValueLength);
    };
    if (a.string_value) check_string(*a.string_value, Child(path, "string"));
    if (a.version_value) check_version(*a.version_value, Child(path, "version"));
    auto list = [&](size_t n, std::string_view field) {
      if (n == 0) Required(Child(path, field));
      *values += n;
    };
    if (a.ints) list(a.ints->size(), "ints");
    if (a.bools) list(a.bools->size(), "bools");
    if (a.strings) {
      list(a.strings->size(), "strings");
      for (size_t i = 0; i < a.strings->size(); ++i) {
        check_string((*a.strings)[i], Index(Child(path, "strings"), i));
      }
    }
    if (a.versions) {
      list(a.versions->size(), "versions");
      for (size_t i = 0; i < a.versions->size(); ++i) {
        check_version((*a.versions)[i], Index(Child(path, "versions"), i));
      }
    }
    if (!a.ints && !a.bools && !a.strings && !a.versions) *values += 1;
  }

  void RequestPolicy(const DeviceCapacity& cap, const std::string& path) {
    const CapacityRequestPolicy& rp = *cap.request_policy;
    const std::string p = Child(path, "requestPolicy");
    static const std::vector<Quantity> kNone;
    const std::vector<Quantity>& valid_values = rp.valid_values ? *rp.valid_values : kNone;
    if (!valid_values.empty() && rp.valid_range) {
      Invalid(p, "",
              "exactly one policy can be specified, cannot specify both validValues and "
              "validRange");
    }
    if (!valid_values.empty()) {
      const std::string vp = Child(p, "validValues");
      MaxItems(valid_values, kValidValuesMaxSize, vp);
      if (!rp.default_) Required(Child(p, "default"));
      bool found = false;
      for (size_t i = 0; i < valid_values.size(); ++i) {
        const Quantity& v = valid_values[i];
        if (i > 0 && v.Compare(valid_values[i - 1]) <= 0) {
          Invalid(Index(vp, i), v.ToString(), "values must be sorted in ascending order");
        }
        if (v.Compare(cap.value) > 0) {
          Invalid(Index(vp, i), v.ToString(), "option is larger than capacity value");
        }
        if (rp.default_ && v == *rp.default_) found = true;
      }
      if (rp.default_ && !found) {
        Invalid(Child(p, "default"), rp.default_->ToString(), "default value is not valid");
      }
    }
    if (rp.valid_range) {
      const CapacityRequestPolicyRange& r = *rp.valid_range;
      const Quantity min = r.min.value_or(Quantity());  // absent reads as zero, as before
      const std::string vp = Child(p, "validRange");
      if (!rp.default_) Required(Child(p, "default"));
      if (min.Compare(cap.value) > 0) {
        Invalid(Child(vp, "min"), min.ToString(), "min is larger than capacity value");
      }
      if (rp.default_ && rp.default_->Compare(min) < 0) {
        Invalid(Child(p, "default"), rp.default_->ToString(), "default is less than min");
      }
      if (r.max) {
        if (r.max->Compare(min) < 0) {
          Invalid(Child(vp, "max"), r.max->ToString(), "max is less than min");
        }
        if (r.max->Compare(cap.value) > 0) {
          Invalid(Child(vp, "max"), r.max->ToString(), "max is larger than capacity value");
        }
        if (rp.default_ && rp.default_->Compare(*r.max) > 0) {
          Invalid(Child(p, "default"), rp.default_->ToString(), "default is more than max");
        }
      }
      if (r.step && r.step->Sign() > 0) {
        if (min.Add(*r.step).Compare(cap.value) > 0) {
          Invalid(Child(vp, "step"), r.step->ToString(), "one step is larger than capacity");
        }
        // default and max must be min + n*step (upstream compares integer Value()s).
        auto on_step = [&](const Quantity& q) {
          std::optional<int64_t> qv = q.Sub(min).AsInt64();
          std::optional<int64_t> sv = r.step->AsInt64();
          return !qv || !sv || *sv == 0 || *qv % *sv == 0;
        };
        if (rp.default_ && !on_step(*rp.default_)) {
          Invalid(Child(p, "default"), rp.default_->ToString(), "default is not on a step");
        }
        if (r.max && !on_step(*r.max)) {
          Invalid(Child(vp, "max"), r.max->ToString(), "max is not on a step");
        }
      }
    }
  }

  void SliceDevice(const Device& d, const std::string& p, bool per_device_nodes) {
    DnsLabel(d.name, Child(p, "name"));
    if (d.attributes.size() + d.capacity.size() > kMaxAttributesAndCapacities) {
      Add(Child(p, "attributes"),
          "Too many: " + std::to_string(d.attributes.size() + d.capacity.size()) +
              ": the total number of attributes and capacities must not exceed " +
              std::to_string(kMaxAttributesAndCapacities));
    }
    size_t values = 0;
    for (const auto& [name, a] : d.attributes) {
      const std::string ap = Child(Child(p, "attributes"), name);
      QualifiedName(name, ap);
      Attribute(name, a, ap, &values);
    }
    if (values > kMaxAttributeValuesPerDevice) {
      Add(Child(p, "attributes"), "Too many: " + std::to_string(values) +
                                      ": the total number of attribute values must not exceed " +
                                      std::to_string(kMaxAttributeValuesPerDevice));
    }
    for (const auto& [name, c] : d.capacity) {
      const std::string cp = Child(Child(p, "capacity"), name);
      QualifiedName(name, cp);
      if (c.request_policy) {
        if (!d.allow_multiple_allocations.value_or(false)) {
          Forbidden(Child(cp, "requestPolicy"),
                    "allowed only when allowMultipleAllocations is true");
        }
        RequestPolicy(c, cp);
      }
    }
    const std::string ccp = Child(p, "consumesCounters");
    if (MaxItems(d.consumes_counters, kMaxDeviceCounterConsumptions, ccp)) {
      std::set<std::string> sets;
      for (size_t i = 0; i < d.consumes_counters.size(); ++i) {
        const DeviceCounterConsumption& c = d.consumes_counters[i];
        const std::string cp = Index(ccp, i);
        DnsLabel(c.counter_set, Child(cp, "counterSet"));
        if (!sets.insert(c.counter_set).second) Duplicate(Child(cp, "counterSet"), c.counter_set);
        Counters(c.counters, Child(cp, "counters"));
      }
    }
    int node_fields =
        d.node_name.has_value() + d.node_selector.has_value() + d.all_nodes.has_value();
    if (per_device_nodes) {
      if (node_fields != 1) {
        Invalid(p, d.name,
                "exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when "
                "`perDeviceNodeSelection` is set to true in the ResourceSlice spec");
      }
      if (d.node_name && d.node_name->empty()) Required(Child(p, "nodeName"));
      if (d.node_selector) NodeSelectorOneTerm(*d.node_selector, Child(p, "nodeSelector"));
      if (d.all_nodes && !*d.all_nodes) {
        Invalid(Child(p, "allNodes"), "false", "must be true if set");
      }
    } else if (node_fields != 0) {
      Invalid(p, d.name,
              "`nodeName`, `nodeSelector` and `allNodes` can only be set if "
              "`perDeviceNodeSelection` is set to true in the ResourceSlice spec");
    }
    const std::string tp = Child(p, "taints");
    if (MaxItems(d.taints, kDeviceTaintsMaxLength, tp)) {
      for (size_t i = 0; i < d.taints.size(); ++i) Taint(d.taints[i], Index(tp, i));
    }
    static const std::vector<std::string> kNoConditions;
    BindingConditions(d.binding_conditions ? *d.binding_conditions : kNoConditions,
                      d.binding_failure_conditions ? *d.binding_failure_conditions : kNoConditions,
                      p, true);
  }

  void Counters(const std::map<std::string, Counter>& counters, const std::string& path) {
    if (counters.empty()) return Required(path);
    if (counters.size() > kMaxCountersPerSet) {
      return TooMany(path, counters.size(), kMaxCountersPerSet);
    }
    for (const auto& [name, c] : counters) DnsLabel(name, Child(path, name));
  }

  void Slice(const ResourceSlice& obj) {
    DnsSubdomain(obj.metadata.name, "metadata.name");
    const ResourceSliceSpec& s = obj.spec;
    DriverName(s.driver, "spec.driver");
    PoolName(s.pool.name, "spec.pool.name");
    if (s.pool.generation < 0) {
      Invalid("spec.pool.generation", std::to_string(s.pool.generation),
              "must be greater than or equal to 0");
    }
    if (s.pool.resource_slice_count <= 0) {
      Invalid("spec.pool.resourceSliceCount", std::to_string(s.pool.resource_slice_count),
              "must be greater than zero");
    }
    int node_fields = s.node_name.has_value() + s.node_selector.has_value() +
                      s.all_nodes.has_value() + s.per_device_node_selection.has_value();
    if (node_fields != 1) {
      Invalid("spec", "",
              "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is "
              "required");
    }
    if (s.node_name && s.node_name->empty()) Required("spec.nodeName");
    if (s.node_selector) NodeSelectorOneTerm(*s.node_selector, "spec.nodeSelector");
    if (s.all_nodes && !*s.all_nodes) Invalid("spec.allNodes", "false", "must be true if set");
    if (s.per_device_node_selection && !*s.per_device_node_selection) {
      Invalid("spec.perDeviceNodeSelection", "false", "must be true if set");
    }
    if (!s.devices.empty() && !s.shared_counters.empty()) {
      Invalid("spec", "", "only one of `devices` or `sharedCounters` may be set");
    }
    bool advanced = false;
    for (const Device& d : s.devices) {
      bool lists = false;
      for (const auto& [n, a] : d.attributes) lists |= a.ints || a.bools || a.strings || a.versions;
      advanced |= !d.taints.empty() || !d.consumes_counters.empty() || lists;
    }
    const size_t max_devices = advanced ? kSliceMaxDevicesWithAdvancedFeatures : kSliceMaxDevices;
    if (MaxItems(s.devices, max_devices, "spec.devices")) {
      std::set<std::string> names;
      for (size_t i = 0; i < s.devices.size(); ++i) {
        const std::string p = Index("spec.devices", i);
        if (!names.insert(s.devices[i].name).second) {
          Duplicate(Child(p, "name"), s.devices[i].name);
        }
        SliceDevice(s.devices[i], p, s.per_device_node_selection.value_or(false));
      }
    }
    if (MaxItems(s.shared_counters, kSliceMaxCounterSets, "spec.sharedCounters")) {
      std::set<std::string> names;
      for (size_t i = 0; i < s.shared_counters.size(); ++i) {
        const std::string p = Index("spec.sharedCounters", i);
        DnsLabel(s.shared_counters[i].name, Child(p, "name"));
        if (!names.insert(s.shared_counters[i].name).second) {
          Duplicate(Child(p, "name"), s.shared_counters[i].name);
        }
        Counters(s.shared_counters[i].counters, Child(p, "counters"));
      }
    }
  }
};

bool IsDnsLabelImpl(std::string_view s, size_t max) {
  if (s.empty() || s.size() > max) return false;
  if (!IsAlnumLower(s.front()) || !IsAlnumLower(s.back())) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return IsAlnumLower(c) || c == '-'; });
}

}  // namespace

bool IsDnsLabel(std::string_view s) { return IsDnsLabelImpl(s, 63); }

bool IsDnsSubdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  size_t start = 0;
  while (true) {
    size_t dot = s.find('.', start);
    std::string_view part = s.substr(start, dot == std::string_view::npos ? s.npos : dot - start);
    if (!IsDnsLabelImpl(part, 253)) return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

bool IsCIdentifier(std::string_view s) {
  if (s.empty() || s.size() > kCIdentifierMaxLength) return false;
  auto head = [](char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; };
  if (!head(s[0])) return false;
  return std::all_of(s.begin(), s.end(), [&](char c) { return head(c) || IsAlnum(c); });
}

bool IsLabelValue(std::string_view s) {
  if (s.empty()) return true;
  if (s.size() > 63 || !IsAlnum(s.front()) || !IsAlnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return IsAlnum(c) || c == '-' || c == '_' || c == '.'; });
}

bool IsLabelName(std::string_view s) {
  std::string_view name = s;
  if (size_t slash = s.find('/'); slash != std::string_view::npos) {
    if (!IsDnsSubdomain(s.substr(0, slash))) return false;
    name = s.substr(slash + 1);
  }
  return !name.empty() && IsLabelValue(name);
}

bool IsQualifiedName(std::string_view s) {
  size_t slash = s.find('/');
  if (slash == std::string_view::npos) return IsCIdentifier(s);
  std::string domain(s.substr(0, slash));
  for (char& c : domain) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return domain.size() <= kDriverNameMaxLength && IsDnsSubdomain(domain) &&
         IsCIdentifier(s.substr(slash + 1));
}

bool IsFullyQualifiedName(std::string_view s) {
  return s.find('/') != std::string_view::npos && IsQualifiedName(s);
}

bool IsStrictSemver(std::string_view s) {
  // MAJOR.MINOR.PATCH without leading zeros, optional -prerelease and +build.
  size_t i = 0;
  auto number = [&] {
    size_t start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    size_t n = i - start;
    return n > 0 && !(n > 1 && s[start] == '0');
  };
  auto idents = [&](bool prerelease) {
    do {
      size_t start = i;
      bool numeric = true;
      while (i < s.size() && (IsAlnum(s[i]) || s[i] == '-')) {
        numeric &= s[i] >= '0' && s[i] <= '9';
        ++i;
      }
      if (i == start) return false;
      if (prerelease && numeric && i - start > 1 && s[start] == '0') return false;
    } while (i < s.size() && s[i] == '.' && ++i);
    return true;
  };
  if (!number() || i >= s.size() || s[i++] != '.') return false;
  if (!number() || i >= s.size() || s[i++] != '.') return false;
  if (!number()) return false;
  if (i < s.size() && s[i] == '-') {
    ++i;
    if (!idents(true)) return false;
  }
  if (i < s.size() && s[i] == '+') {
    ++i;
    if (!idents(false)) return false;
  }
  return i == s.size();
}

FieldErrors ValidateDeviceClass(const DeviceClass& obj) {
  Validator v;
  v.DnsSubdomain(obj.metadata.name, "metadata.name");
  v.Selectors(obj.spec.selectors, "spec.selectors");
  if (v.MaxItems(obj.spec.config, kDeviceConfigMaxSize, "spec.config")) {
    for (size_t i = 0; i < obj.spec.config.size(); ++i) {
      v.Opaque(obj.spec.config[i].opaque, Index("spec.config", i));
    }
  }
  if (obj.spec.extended_resource_name) {
    const std::string& n = *obj.spec.extended_resource_name;
    if (!IsLabelName(n) || n.find('/') == std::string::npos || n.starts_with("kubernetes.io/") ||
        n.starts_with("requests.")) {
      v.Invalid("spec.extendedResourceName", n, "must be a valid extended resource name");
    }
  }
  return v.errors;
}

FieldErrors ValidateResourceClaimSpec(const ResourceClaimSpec& spec, const std::string& path) {
  Validator v;
  v.ClaimSpec(spec, path);
  return v.errors;
}

FieldErrors ValidateResourceClaim(const ResourceClaim& obj) {
  Validator v;
  if (obj.metadata.name.empty() && obj.metadata.generate_name.empty()) {
    v.Required("metadata.name");
  } else if (!obj.metadata.name.empty()) {
    v.DnsSubdomain(obj.metadata.name, "metadata.name");
  }
  v.ClaimSpec(obj.spec, "spec");
  v.ClaimStatus(obj.status, obj.spec);
  return v.errors;
}

FieldErrors ValidateResourceClaimTemplate(const ResourceClaimTemplate& obj) {
  Validator v;
  v.DnsSubdomain(obj.metadata.name, "metadata.name");
  v.ClaimSpec(obj.spec.spec, "spec.spec");
  return v.errors;
}

FieldErrors ValidateResourceSlice(const ResourceSlice& obj) {
  Validator v;
  v.Slice(obj);
  return v.errors;
}

FieldErrors ValidateDeviceTaintRule(const DeviceTaintRule& obj) {
  Validator v;
  v.DnsSubdomain(obj.metadata.name, "metadata.name");
  if (obj.spec.device_selector) {
    const DeviceTaintSelector& s = *obj.spec.device_selector;
    if (s.driver) v.DriverName(*s.driver, "spec.deviceSelector.driver");
    if (s.pool) v.PoolName(*s.pool, "spec.deviceSelector.pool");
    if (s.device) v.DnsLabel(*s.device, "spec.deviceSelector.device");
  }
  v.Taint(obj.spec.taint, "spec.taint");
  v.MaxItems(obj.status.conditions, kDeviceStatusConditionsMaxSize, "status.conditions");
  return v.errors;
}

Status ToStatus(const FieldErrors& errors) {
  if (errors.empty()) return OkStatus();
  std::string msg;
  for (const FieldError& e : errors) {
    if (!msg.empty()) msg += "; ";
    msg += e.ToString();
  }
  return InvalidArgumentError(msg);
}

}  // namespace draco::api
