// Validator members for ResourceClaim (and template) specs and statuses: requests and
// subrequests, allocation modes, constraints, config, the allocation result, reservedFor and the
// per-device status (upstream pkg/apis/resource/validation).
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "controller/api/validation_internal.h"

namespace draco::api::validation_internal {

void Validator::AllocationModeAndCount(const std::string& mode, const std::optional<int64_t>& count,
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
    Unsupported(Child(path, "allocationMode"), mode, R"("All", "ExactCount")");
  }
}

void Validator::CapacityRequests(const std::optional<CapacityRequirements>& cap,
                                 const std::string& path) {
  if (!cap) return;
  for (const auto& [name, q] : cap->requests) {
    const std::string p = Child(Child(Child(path, "capacity"), "requests"), name);
    QualifiedName(name, p);
    if (q.Sign() < 0) Invalid(p, q.ToString(), "must be greater than or equal to 0");
  }
}

// Valid "<req>" / "<req>/<sub>" reference.
void Validator::RequestRef(const std::string& ref,
                           const std::map<std::string, std::set<std::string>>& reqs,
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

void Validator::ClaimSpec(const ResourceClaimSpec& spec, const std::string& spec_path) {
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

void Validator::RequestRefs(const std::vector<std::string>& refs,
                            const std::map<std::string, std::set<std::string>>& names,
                            const std::string& path) {
  if (!MaxItems(refs, kDeviceRequestsMaxSize, path)) return;
  std::set<std::string> seen;
  for (size_t j = 0; j < refs.size(); ++j) {
    if (!seen.insert(refs[j]).second) Duplicate(Index(path, j), refs[j]);
    RequestRef(refs[j], names, Index(path, j));
  }
}

void Validator::BindingConditions(const std::vector<std::string>& conds,
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

void Validator::ClaimStatus(const ResourceClaimStatus& st, const ResourceClaimSpec& spec) {
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
          Unsupported(Child(p, "source"), config[i].source, R"("FromClaim", "FromClass")");
        }
        RequestRefs(config[i].requests, names, Child(p, "requests"));
        Opaque(config[i].opaque, p);
      }
    }
    if (st.allocation->node_selector && st.allocation->node_selector->node_selector_terms.empty()) {
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

}  // namespace draco::api::validation_internal
