#include "controller/api/codec.h"

#include <charconv>
#include <cmath>
#include <exception>
#include <type_traits>

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <yaml-cpp/yaml.h>

#include "controller/api/policy_types.h"
#include "controller/api/storage_types.h"
#include "controller/api/version_convert.h"
#include "controller/api/workload_types.h"

namespace draco::api {
namespace {

using rapidjson::Value;
using Allocator = rapidjson::Document::AllocatorType;

// ---------------------------------------------------------------------------------------------
// Field lists: the single place that maps C++ members to JSON names.

template <class V>
void Fields(V& v, OwnerReference& o) {
  v("apiVersion", o.api_version);
  v("kind", o.kind);
  v("name", o.name);
  v("uid", o.uid);
  v("controller", o.controller);
  v("blockOwnerDeletion", o.block_owner_deletion);
}
template <class V>
void Fields(V& v, ObjectMeta& o) {
  v("name", o.name);
  v("generateName", o.generate_name);
  v("namespace", o.namespace_);
  v("uid", o.uid);
  v("resourceVersion", o.resource_version);
  v("generation", o.generation);
  v("creationTimestamp", o.creation_timestamp);
  v("deletionTimestamp", o.deletion_timestamp);
  v("deletionGracePeriodSeconds", o.deletion_grace_period_seconds);
  v("labels", o.labels);
  v("annotations", o.annotations);
  v("ownerReferences", o.owner_references);
  v("finalizers", o.finalizers);
}
template <class V>
void Fields(V& v, Condition& o) {
  v("type", o.type);
  v("status", o.status);
  v("observedGeneration", o.observed_generation);
  v("lastTransitionTime", o.last_transition_time);
  v("reason", o.reason);
  v("message", o.message);
}
template <class V>
void Fields(V& v, NodeSelectorRequirement& o) {
  v("key", o.key);
  v("operator", o.operator_);
  v("values", o.values);
}
template <class V>
void Fields(V& v, NodeSelectorTerm& o) {
  v("matchExpressions", o.match_expressions);
  v("matchFields", o.match_fields);
}
template <class V>
void Fields(V& v, NodeSelector& o) {
  v("nodeSelectorTerms", o.node_selector_terms);
}
template <class V>
void Fields(V& v, Taint& o) {
  v("key", o.key);
  v("value", o.value);
  v("effect", o.effect);
  v("timeAdded", o.time_added);
}
template <class V>
void Fields(V& v, Toleration& o) {
  v("key", o.key);
  v("operator", o.operator_);
  v("value", o.value);
  v("effect", o.effect);
  v("tolerationSeconds", o.toleration_seconds);
}
template <class V>
void Fields(V& v, PodResourceClaim& o) {
  v("name", o.name);
  v("resourceClaimName", o.resource_claim_name);
  v("resourceClaimTemplateName", o.resource_claim_template_name);
}
template <class V>
void Fields(V& v, PodSchedulingGate& o) {
  v("name", o.name);
}
template <class V>
void Fields(V& v, PodSchedulingGroup& o) {
  v("podGroupName", o.pod_group_name);
}
template <class V>
void Fields(V& v, ResourceClaimRef& o) {
  v("name", o.name);
  v("request", o.request);
}
template <class V>
void Fields(V& v, ResourceRequirements& o) {
  v("limits", o.limits);
  v("requests", o.requests);
  v("claims", o.claims);
}
template <class V>
void Fields(V& v, Container& o) {
  v("name", o.name);
  v("image", o.image);
  v("resources", o.resources);
  v("restartPolicy", o.restart_policy);
  v("ports", o.ports);
}
template <class V>
void Fields(V& v, NodeAffinity& o) {
  v("requiredDuringSchedulingIgnoredDuringExecution",
    o.required_during_scheduling_ignored_during_execution);
}
template <class V>
void Fields(V& v, Affinity& o) {
  v("nodeAffinity", o.node_affinity);
  v("podAffinity", o.pod_affinity);
  v("podAntiAffinity", o.pod_anti_affinity);
}
template <class V>
void Fields(V& v, PodSpec& o) {
  v("nodeName", o.node_name);
  v("nodeSelector", o.node_selector);
  v("affinity", o.affinity);
  v("tolerations", o.tolerations);
  v("schedulingGates", o.scheduling_gates);
  v("resourceClaims", o.resource_claims);
  v("initContainers", o.init_containers);
  v("containers", o.containers);
  v("schedulerName", o.scheduler_name);
  v("overhead", o.overhead);
  v("resources", o.resources);
  v("topologySpreadConstraints", o.topology_spread_constraints);
  v("volumes", o.volumes);
  v("schedulingGroup", o.scheduling_group);
}
template <class V>
void Fields(V& v, PodResourceClaimStatus& o) {
  v("name", o.name);
  v("resourceClaimName", o.resource_claim_name);
}
template <class V>
void Fields(V& v, ContainerExtendedResourceRequest& o) {
  v("containerName", o.container_name);
  v("resourceName", o.resource_name);
  v("requestName", o.request_name);
}
template <class V>
void Fields(V& v, PodExtendedResourceClaimStatus& o) {
  v("requestMappings", o.request_mappings);
  v("resourceClaimName", o.resource_claim_name);
}
template <class V>
void Fields(V& v, PodStatus& o) {
  v("phase", o.phase);
  v("resourceClaimStatuses", o.resource_claim_statuses);
  v("nominatedNodeName", o.nominated_node_name);
  v("conditions", o.conditions);
  v("initContainerStatuses", o.init_container_statuses);
  v("containerStatuses", o.container_statuses);
  v("extendedResourceClaimStatus", o.extended_resource_claim_status);
}
template <class V>
void Fields(V& v, Pod& o) {
  v("apiVersion", o.api_version);
  v("kind", o.kind);
  v("metadata", o.metadata);
  v("spec", o.spec);
  v("status", o.status);
}
template <class V>
void Fields(V& v, NodeCondition& o) {
  v("type", o.type);
  v("status", o.status);
  v("lastHeartbeatTime", o.last_heartbeat_time);
  v("lastTransitionTime", o.last_transition_time);
  v("reason", o.reason);
  v("message", o.message);
}
template <class V>
void Fields(V& v, NodeSpec& o) {
  v("unschedulable", o.unschedulable);
  v("taints", o.taints);
  v("providerID", o.provider_id);
}
template <class V>
void Fields(V& v, NodeStatus& o) {
  v("capacity", o.capacity);
  v("allocatable", o.allocatable);
  v("conditions", o.conditions);
  v("declaredFeatures", o.declared_features);
}
template <class V>
void Fields(V& v, Node& o) {
  v("apiVersion", o.api_version);
  v("kind", o.kind);
  v("metadata", o.metadata);
  v("spec", o.spec);
  v("status", o.status);
}
template <class V>
void Fields(V& v, CELDeviceSelector& o) {
  v("expression", o.expression);
}
template <class V>
void Fields(V& v, DeviceSelector& o) {
  v("cel", o.cel);
}
template <class V>
void Fields(V& v, OpaqueDeviceConfiguration& o) {
  v("driver", o.driver);
  v("parameters", o.parameters);
}
template <class V>
void Fields(V& v, DeviceToleration& o) {
  v("key", o.key);
  v("operator", o.operator_);
  v("value", o.value);
  v("effect", o.effect);
  v("tolerationSeconds", o.toleration_seconds);
}
template <class V>
void Fields(V& v, DeviceTaint& o) {
  v("key", o.key);
  v("value", o.value);
  v("effect", o.effect);
  v("timeAdded", o.time_added);
}
template <class V>
void Fields(V& v, DeviceClassConfiguration& o) {
  v("opaque", o.opaque);
}
template <class V>
void Fields(V& v, DeviceClassSpec& o) {
  v("selectors", o.selectors);
  v("config", o.config);
  v("extendedResourceName", o.extended_resource_name);
}
template <class V>
void Fields(V& v, DeviceClass& o) {
  v("apiVersion", o.api_version);
  v("kind", o.kind);
  v("metadata", o.metadata);
  v("spec", o.spec);
}
template <class V>
void Fields(V& v, CapacityRequirements& o) {
  v("requests", o.requests);
}
template <class V>
void Fields(V& v, DerivedAttribute& o) {
  v("name", o.name);
  v("expression", o.expression);
}
template <class V>
void Fields(V& v, ExactDeviceRequest& o) {
  v("deviceClassName", o.device_class_name);
  v("selectors", o.selectors);
  v("allocationMode", o.allocation_mode);
  v("count", o.count);
  v("adminAccess", o.admin_access);
  v("tolerations", o.tolerations);
  v("capacity", o.capacity);
  v("derivedAttributes", o.derived_attributes);
}
template <class V>
void Fields(V& v, DeviceSubRequest& o) {
  v("name", o.name);
  v("deviceClassName", o.device_class_name);
  v("selectors", o.selectors);
  v("allocationMode", o.allocation_mode);
  v("count", o.count);
  v("tolerations", o.tolerations);
  v("capacity", o.capacity);
  v("derivedAttributes", o.derived_attributes);
}
template <class V>
void Fields(V& v, DeviceRequest& o) {
  v("name", o.name);
  v("exactly", o.exactly);
  v("firstAvailable", o.first_available);
}
template <class V>
void Fields(V& v, DeviceConstraint& o) {
  v("requests", o.requests);
  v("matchAttribute", o.match_attribute);
  v("distinctAttribute", o.distinct_attribute);
}
template <class V>
void Fields(V& v, DeviceClaimConfiguration& o) {
  v("requests", o.requests);
  v("opaque", o.opaque);
}
template <class V>
void Fields(V& v, DeviceClaim& o) {
  v("requests", o.requests);
  v("constraints", o.constraints);
  v("config", o.config);
}
template <class V>
void Fields(V& v, ResourceClaimSpec& o) {
  v("devices", o.devices);
}
template <class V>
void Fields(V& v, DeviceRequestAllocationResult& o) {
  v("request", o.request);
  v("driver", o.driver);
  v("pool", o.pool);
  v("device", o.device);
  v("adminAccess", o.admin_access);
  v("tolerations", o.tolerations);
  v("bindingConditions", o.binding_conditions);
  v("bindingFailureConditions", o.binding_failure_conditions);
  v("shareID", o.share_id);
  v("consumedCapacity", o.consumed_capacity);
  v("skipNodeOperations", o.skip_node_operations);
}
template <class V>
void Fields(V& v, DeviceAllocationConfiguration& o) {
  v("source", o.source);
  v("requests", o.requests);
  v("opaque", o.opaque);
}
template <class V>
void Fields(V& v, DeviceAllocationResult& o) {
  v("results", o.results);
  v("config", o.config);
}
template <class V>
void Fields(V& v, AllocationResult& o) {
  v("devices", o.devices);
  v("nodeSelector", o.node_selector);
  v("allocationTimestamp", o.allocation_timestamp);
}
template <class V>
void Fields(V& v, ResourceClaimConsumerReference& o) {
  v("apiGroup", o.api_group);
  v("resource", o.resource);
  v("name", o.name);
  v("uid", o.uid);
}
template <class V>
void Fields(V& v, NetworkDeviceData& o) {
  v("interfaceName", o.interface_name);
  v("ips", o.ips);
  v("hardwareAddress", o.hardware_address);
}
template <class V>
void Fields(V& v, AllocatedDeviceStatus& o) {
  v("driver", o.driver);
  v("pool", o.pool);
  v("device", o.device);
  v("shareID", o.share_id);
  v("conditions", o.conditions);
  v("data", o.data);
  v("networkData", o.network_data);
}
template <class V>
void Fields(V& v, ResourceClaimStatus& o) {
  v("allocation", o.allocation);
  v("reservedFor", o.reserved_for);
  v("devices", o.devices);
}
template <class V>
void Fields(V& v, ResourceClaim& o) {
  v("apiVersion", o.api_version);
  v("kind", o.kind);
  v("metadata", o.metadata);
  v("spec", o.spec);
  v("status", o.status);
}
template <class V>
void Fields(V& v, ResourceClaimTemplateSpec& o) {
  v("metadata", o.metadata);
  v("spec", o.spec);
}
template <class V>
void Fields(V& v, ResourceClaimTemplate& o) {
  v("apiVersion", o.api_version);
  v("kind", o.kind);
  v("metadata", o.metadata);
  v("spec", o.spec);
}
template <class V>
void Fields(V& v, ResourcePool& o) {
  v("name", o.name);
  v("generation", o.generation);
  v("resourceSliceCount", o.resource_slice_count);
}
template <class V>
void Fields(V& v, DeviceAttribute& o) {
  v("int", o.int_value);
  v("bool", o.bool_value);
  v("string", o.string_value);
  v("version", o.version_value);
  v("ints", o.ints);
  v("bools", o.bools);
  v("strings", o.strings);
  v("versions", o.versions);
}
template <class V>
void Fields(V& v, CapacityRequestPolicyRange& o) {
  v("min", o.min);
  v("max", o.max);
  v("step", o.step);
}
template <class V>
void Fields(V& v, CapacityRequestPolicy& o) {
  v("default", o.default_);
  v("validValues", o.valid_values);
  v("validRange", o.valid_range);
}
template <class V>
void Fields(V& v, DeviceCapacity& o) {
  v("value", o.value);
  v("requestPolicy", o.request_policy);
}
template <class V>
void Fields(V& v, Counter& o) {
  v("value", o.value);
}
template <class V>
void Fields(V& v, CounterSet& o) {
  v("name", o.name);
  v("counters", o.counters);
}
template <class V>
void Fields(V& v, DeviceCounterConsumption& o) {
  v("counterSet", o.counter_set);
  v("counters", o.counters);
  v("compatibilityGroups", o.compatibility_groups);
}
template <class V>
void Fields(V& v, Device& o) {
  v("name", o.name);
  v("attributes", o.attributes);
  v("capacity", o.capacity);
  v("consumesCounters", o.consumes_counters);
  v("nodeName", o.node_name);
  v("nodeSelector", o.node_selector);
  v("allNodes", o.all_nodes);
  v("taints", o.taints);
  v("bindsToNode", o.binds_to_node);
  v("bindingConditions", o.binding_conditions);
  v("bindingFailureConditions", o.binding_failure_conditions);
  v("allowMultipleAllocations", o.allow_multiple_allocations);
}
template <class V>
void Fields(V& v, ResourceSliceSpec& o) {
  v("driver", o.driver);
  v("pool", o.pool);
  v("nodeName", o.node_name);
  v("nodeSelector", o.node_selector);
  v("allNodes", o.all_nodes);
  v("devices", o.devices);
  v("perDeviceNodeSelection", o.per_device_node_selection);
  v("sharedCounters", o.shared_counters);
  v("skipNodeOperations", o.skip_node_operations);
}
template <class V>
void Fields(V& v, ResourceSlice& o) {
  v("apiVersion", o.api_version);
  v("kind", o.kind);
  v("metadata", o.metadata);
  v("spec", o.spec);
}
template <class V>
void Fields(V& v, DeviceTaintSelector& o) {
  v("driver", o.driver);
  v("pool", o.pool);
  v("device", o.device);
}
template <class V>
void Fields(V& v, DeviceTaintRuleSpec& o) {
  v("deviceSelector", o.device_selector);
  v("taint", o.taint);
}
template <class V>
void Fields(V& v, DeviceTaintRuleStatus& o) {
  v("conditions", o.conditions);
}
template <class V>
void Fields(V& v, DeviceTaintRule& o) {
  v("apiVersion", o.api_version);
  v("kind", o.kind);
  v("metadata", o.metadata);
  v("spec", o.spec);
  v("status", o.status);
}

#include "controller/api/codec_policy_fields.inc"
#include "controller/api/codec_scheduling_fields.inc"

struct ProbeVisitor {
  template <class F>
  void operator()(std::string_view, F&) {}
};
template <class T>
concept ApiStruct = requires(T& t, ProbeVisitor& p) {
  Fields(p, t);
  t.unknown;
};
template <class T>
struct IsOptional : std::false_type {};
template <class T>
struct IsOptional<std::optional<T>> : std::true_type {};
template <class T>
struct IsVector : std::false_type {};
template <class T>
struct IsVector<std::vector<T>> : std::true_type {};
template <class T>
struct IsMap : std::false_type {};
template <class T>
struct IsMap<std::map<std::string, T>> : std::true_type {};

std::string Compact(const Value& v) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  v.Accept(w);
  return std::string(buf.GetString(), buf.GetSize());
}

// A field path, built lazily while decoding: each segment lives on the decoder's stack and points
// to its parent; the text ("spec.devices.requests[0].name") is made only when decoding fails (a
// string per decoded field was a large share of decoding a watch event).
struct Path {
  const Path* parent = nullptr;
  std::string_view name;  // member name; unused when index >= 0
  int64_t index = -1;     // array index

  std::string Str() const {
    std::vector<const Path*> chain;
    for (const Path* p = this; p != nullptr && (p->parent != nullptr || !p->name.empty());
         p = p->parent) {
      chain.push_back(p);
    }
    std::string out;
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      if ((*it)->index >= 0) {
        out += "[" + std::to_string((*it)->index) + "]";
      } else {
        if (!out.empty()) out += '.';
        out += (*it)->name;
      }
    }
    return out;
  }
};

std::string_view TrimSpace(std::string_view s) {
  constexpr std::string_view kSpace = " \t\n\v\f\r";
  size_t b = s.find_first_not_of(kSpace);
  if (b == std::string_view::npos) return {};
  size_t e = s.find_last_not_of(kSpace);
  return s.substr(b, e - b + 1);
}

std::string NumberText(const Value& v) {
  if (v.IsInt64()) return std::to_string(v.GetInt64());
  if (v.IsUint64()) return std::to_string(v.GetUint64());
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), v.GetDouble());
  return std::string(buf, r.ptr);
}

// Nesting depth of a DOM value, computed without recursion.
int Depth(const Value& root) {
  struct Item {
    const Value* v;
    int depth;
  };
  std::vector<Item> stack = {{&root, 1}};
  int max_depth = 0;
  while (!stack.empty()) {
    Item it = stack.back();
    stack.pop_back();
    max_depth = std::max(max_depth, it.depth);
    if (max_depth > kMaxNestingDepth) return max_depth;
    if (it.v->IsArray()) {
      for (const Value& e : it.v->GetArray()) stack.push_back({&e, it.depth + 1});
    } else if (it.v->IsObject()) {
      for (const auto& m : it.v->GetObject()) stack.push_back({&m.value, it.depth + 1});
    }
  }
  return max_depth;
}

// ---------------------------------------------------------------------------------------------
// Decoding

class Decoder {
 public:
  Status status;

  void Fail(const Path& path, std::string_view what) {
    if (status.ok()) {
      std::string p = path.Str();
      status = InvalidArgumentError(p.empty() ? std::string(what) : p + ": " + std::string(what));
    }
  }

  void Decode(const Value& v, std::string& out, const Path& path) {
    if (!v.IsString()) return Fail(path, "expected string");
    out.assign(v.GetString(), v.GetStringLength());
  }
  void Decode(const Value& v, int64_t& out, const Path& path) {
    if (!v.IsInt64()) return Fail(path, "expected integer");
    out = v.GetInt64();
  }
  void Decode(const Value& v, bool& out, const Path& path) {
    if (!v.IsBool()) return Fail(path, "expected boolean");
    out = v.GetBool();
  }
  void Decode(const Value& v, Quantity& out, const Path& path) {
    std::string text;
    if (v.IsString()) {
      text = std::string(TrimSpace(std::string_view(v.GetString(), v.GetStringLength())));
    } else if (v.IsNumber()) {
      text = NumberText(v);
    } else {
      return Fail(path, "expected quantity string");
    }
    StatusOr<Quantity> q = Quantity::Parse(text);
    if (!q.ok()) return Fail(path, q.status().message());
    out = std::move(q).value();
  }
  void Decode(const Value& v, RawJson& out, const Path&) { out.json = Compact(v); }

  template <class T>
  void Decode(const Value& v, std::optional<T>& out, const Path& path) {
    out.emplace();
    Decode(v, *out, path);
  }
  template <class T>
  void Decode(const Value& v, std::vector<T>& out, const Path& path) {
    if (!v.IsArray()) return Fail(path, "expected array");
    out.clear();
    out.reserve(v.Size());
    int64_t i = 0;
    for (const Value& e : v.GetArray()) {
      T item{};
      Decode(e, item, Path{&path, {}, i++});
      if (!status.ok()) return;
      out.push_back(std::move(item));
    }
  }
  template <class T>
  void Decode(const Value& v, std::map<std::string, T>& out, const Path& path) {
    if (!v.IsObject()) return Fail(path, "expected object");
    out.clear();
    for (const auto& m : v.GetObject()) {
      std::string key(m.name.GetString(), m.name.GetStringLength());
      if (m.value.IsNull()) continue;
      T item{};
      Decode(m.value, item, Path{&path, key, -1});
      if (!status.ok()) return;
      out[key] = std::move(item);  // last duplicate wins, as in Go
    }
  }
  template <ApiStruct T>
  void Decode(const Value& v, T& out, const Path& path) {
    if (!v.IsObject()) return Fail(path, "expected object");
    FieldDecoder fd{*this, v, path, {}};
    Fields(fd, out);
    if (!status.ok()) return;
    out.unknown.members.clear();
    for (const auto& m : v.GetObject()) {
      std::string_view name(m.name.GetString(), m.name.GetStringLength());
      if (std::find(fd.known.begin(), fd.known.end(), name) == fd.known.end()) {
        out.unknown.members.emplace_back(std::string(name), Compact(m.value));
      }
    }
  }

 private:
  struct FieldDecoder {
    Decoder& d;
    const Value& obj;
    const Path& path;
    std::vector<std::string_view> known;
    template <class F>
    void operator()(std::string_view name, F& field) {
      known.push_back(name);
      if (!d.status.ok()) return;
      // Go uses the last of duplicate members; scan for it.
      const Value* found = nullptr;
      for (const auto& m : obj.GetObject()) {
        if (std::string_view(m.name.GetString(), m.name.GetStringLength()) == name) {
          found = &m.value;
        }
      }
      if (found == nullptr || found->IsNull()) return;
      d.Decode(*found, field, Path{&path, name, -1});
    }
  };
};

// ---------------------------------------------------------------------------------------------
// Encoding

class Encoder {
 public:
  explicit Encoder(Allocator& a) : a_(a) {}

  // Each Encode returns false when the value is omitted (empty and not forced).
  bool Encode(const std::string& s, Value& out, bool force) {
    if (s.empty() && !force) return false;
    out.SetString(s.data(), static_cast<rapidjson::SizeType>(s.size()), a_);
    return true;
  }
  bool Encode(const int64_t& i, Value& out, bool force) {
    if (i == 0 && !force) return false;
    out.SetInt64(i);
    return true;
  }
  bool Encode(const bool& b, Value& out, bool force) {
    if (!b && !force) return false;
    out.SetBool(b);
    return true;
  }
  bool Encode(const Quantity& q, Value& out, bool) {
    std::string s = q.ToString();
    out.SetString(s.data(), static_cast<rapidjson::SizeType>(s.size()), a_);
    return true;
  }
  bool Encode(const RawJson& r, Value& out, bool) {
    if (r.empty()) return false;
    return ParseRaw(r.json, out);
  }
  template <class T>
  bool Encode(const std::optional<T>& o, Value& out, bool) {
    if (!o) return false;
    return Encode(*o, out, true);
  }
  template <class T>
  bool Encode(const std::vector<T>& vec, Value& out, bool force) {
    if (vec.empty() && !force) return false;
    out.SetArray();
    for (const T& e : vec) {
      Value item;
      if (!Encode(e, item, true)) item.SetNull();
      out.PushBack(item, a_);
    }
    return true;
  }
  template <class T>
  bool Encode(const std::map<std::string, T>& m, Value& out, bool force) {
    if (m.empty() && !force) return false;
    out.SetObject();
    for (const auto& [k, e] : m) {
      Value item;
      if (!Encode(e, item, true)) item.SetNull();
      out.AddMember(Value(k.data(), static_cast<rapidjson::SizeType>(k.size()), a_), item, a_);
    }
    return true;
  }
  template <ApiStruct T>
  bool Encode(const T& obj, Value& out, bool force) {
    out.SetObject();
    FieldEncoder fe{*this, out};
    Fields(fe, const_cast<T&>(obj));  // NOLINT: Fields is shared with the decoder; read-only here
    for (const auto& [name, json] : obj.unknown.members) {
      Value item;
      if (!ParseRaw(json, item)) continue;
      out.AddMember(Value(name.data(), static_cast<rapidjson::SizeType>(name.size()), a_), item,
                    a_);
    }
    return force || out.MemberCount() > 0;
  }

 private:
  bool ParseRaw(const std::string& json, Value& out) {
    rapidjson::Document doc(&a_);
    doc.Parse<rapidjson::kParseIterativeFlag | rapidjson::kParseFullPrecisionFlag>(json.data(),
                                                                                   json.size());
    if (doc.HasParseError()) return false;
    out.CopyFrom(doc, a_);
    return true;
  }

  struct FieldEncoder {
    Encoder& e;
    Value& obj;
    template <class F>
    void operator()(std::string_view name, const F& field) {
      Value v;
      if (!e.Encode(field, v, false)) return;
      obj.AddMember(Value(name.data(), static_cast<rapidjson::SizeType>(name.size()), e.a_), v,
                    e.a_);
    }
  };

  Allocator& a_;
};

Status ParseJson(std::string_view json, rapidjson::Document& doc) {
  doc.Parse<rapidjson::kParseIterativeFlag | rapidjson::kParseFullPrecisionFlag>(json.data(),
                                                                                 json.size());
  if (doc.HasParseError()) {
    return InvalidArgumentError("invalid JSON at offset " + std::to_string(doc.GetErrorOffset()) +
                                ": " + rapidjson::GetParseError_En(doc.GetParseError()));
  }
  if (Depth(doc) > kMaxNestingDepth) {
    return InvalidArgumentError("JSON nesting deeper than " + std::to_string(kMaxNestingDepth));
  }
  return OkStatus();
}

// Like kubectl's YAML-or-JSON decoder: input whose first non-blank character is '{' is JSON and is
// parsed with RapidJSON only. This also keeps malformed JSON away from yaml-cpp 0.7, which can loop
// forever on some broken flow collections (found by the codec fuzzer).
bool LooksLikeJson(std::string_view text) {
  for (char c : text) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
    return c == '{';
  }
  return false;
}

template <class T>
StatusOr<T> DecodeValue(const Value& v) {
  Decoder d;
  T out{};
  d.Decode(v, out, Path{});
  if (!d.status.ok()) return d.status;
  return out;
}

// ---------------------------------------------------------------------------------------------
// YAML -> JSON

class YamlConverter {
 public:
  explicit YamlConverter(Allocator& a) : a_(a) {}
  Status status;

  void Convert(const YAML::Node& node, Value& out, int depth) {
    if (!status.ok()) return;
    if (depth > kMaxNestingDepth) {
      status = InvalidArgumentError("YAML nesting deeper than " + std::to_string(kMaxNestingDepth));
      return;
    }
    if (++nodes_ > kMaxYamlNodes) {
      status = InvalidArgumentError("YAML document expands to more than " +
                                    std::to_string(kMaxYamlNodes) + " nodes");
      return;
    }
    switch (node.Type()) {
      case YAML::NodeType::Undefined:
      case YAML::NodeType::Null:
        out.SetNull();
        return;
      case YAML::NodeType::Scalar:
        return Scalar(node, out);
      case YAML::NodeType::Sequence:
        out.SetArray();
        for (const YAML::Node& e : node) {
          Value item;
          Convert(e, item, depth + 1);
          if (!status.ok()) return;
          out.PushBack(item, a_);
        }
        return;
      case YAML::NodeType::Map:
        out.SetObject();
        for (const auto& kv : node) {
          if (!kv.first.IsScalar()) {
            status = InvalidArgumentError("YAML mapping keys must be scalars");
            return;
          }
          const std::string& key = kv.first.Scalar();
          Value item;
          Convert(kv.second, item, depth + 1);
          if (!status.ok()) return;
          // A repeated key replaces the earlier value, keeping JSON objects duplicate-free.
          auto it = out.FindMember(Value(rapidjson::StringRef(key.data(), key.size())));
          if (it != out.MemberEnd()) {
            it->value = item;
          } else {
            out.AddMember(Value(key.data(), static_cast<rapidjson::SizeType>(key.size()), a_), item,
                          a_);
          }
        }
        return;
    }
  }

 private:
  void Scalar(const YAML::Node& node, Value& out) {
    const std::string& s = node.Scalar();
    const std::string& tag = node.Tag();
    if (tag == "!" || tag == "tag:yaml.org,2002:str") {  // quoted or explicitly a string
      out.SetString(s.data(), static_cast<rapidjson::SizeType>(s.size()), a_);
      return;
    }
    if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") {
      out.SetNull();
      return;
    }
    static constexpr std::string_view kTrue[] = {"true", "True", "TRUE", "yes", "Yes", "YES",
                                                 "on",   "On",   "ON",   "y",   "Y"};
    static constexpr std::string_view kFalse[] = {"false", "False", "FALSE", "no", "No", "NO",
                                                  "off",   "Off",   "OFF",   "n",  "N"};
    for (std::string_view t : kTrue) {
      if (s == t) return out.SetBool(true), void();
    }
    for (std::string_view f : kFalse) {
      if (s == f) return out.SetBool(false), void();
    }
    std::string plain;
    for (char c : s) {
      if (c != '_') plain.push_back(c);
    }
    if (std::optional<int64_t> i = ParseIntBase0(plain)) {
      out.SetInt64(*i);
      return;
    }
    if (IsYamlFloat(plain)) {
      double d = std::strtod(plain.c_str(), nullptr);
      if (std::isfinite(d)) {
        out.SetDouble(d);
        return;
      }
    }
    out.SetString(s.data(), static_cast<rapidjson::SizeType>(s.size()), a_);
  }

  // Go strconv.ParseInt(s, 0, 64): sign, then 0x/0o/0b prefixes or a leading-0 octal.
  static std::optional<int64_t> ParseIntBase0(std::string_view s) {
    bool neg = false;
    if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
      neg = s[0] == '-';
      s.remove_prefix(1);
    }
    int base = 10;
    if (s.size() > 1 && s[0] == '0') {
      char p = static_cast<char>(s[1] | 0x20);
      if (p == 'x') {
        base = 16;
        s.remove_prefix(2);
      } else if (p == 'o') {
        base = 8;
        s.remove_prefix(2);
      } else if (p == 'b') {
        base = 2;
        s.remove_prefix(2);
      } else {
        base = 8;
        s.remove_prefix(1);
      }
    }
    if (s.empty()) return std::nullopt;
    uint64_t v = 0;
    const uint64_t limit = neg ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
    for (char c : s) {
      int d;
      if (c >= '0' && c <= '9') {
        d = c - '0';
      } else if (c >= 'a' && c <= 'f') {
        d = c - 'a' + 10;
      } else if (c >= 'A' && c <= 'F') {
        d = c - 'A' + 10;
      } else {
        return std::nullopt;
      }
      if (d >= base) return std::nullopt;
      if (v > (limit - static_cast<uint64_t>(d)) / static_cast<uint64_t>(base)) {
        return std::nullopt;
      }
      v = v * static_cast<uint64_t>(base) + static_cast<uint64_t>(d);
    }
    return neg ? static_cast<int64_t>(0 - v) : static_cast<int64_t>(v);
  }

  // ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$
  static bool IsYamlFloat(std::string_view s) {
    size_t i = 0;
    auto digits = [&] {
      size_t start = i;
      while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
      return i - start;
    };
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (i < s.size() && s[i] == '.') {
      ++i;
      if (digits() == 0) return false;
    } else {
      if (digits() == 0) return false;
      if (i < s.size() && s[i] == '.') {
        ++i;
        digits();
      }
    }
    if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
      ++i;
      if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
      if (digits() == 0) return false;
    }
    return i == s.size();
  }

  Allocator& a_;
  size_t nodes_ = 0;
};

// yaml-cpp 0.7 (the distribution version) loops forever when a ',' token appears outside flow
// collections at document level (e.g. ",", "'x',", "- a\n,"). Such a ',' is never valid YAML
// (',' is an indicator, so it cannot start a plain scalar), so reject those inputs before parsing.
// Conservative scan: a ',' outside quotes, comments, block scalars and flow collections is
// rejected when it starts a line at column 0, is the first token of the text, or directly follows
// a closing quote/bracket, an anchor/tag or a document marker. A ',' inside a plain scalar
// ("a: b, c") is left alone.
bool HasStrayFlowEntry(std::string_view y) {
  int depth = 0;
  char quote = 0;
  bool token_boundary = true;  // the next non-space character starts a new token
  bool line_start = true;
  int block_indent = -1;  // >= 0 while inside a block scalar: its parent's indentation
  int indent = 0;
  bool maybe_block_header = false;
  for (size_t i = 0; i < y.size(); ++i) {
    char c = y[i];
    if (c == '\n') {
      if (maybe_block_header && quote == 0 && depth == 0) block_indent = indent;
      maybe_block_header = false;
      line_start = true;
      indent = 0;
      if (quote == 0) token_boundary = true;
      continue;
    }
    if (line_start && (c == ' ' || c == '\t')) {
      ++indent;
      continue;
    }
    if (line_start) {
      line_start = false;
      if (block_indent >= 0) {
        if (indent > block_indent) {  // block scalar content: skip the line
          size_t nl = y.find('\n', i);
          if (nl == std::string_view::npos) return false;
          i = nl - 1;
          continue;
        }
        block_indent = -1;
      }
      if (quote == 0 && c == ',' && indent == 0) return true;
    }
    if (quote != 0) {
      if (quote == '"' && c == '\\') {
        ++i;
      } else if (c == quote) {
        if (quote == '\'' && i + 1 < y.size() && y[i + 1] == '\'') {
          ++i;
        } else {
          quote = 0;
          token_boundary = depth == 0;
        }
      }
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r') continue;
    if (c == '#' && (i == 0 || y[i - 1] == ' ' || y[i - 1] == '\t' || y[i - 1] == '\n')) {
      size_t nl = y.find('\n', i);
      if (nl == std::string_view::npos) return false;
      i = nl - 1;
      continue;
    }
    const bool at_token = token_boundary || i == 0 || y[i - 1] == ' ' || y[i - 1] == '\t';
    if (c == ',' && depth == 0 && token_boundary) return true;
    token_boundary = false;
    maybe_block_header = false;
    if (at_token && (c == '\'' || c == '"')) {
      quote = c;
    } else if (c == '[' || c == '{') {
      if (at_token || depth > 0) ++depth;
    } else if ((c == ']' || c == '}') && depth > 0) {
      if (--depth == 0) token_boundary = true;
    } else if (at_token && (c == '&' || c == '!') && depth == 0) {
      while (i + 1 < y.size() && y[i + 1] != ' ' && y[i + 1] != '\n') ++i;
      token_boundary = true;
    } else if (at_token && depth == 0 && (y.substr(i, 3) == "---" || y.substr(i, 3) == "...")) {
      i += 2;
      token_boundary = true;
    } else if (at_token && (c == '|' || c == '>') && depth == 0) {
      maybe_block_header = true;
      while (i + 1 < y.size() && y[i + 1] != '\n' && y[i + 1] != '#') ++i;
    }
  }
  return false;
}

StatusOr<std::vector<YAML::Node>> LoadYaml(std::string_view yaml) {
  // YAML forbids C0 control characters other than tab, LF and CR; yaml-cpp 0.7 misreads NUL as an
  // end of input and can then hang, so refuse them up front.
  for (char c : yaml) {
    if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r') {
      return InvalidArgumentError("invalid YAML: control character in input");
    }
  }
  if (HasStrayFlowEntry(yaml)) {
    return InvalidArgumentError("invalid YAML: ',' outside a flow collection");
  }
  try {
    return YAML::LoadAll(std::string(yaml));
  } catch (const std::exception& e) {
    return InvalidArgumentError(std::string("invalid YAML: ") + e.what());
  } catch (...) {
    return InvalidArgumentError("invalid YAML");
  }
}

Status ConvertYamlNode(const YAML::Node& node, rapidjson::Document& doc) {
  YamlConverter conv(doc.GetAllocator());
  try {
    conv.Convert(node, doc, 1);
  } catch (const std::exception& e) {
    return InvalidArgumentError(std::string("invalid YAML: ") + e.what());
  }
  return conv.status;
}

template <class T>
void Emplace(Manifest& m, const Value& v, Status& status) {
  StatusOr<T> obj = DecodeValue<T>(v);
  if (!obj.ok()) {
    status = obj.status();
    return;
  }
  m.object = std::move(obj).value();
}

Status AppendManifest(const Value& v, std::vector<Manifest>& out, int depth) {
  if (!v.IsObject()) return InvalidArgumentError("expected an object");
  auto api = v.FindMember("apiVersion");
  auto kind = v.FindMember("kind");
  if (api == v.MemberEnd() || !api->value.IsString()) {
    return InvalidArgumentError("apiVersion: expected string");
  }
  if (kind == v.MemberEnd() || !kind->value.IsString()) {
    return InvalidArgumentError("kind: expected string");
  }
  std::string api_version(api->value.GetString(), api->value.GetStringLength());
  std::string k(kind->value.GetString(), kind->value.GetStringLength());
  if (k.ends_with("List") && depth == 0) {
    auto items = v.FindMember("items");
    if (items != v.MemberEnd() && items->value.IsArray()) {
      size_t i = 0;
      for (const Value& item : items->value.GetArray()) {
        Status s = AppendManifest(item, out, depth + 1);
        if (!s.ok()) return s.WithPrefix("items[" + std::to_string(i) + "]");
        ++i;
      }
      return OkStatus();
    }
  }
  if (Status s = CheckApiVersion(api_version, k); !s.ok()) return s;
  if (api_version != "resource.k8s.io/v1" && api_version.starts_with("resource.k8s.io/")) {
    // Older served versions are read as the API server would store them: converted to v1.
    rapidjson::Document converted;
    converted.CopyFrom(v, converted.GetAllocator());
    if (Status s = ConvertResourceToV1(converted, converted.GetAllocator()); !s.ok()) return s;
    return AppendManifest(converted, out, depth);
  }
  Manifest m;
  m.api_version = api_version;
  m.kind = k;
  m.raw_json = Compact(v);
  Status status;
  if (api_version == "v1") {
    if (k == "Pod") Emplace<Pod>(m, v, status);
    if (k == "Node") Emplace<Node>(m, v, status);
  } else if (api_version == "resource.k8s.io/v1") {
    if (k == "DeviceClass") Emplace<DeviceClass>(m, v, status);
    if (k == "ResourceClaim") Emplace<ResourceClaim>(m, v, status);
    if (k == "ResourceClaimTemplate") Emplace<ResourceClaimTemplate>(m, v, status);
    if (k == "ResourceSlice") Emplace<ResourceSlice>(m, v, status);
    if (k == "DeviceTaintRule") Emplace<DeviceTaintRule>(m, v, status);
  }
  if (!status.ok()) return status;
  out.push_back(std::move(m));
  return OkStatus();
}

}  // namespace

template <typename T>
StatusOr<T> Decode(std::string_view json) {
  rapidjson::Document doc;
  if (Status s = ParseJson(json, doc); !s.ok()) return s;
  return DecodeValue<T>(doc);
}

template <typename T>
std::string Encode(const T& obj) {
  rapidjson::Document doc;
  Encoder enc(doc.GetAllocator());
  enc.Encode(obj, doc, true);
  return Compact(doc);
}

template <typename T>
StatusOr<T> DecodeYaml(std::string_view yaml) {
  if (LooksLikeJson(yaml)) return Decode<T>(yaml);
  StatusOr<std::vector<YAML::Node>> docs = LoadYaml(yaml);
  if (!docs.ok()) return docs.status();
  if (docs->size() != 1) {
    return InvalidArgumentError("expected exactly one YAML document, got " +
                                std::to_string(docs->size()));
  }
  rapidjson::Document doc;
  if (Status s = ConvertYamlNode((*docs)[0], doc); !s.ok()) return s;
  return DecodeValue<T>(doc);
}

StatusOr<std::string> YamlToJson(std::string_view yaml) {
  if (LooksLikeJson(yaml)) {
    rapidjson::Document doc;
    if (Status s = ParseJson(yaml, doc); !s.ok()) return s;
    return Compact(doc);
  }
  StatusOr<std::vector<YAML::Node>> docs = LoadYaml(yaml);
  if (!docs.ok()) return docs.status();
  if (docs->size() != 1) {
    return InvalidArgumentError("expected exactly one YAML document, got " +
                                std::to_string(docs->size()));
  }
  rapidjson::Document doc;
  if (Status s = ConvertYamlNode((*docs)[0], doc); !s.ok()) return s;
  return Compact(doc);
}

StatusOr<std::vector<Manifest>> DecodeManifests(std::string_view yaml) {
  if (LooksLikeJson(yaml)) {
    rapidjson::Document doc;
    if (Status s = ParseJson(yaml, doc); !s.ok()) return s;
    std::vector<Manifest> out;
    if (Status s = AppendManifest(doc, out, 0); !s.ok()) return s;
    return out;
  }
  StatusOr<std::vector<YAML::Node>> docs = LoadYaml(yaml);
  if (!docs.ok()) return docs.status();
  std::vector<Manifest> out;
  for (size_t i = 0; i < docs->size(); ++i) {
    const YAML::Node& node = (*docs)[i];
    if (!node.IsDefined() || node.IsNull()) continue;  // empty document
    rapidjson::Document doc;
    std::string prefix = "document " + std::to_string(i + 1);
    if (Status s = ConvertYamlNode(node, doc); !s.ok()) return s.WithPrefix(prefix);
    if (Status s = AppendManifest(doc, out, 0); !s.ok()) return s.WithPrefix(prefix);
  }
  return out;
}

#define DRACO_API_CODEC_INSTANTIATE(T)              \
  template StatusOr<T> Decode<T>(std::string_view); \
  template std::string Encode<T>(const T&);         \
  template StatusOr<T> DecodeYaml<T>(std::string_view);

DRACO_API_CODEC_INSTANTIATE(OwnerReference)
DRACO_API_CODEC_INSTANTIATE(ObjectMeta)
DRACO_API_CODEC_INSTANTIATE(Condition)
DRACO_API_CODEC_INSTANTIATE(NodeSelectorRequirement)
DRACO_API_CODEC_INSTANTIATE(NodeSelectorTerm)
DRACO_API_CODEC_INSTANTIATE(NodeSelector)
DRACO_API_CODEC_INSTANTIATE(Taint)
DRACO_API_CODEC_INSTANTIATE(Toleration)
DRACO_API_CODEC_INSTANTIATE(PodResourceClaim)
DRACO_API_CODEC_INSTANTIATE(PodSchedulingGate)
DRACO_API_CODEC_INSTANTIATE(PodSchedulingGroup)
DRACO_API_CODEC_INSTANTIATE(ResourceClaimRef)
DRACO_API_CODEC_INSTANTIATE(ResourceRequirements)
DRACO_API_CODEC_INSTANTIATE(Container)
DRACO_API_CODEC_INSTANTIATE(NodeAffinity)
DRACO_API_CODEC_INSTANTIATE(Affinity)
DRACO_API_CODEC_INSTANTIATE(PodSpec)
DRACO_API_CODEC_INSTANTIATE(PodResourceClaimStatus)
DRACO_API_CODEC_INSTANTIATE(ContainerExtendedResourceRequest)
DRACO_API_CODEC_INSTANTIATE(PodExtendedResourceClaimStatus)
DRACO_API_CODEC_INSTANTIATE(PodStatus)
DRACO_API_CODEC_INSTANTIATE(Pod)
DRACO_API_CODEC_INSTANTIATE(NodeCondition)
DRACO_API_CODEC_INSTANTIATE(NodeSpec)
DRACO_API_CODEC_INSTANTIATE(NodeStatus)
DRACO_API_CODEC_INSTANTIATE(Node)
DRACO_API_CODEC_INSTANTIATE(LabelSelectorRequirement)
DRACO_API_CODEC_INSTANTIATE(LabelSelector)
DRACO_API_CODEC_INSTANTIATE(PodAffinityTerm)
DRACO_API_CODEC_INSTANTIATE(PodAffinity)
DRACO_API_CODEC_INSTANTIATE(TopologySpreadConstraint)
DRACO_API_CODEC_INSTANTIATE(ContainerPort)
DRACO_API_CODEC_INSTANTIATE(PersistentVolumeClaimVolumeSource)
DRACO_API_CODEC_INSTANTIATE(GCEPersistentDiskVolumeSource)
DRACO_API_CODEC_INSTANTIATE(AWSElasticBlockStoreVolumeSource)
DRACO_API_CODEC_INSTANTIATE(RBDVolumeSource)
DRACO_API_CODEC_INSTANTIATE(ISCSIVolumeSource)
DRACO_API_CODEC_INSTANTIATE(CSIVolumeSource)
DRACO_API_CODEC_INSTANTIATE(EphemeralVolumeSource)
DRACO_API_CODEC_INSTANTIATE(Volume)
DRACO_API_CODEC_INSTANTIATE(PodCondition)
DRACO_API_CODEC_INSTANTIATE(ContainerStatus)
DRACO_API_CODEC_INSTANTIATE(ObjectReference)
DRACO_API_CODEC_INSTANTIATE(VolumeNodeAffinity)
DRACO_API_CODEC_INSTANTIATE(CSIPersistentVolumeSource)
DRACO_API_CODEC_INSTANTIATE(PersistentVolumeSpec)
DRACO_API_CODEC_INSTANTIATE(PersistentVolumeStatus)
DRACO_API_CODEC_INSTANTIATE(PersistentVolume)
DRACO_API_CODEC_INSTANTIATE(VolumeResourceRequirements)
DRACO_API_CODEC_INSTANTIATE(PersistentVolumeClaimSpec)
DRACO_API_CODEC_INSTANTIATE(PersistentVolumeClaimStatus)
DRACO_API_CODEC_INSTANTIATE(PersistentVolumeClaim)
DRACO_API_CODEC_INSTANTIATE(TopologySelectorLabelRequirement)
DRACO_API_CODEC_INSTANTIATE(TopologySelectorTerm)
DRACO_API_CODEC_INSTANTIATE(StorageClass)
DRACO_API_CODEC_INSTANTIATE(VolumeNodeResources)
DRACO_API_CODEC_INSTANTIATE(CSINodeDriver)
DRACO_API_CODEC_INSTANTIATE(CSINodeSpec)
DRACO_API_CODEC_INSTANTIATE(CSINode)
DRACO_API_CODEC_INSTANTIATE(Namespace)
DRACO_API_CODEC_INSTANTIATE(PodGroupResourceClaim)
DRACO_API_CODEC_INSTANTIATE(PodGroupSpec)
DRACO_API_CODEC_INSTANTIATE(PodGroupResourceClaimStatus)
DRACO_API_CODEC_INSTANTIATE(PodGroupStatus)
DRACO_API_CODEC_INSTANTIATE(PodGroup)
DRACO_API_CODEC_INSTANTIATE(CELDeviceSelector)
DRACO_API_CODEC_INSTANTIATE(DeviceSelector)
DRACO_API_CODEC_INSTANTIATE(OpaqueDeviceConfiguration)
DRACO_API_CODEC_INSTANTIATE(DeviceToleration)
DRACO_API_CODEC_INSTANTIATE(DeviceTaint)
DRACO_API_CODEC_INSTANTIATE(DeviceClassConfiguration)
DRACO_API_CODEC_INSTANTIATE(DeviceClassSpec)
DRACO_API_CODEC_INSTANTIATE(DeviceClass)
DRACO_API_CODEC_INSTANTIATE(CapacityRequirements)
DRACO_API_CODEC_INSTANTIATE(DerivedAttribute)
DRACO_API_CODEC_INSTANTIATE(ExactDeviceRequest)
DRACO_API_CODEC_INSTANTIATE(DeviceSubRequest)
DRACO_API_CODEC_INSTANTIATE(DeviceRequest)
DRACO_API_CODEC_INSTANTIATE(DeviceConstraint)
DRACO_API_CODEC_INSTANTIATE(DeviceClaimConfiguration)
DRACO_API_CODEC_INSTANTIATE(DeviceClaim)
DRACO_API_CODEC_INSTANTIATE(ResourceClaimSpec)
DRACO_API_CODEC_INSTANTIATE(DeviceRequestAllocationResult)
DRACO_API_CODEC_INSTANTIATE(DeviceAllocationConfiguration)
DRACO_API_CODEC_INSTANTIATE(DeviceAllocationResult)
DRACO_API_CODEC_INSTANTIATE(AllocationResult)
DRACO_API_CODEC_INSTANTIATE(ResourceClaimConsumerReference)
DRACO_API_CODEC_INSTANTIATE(NetworkDeviceData)
DRACO_API_CODEC_INSTANTIATE(AllocatedDeviceStatus)
DRACO_API_CODEC_INSTANTIATE(ResourceClaimStatus)
DRACO_API_CODEC_INSTANTIATE(ResourceClaim)
DRACO_API_CODEC_INSTANTIATE(ResourceClaimTemplateSpec)
DRACO_API_CODEC_INSTANTIATE(ResourceClaimTemplate)
DRACO_API_CODEC_INSTANTIATE(ResourcePool)
DRACO_API_CODEC_INSTANTIATE(DeviceAttribute)
DRACO_API_CODEC_INSTANTIATE(CapacityRequestPolicyRange)
DRACO_API_CODEC_INSTANTIATE(CapacityRequestPolicy)
DRACO_API_CODEC_INSTANTIATE(DeviceCapacity)
DRACO_API_CODEC_INSTANTIATE(Counter)
DRACO_API_CODEC_INSTANTIATE(CounterSet)
DRACO_API_CODEC_INSTANTIATE(DeviceCounterConsumption)
DRACO_API_CODEC_INSTANTIATE(Device)
DRACO_API_CODEC_INSTANTIATE(ResourceSliceSpec)
DRACO_API_CODEC_INSTANTIATE(ResourceSlice)
DRACO_API_CODEC_INSTANTIATE(DeviceTaintSelector)
DRACO_API_CODEC_INSTANTIATE(DeviceTaintRuleSpec)
DRACO_API_CODEC_INSTANTIATE(DeviceTaintRuleStatus)
DRACO_API_CODEC_INSTANTIATE(DeviceTaintRule)
DRACO_API_CODEC_INSTANTIATE(AllocationPolicy)

#undef DRACO_API_CODEC_INSTANTIATE

}  // namespace draco::api
