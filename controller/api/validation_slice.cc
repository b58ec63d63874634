// Validator members for ResourceSlice: pool and node selection, devices (attributes, capacity
// and its request policy, counters, taints) and shared counter sets (upstream
// pkg/apis/resource/validation).
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "controller/api/validation_internal.h"

namespace draco::api::validation_internal {

void Validator::NodeSelectorOneTerm(const NodeSelector& sel, const std::string& path) {
  if (sel.node_selector_terms.size() != 1) {
    Invalid(Child(path, "nodeSelectorTerms"), std::to_string(sel.node_selector_terms.size()),
            "must have exactly one node selector term");
  }
}

void Validator::Attribute(const std::string& name, const DeviceAttribute& a,
                          const std::string& path, size_t* values) {
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

void Validator::RequestPolicy(const DeviceCapacity& cap, const std::string& path) {
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

void Validator::SliceDevice(const Device& d, const std::string& p, bool per_device_nodes) {
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
        Forbidden(Child(cp, "requestPolicy"), "allowed only when allowMultipleAllocations is true");
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
  int node_fields = d.node_name.has_value() + d.node_selector.has_value() + d.all_nodes.has_value();
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
                    d.binding_failure_conditions ? *d.binding_failure_conditions : kNoConditions, p,
                    true);
}

void Validator::Counters(const std::map<std::string, Counter>& counters, const std::string& path) {
  if (counters.empty()) return Required(path);
  if (counters.size() > kMaxCountersPerSet) {
    return TooMany(path, counters.size(), kMaxCountersPerSet);
  }
  for (const auto& [name, c] : counters) DnsLabel(name, Child(path, name));
}

void Validator::Slice(const ResourceSlice& obj) {
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

}  // namespace draco::api::validation_internal
