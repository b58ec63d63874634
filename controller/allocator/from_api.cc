#include "controller/allocator/from_api.h"

#include <utility>

#include "controller/allocator/allocator.h"

namespace draco::alloc {
namespace {

std::optional<Qty> OptQty(const std::optional<api::Quantity>& q) {
  if (!q) return std::nullopt;
  return Qty::FromQuantity(*q);
}

// A map keyed by name becomes a list sorted by name (std::map iterates in that order).
template <class T, class F>
std::vector<std::pair<std::string, Qty>> QtyList(const std::map<std::string, T>& m, F value) {
  std::vector<std::pair<std::string, Qty>> out;
  out.reserve(m.size());
  for (const auto& [name, v] : m) out.emplace_back(name, Qty::FromQuantity(value(v)));
  return out;
}

std::vector<std::pair<std::string, Qty>> Counters(const std::map<std::string, api::Counter>& m) {
  return QtyList(m, [](const api::Counter& c) -> const api::Quantity& { return c.value; });
}

std::vector<std::pair<std::string, Qty>> Quantities(const std::map<std::string, api::Quantity>& m) {
  return QtyList(m, [](const api::Quantity& q) -> const api::Quantity& { return q; });
}

std::vector<NodeSelectorRequirement> Requirements(
    const std::vector<api::NodeSelectorRequirement>& reqs) {
  std::vector<NodeSelectorRequirement> out;
  out.reserve(reqs.size());
  for (const auto& r : reqs) out.push_back({r.key, r.operator_, r.values});
  return out;
}

NodeSelector ToSelector(const api::NodeSelector& ns) {
  NodeSelector out;
  out.terms.reserve(ns.node_selector_terms.size());
  for (const auto& t : ns.node_selector_terms) {
    out.terms.push_back({Requirements(t.match_expressions), Requirements(t.match_fields)});
  }
  return out;
}

std::optional<NodeSelector> OptSelector(const std::optional<api::NodeSelector>& ns) {
  if (!ns) return std::nullopt;
  return ToSelector(*ns);
}

// The first member set, in this order; an empty list counts as
// unset; no member set leaves kind kNone.
Attribute ToAttribute(const api::DeviceAttribute& a) {
  Attribute out;
  if (a.int_value) {
    out.kind = Attribute::Kind::kInt;
    out.i = *a.int_value;
  } else if (a.bool_value) {
    out.kind = Attribute::Kind::kBool;
    out.b = *a.bool_value;
  } else if (a.string_value) {
    out.kind = Attribute::Kind::kString;
    out.s = *a.string_value;
  } else if (a.version_value) {
    out.kind = Attribute::Kind::kVersion;
    out.s = *a.version_value;
  } else if (a.ints && !a.ints->empty()) {
    out.kind = Attribute::Kind::kInts;
    out.ints = *a.ints;
  } else if (a.bools && !a.bools->empty()) {
    out.kind = Attribute::Kind::kBools;
    out.bools = *a.bools;
  } else if (a.strings && !a.strings->empty()) {
    out.kind = Attribute::Kind::kStrings;
    out.strs = *a.strings;
  } else if (a.versions && !a.versions->empty()) {
    out.kind = Attribute::Kind::kVersions;
    out.strs = *a.versions;
  }
  return out;
}

DeviceCapacity ToCapacity(const api::DeviceCapacity& c) {
  DeviceCapacity out;
  out.value = Qty::FromQuantity(c.value);
  if (c.request_policy) {
    const api::CapacityRequestPolicy& p = *c.request_policy;
    CapacityRequestPolicy rp;
    rp.default_value = OptQty(p.default_);
    if (p.valid_values) {
      rp.has_valid_values = true;
      rp.valid_values.reserve(p.valid_values->size());
      for (const auto& q : *p.valid_values) rp.valid_values.push_back(Qty::FromQuantity(q));
    }
    if (p.valid_range) {
      rp.valid_range = CapacityRange{OptQty(p.valid_range->min), OptQty(p.valid_range->max),
                                     OptQty(p.valid_range->step)};
    }
    out.request_policy = std::move(rp);
  }
  return out;
}

Device ToDevice(const api::Device& d) {
  Device out;
  out.name = d.name;
  out.attributes.reserve(d.attributes.size());
  for (const auto& [name, a] : d.attributes) out.attributes.emplace_back(name, ToAttribute(a));
  out.capacity.reserve(d.capacity.size());
  for (const auto& [name, c] : d.capacity) out.capacity.emplace_back(name, ToCapacity(c));
  out.consumes_counters.reserve(d.consumes_counters.size());
  for (const auto& cc : d.consumes_counters) {
    out.consumes_counters.push_back(
        {cc.counter_set, Counters(cc.counters), cc.compatibility_groups});
  }
  out.node_name = d.node_name;
  out.node_selector = OptSelector(d.node_selector);
  out.all_nodes = d.all_nodes;
  out.taints.reserve(d.taints.size());
  for (const auto& t : d.taints) out.taints.push_back({t.key, t.value, t.effect});
  out.binds_to_node = d.binds_to_node;
  out.binding_conditions = d.binding_conditions;
  out.binding_failure_conditions = d.binding_failure_conditions;
  out.allow_multiple_allocations = d.allow_multiple_allocations;
  return out;
}

OpaqueConfig ToOpaque(const api::OpaqueDeviceConfiguration& o) {
  return OpaqueConfig{o.driver, o.parameters.json};
}

std::vector<std::string> Selectors(const std::vector<api::DeviceSelector>& sels) {
  std::vector<std::string> out;
  out.reserve(sels.size());
  for (const auto& s : sels) out.push_back(s.cel ? s.cel->expression : std::string());
  return out;
}

std::vector<DeviceToleration> Tolerations(const std::vector<api::DeviceToleration>& ts) {
  std::vector<DeviceToleration> out;
  out.reserve(ts.size());
  for (const auto& t : ts) {
    out.push_back({t.key, t.operator_, t.value, t.effect, t.toleration_seconds});
  }
  return out;
}

// ExactDeviceRequest and DeviceSubRequest share these members.
template <class R>
RequestSpec ToSpec(const R& r, std::string name) {
  RequestSpec out;
  out.name = std::move(name);
  out.device_class_name = r.device_class_name;
  out.selectors = Selectors(r.selectors);
  out.allocation_mode = r.allocation_mode;
  out.count = r.count.value_or(0);
  out.tolerations = Tolerations(r.tolerations);
  if (r.capacity) {
    out.has_capacity = true;
    out.capacity_requests = Quantities(r.capacity->requests);
  }
  out.has_derived_attributes = !r.derived_attributes.empty();
  for (const auto& a : r.derived_attributes) {
    out.derived_attributes.emplace_back(a.name, a.expression);
  }
  return out;
}

std::vector<api::NodeSelectorRequirement> ApiRequirements(
    const std::vector<NodeSelectorRequirement>& reqs) {
  std::vector<api::NodeSelectorRequirement> out;
  out.reserve(reqs.size());
  for (const auto& r : reqs) {
    api::NodeSelectorRequirement req;
    req.key = r.key;
    req.operator_ = r.op;
    req.values = r.values;
    out.push_back(std::move(req));
  }
  return out;
}

}  // namespace

ResourceSlice ToAllocSlice(const api::ResourceSlice& slice) {
  const api::ResourceSliceSpec& spec = slice.spec;
  ResourceSlice out;
  out.name = slice.metadata.name;
  out.driver = spec.driver;
  out.pool = spec.pool.name;
  out.generation = spec.pool.generation;
  out.resource_slice_count = spec.pool.resource_slice_count;
  out.node_name = spec.node_name;
  out.node_selector = OptSelector(spec.node_selector);
  out.all_nodes = spec.all_nodes;
  out.per_device_node_selection = spec.per_device_node_selection;
  out.devices.reserve(spec.devices.size());
  for (const auto& d : spec.devices) out.devices.push_back(ToDevice(d));
  out.shared_counters.reserve(spec.shared_counters.size());
  for (const auto& cs : spec.shared_counters) {
    out.shared_counters.push_back({cs.name, Counters(cs.counters)});
  }
  out.skip_node_operations = spec.skip_node_operations;
  return out;
}

DeviceClass ToAllocClass(const api::DeviceClass& cls) {
  DeviceClass out;
  out.name = cls.metadata.name;
  out.labels = cls.metadata.labels;
  out.creation_timestamp = cls.metadata.creation_timestamp;
  out.selectors = Selectors(cls.spec.selectors);
  out.extended_resource_name = cls.spec.extended_resource_name.value_or("");
  for (const auto& c : cls.spec.config) {
    out.config_has_opaque.push_back(c.opaque.has_value());
    out.config.push_back(c.opaque ? ToOpaque(*c.opaque) : OpaqueConfig{});
  }
  return out;
}

AllocationResult ToAllocAllocationResult(const api::AllocationResult& result) {
  AllocationResult out;
  out.results.reserve(result.devices.results.size());
  for (const auto& r : result.devices.results) {
    DeviceRequestAllocationResult d;
    d.request = r.request;
    d.driver = r.driver;
    d.pool = r.pool;
    d.device = r.device;
    d.admin_access = r.admin_access;
    d.tolerations = Tolerations(r.tolerations);
    d.binding_conditions = r.binding_conditions;
    d.binding_failure_conditions = r.binding_failure_conditions;
    d.share_id = r.share_id;
    // The API model cannot tell `{}` from absent; both read as absent, as after api::Encode.
    d.has_consumed_capacity = !r.consumed_capacity.empty();
    d.consumed_capacity = Quantities(r.consumed_capacity);
    d.skip_node_operations = r.skip_node_operations;
    out.results.push_back(std::move(d));
  }
  for (const auto& c : result.devices.config) {
    AllocationConfig k;
    k.source = c.source;
    k.requests = c.requests;
    k.has_opaque = c.opaque.has_value();
    if (c.opaque) k.opaque = ToOpaque(*c.opaque);
    out.config.push_back(std::move(k));
  }
  out.node_selector = OptSelector(result.node_selector);
  return out;
}

ResourceClaim ToAllocClaimAsGiven(const api::ResourceClaim& claim) {
  ResourceClaim out;
  out.namespace_name = claim.metadata.namespace_;
  out.name = claim.metadata.name;
  out.uid = claim.metadata.uid;
  out.annotations = claim.metadata.annotations;
  const api::DeviceClaim& devices = claim.spec.devices;
  out.requests.reserve(devices.requests.size());
  for (const auto& r : devices.requests) {
    DeviceRequest req;
    req.name = r.name;
    if (r.exactly) {
      req.exactly = ToSpec(*r.exactly, r.name);
      req.exactly->admin_access = r.exactly->admin_access;
    }
    for (const auto& sub : r.first_available) req.first_available.push_back(ToSpec(sub, sub.name));
    out.requests.push_back(std::move(req));
  }
  for (const auto& c : devices.constraints) {
    out.constraints.push_back({c.requests, c.match_attribute, c.distinct_attribute});
  }
  for (const auto& c : devices.config) {
    ClaimConfig k;
    k.requests = c.requests;
    k.has_opaque = c.opaque.has_value();
    if (c.opaque) k.opaque = ToOpaque(*c.opaque);
    out.config.push_back(std::move(k));
  }
  if (claim.status.allocation) out.allocation = ToAllocAllocationResult(*claim.status.allocation);
  for (const auto& r : claim.status.reserved_for) out.reserved_for.push_back(r.name);
  return out;
}

ResourceClaim ToAllocClaim(const api::ResourceClaim& claim) {
  ResourceClaim out = ToAllocClaimAsGiven(claim);
  DefaultClaim(out);
  return out;
}

ResourceClaim ToAllocClaimTemplate(const api::ResourceClaimTemplate& tmpl) {
  api::ResourceClaim claim;
  claim.metadata.name = tmpl.metadata.name;
  claim.metadata.namespace_ = tmpl.metadata.namespace_;
  claim.spec = tmpl.spec.spec;
  return ToAllocClaim(claim);
}

DeviceTaintRule ToAllocTaintRule(const api::DeviceTaintRule& rule) {
  DeviceTaintRule out;
  out.name = rule.metadata.name;
  if (const auto& sel = rule.spec.device_selector) {
    out.has_selector = true;
    out.driver = sel->driver;
    out.pool = sel->pool;
    out.device = sel->device;
  }
  const api::DeviceTaint& t = rule.spec.taint;
  out.taint = {t.key, t.value, t.effect};
  return out;
}

Node ToAllocNode(const api::Node& node) {
  Node out;
  out.name = node.metadata.name;
  out.labels = node.metadata.labels;
  out.declared_features = node.status.declared_features;
  return out;
}

StatusOr<AllocationPolicy> ToAllocPolicy(const api::AllocationPolicy& policy) {
  AllocationPolicy p;
  p.name = policy.metadata.name;
  if (p.name.empty()) return InvalidArgumentError("AllocationPolicy: metadata.name is required");
  const std::string where = "AllocationPolicy " + p.name + ": ";
  if (!policy.spec) return InvalidArgumentError(where + "spec is required");
  const api::AllocationPolicySpec& spec = *policy.spec;
  if (!spec.device_class_selector) {
    return InvalidArgumentError(where + "spec.deviceClassSelector is required");
  }
  const api::DeviceClassSelector& sel = *spec.device_class_selector;
  p.class_names = sel.names;
  if (sel.label_selector) {
    p.has_label_selector = true;
    p.match_labels = sel.label_selector->match_labels;
    for (const auto& e : sel.label_selector->match_expressions) {
      if (e.operator_ != "In" && e.operator_ != "NotIn" && e.operator_ != "Exists" &&
          e.operator_ != "DoesNotExist") {
        return InvalidArgumentError(where + "unknown labelSelector operator \"" + e.operator_ +
                                    "\"");
      }
      p.match_expressions.push_back({e.key, e.operator_, e.values});
    }
  }
  if (p.class_names.has_value() == p.has_label_selector) {
    return InvalidArgumentError(
        where +
        "set exactly one of deviceClassSelector.names and deviceClassSelector.labelSelector");
  }
  if (spec.strategy.empty() || spec.strategy == "FirstFit") {
    p.strategy = Strategy::kFirstFit;
  } else if (spec.strategy == "BinPack") {
    p.strategy = Strategy::kBinPack;
  } else if (spec.strategy == "Spread") {
    p.strategy = Strategy::kSpread;
  } else {
    return InvalidArgumentError(where + "unknown strategy \"" + spec.strategy + "\"");
  }
  p.priority = static_cast<int32_t>(spec.priority);
  for (const auto& l : spec.namespace_limits) {
    if (l.namespace_.empty()) {
      return InvalidArgumentError(where + "namespaceLimits entry without namespace");
    }
    p.namespace_limits.push_back({l.namespace_, l.max_devices, Quantities(l.max_capacity)});
  }
  return p;
}

api::AllocationResult ToApiAllocationResult(const AllocationResult& result) {
  api::AllocationResult out;
  out.devices.results.reserve(result.results.size());
  for (const auto& d : result.results) {
    api::DeviceRequestAllocationResult r;
    r.request = d.request;
    r.driver = d.driver;
    r.pool = d.pool;
    r.device = d.device;
    r.admin_access = d.admin_access;
    for (const auto& t : d.tolerations) {
      api::DeviceToleration at;
      at.key = t.key;
      at.operator_ = t.op;
      at.value = t.value;
      at.effect = t.effect;
      at.toleration_seconds = t.toleration_seconds;
      r.tolerations.push_back(std::move(at));
    }
    r.binding_conditions = d.binding_conditions;
    r.binding_failure_conditions = d.binding_failure_conditions;
    r.share_id = d.share_id;
    for (const auto& [name, q] : d.consumed_capacity) r.consumed_capacity[name] = q.q;
    r.skip_node_operations = d.skip_node_operations;
    out.devices.results.push_back(std::move(r));
  }
  for (const auto& c : result.config) {
    api::DeviceAllocationConfiguration k;
    k.source = c.source;
    k.requests = c.requests;
    if (c.has_opaque) {
      k.opaque.emplace();
      k.opaque->driver = c.opaque.driver;
      k.opaque->parameters.json = c.opaque.parameters_json;
    }
    out.devices.config.push_back(std::move(k));
  }
  if (result.node_selector) {
    api::NodeSelector ns;
    for (const auto& t : result.node_selector->terms) {
      api::NodeSelectorTerm term;
      term.match_expressions = ApiRequirements(t.match_expressions);
      term.match_fields = ApiRequirements(t.match_fields);
      ns.node_selector_terms.push_back(std::move(term));
    }
    out.node_selector = std::move(ns);
  }
  return out;
}

}  // namespace draco::alloc
