#include "controller/allocator/scenario_json.h"

#include <vector>

#include "controller/allocator/compute_model.h"
#include "controller/allocator/from_api.h"

namespace draco::alloc {

Features DecodeFeatures(const rapidjson::Value& v) {
  Features f;
  auto set = [&](const char* name, bool& field) {
    if (auto it = v.FindMember(name); it != v.MemberEnd() && it->value.IsBool()) {
      field = it->value.GetBool();
    }
  };
  set("adminAccess", f.admin_access);
  set("prioritizedList", f.prioritized_list);
  set("partitionableDevices", f.partitionable_devices);
  set("deviceTaints", f.device_taints);
  set("deviceTaintRules", f.device_taint_rules);
  set("deviceBinding", f.device_binding);
  set("consumableCapacity", f.consumable_capacity);
  set("fractionalCapacityRange", f.fractional_capacity_range);
  set("listTypeAttributes", f.list_type_attributes);
  set("optionalNodeOperations", f.optional_node_operations);
  set("derivedAttributes", f.derived_attributes);
  set("compatibilityGroups", f.compatibility_groups);
  return f;
}

namespace {

void WriteStr(JsonWriter& w, const std::string& s) {
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

void WriteRequirements(JsonWriter& w, const char* name,
                       const std::vector<NodeSelectorRequirement>& reqs) {
  if (reqs.empty()) return;
  w.Key(name);
  w.StartArray();
  for (const auto& r : reqs) {
    w.StartObject();
    w.Key("key");
    WriteStr(w, r.key);
    w.Key("operator");
    WriteStr(w, r.op);
    if (!r.values.empty()) {
      w.Key("values");
      w.StartArray();
      for (const auto& v : r.values) WriteStr(w, v);
      w.EndArray();
    }
    w.EndObject();
  }
  w.EndArray();
}

void WriteOpaque(JsonWriter& w, const OpaqueConfig& o) {
  w.Key("opaque");
  w.StartObject();
  w.Key("driver");
  WriteStr(w, o.driver);
  w.Key("parameters");
  if (o.parameters_json.empty()) {
    w.Null();
  } else {
    w.RawValue(o.parameters_json.data(), o.parameters_json.size(), rapidjson::kObjectType);
  }
  w.EndObject();
}

void EncodeNodeSelector(const NodeSelector& ns, JsonWriter& w) {
  w.StartObject();
  w.Key("nodeSelectorTerms");
  w.StartArray();
  for (const auto& t : ns.terms) {
    w.StartObject();
    WriteRequirements(w, "matchExpressions", t.match_expressions);
    WriteRequirements(w, "matchFields", t.match_fields);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}

}  // namespace

void EncodeComputeResult(const AllocationResult& r, JsonWriter& w) {
  w.StartObject();
  w.Key("devices");
  w.StartObject();
  if (!r.results.empty()) {
    w.Key("results");
    w.StartArray();
    for (const auto& d : r.results) {
      w.StartObject();
      w.Key("request");
      WriteStr(w, d.request);
      w.Key("driver");
      WriteStr(w, d.driver);
      w.Key("pool");
      WriteStr(w, d.pool);
      w.Key("device");
      WriteStr(w, d.device);
      if (d.admin_access) {
        w.Key("adminAccess");
        w.Bool(*d.admin_access);
      }
      if (!d.tolerations.empty()) {
        w.Key("tolerations");
        w.StartArray();
        for (const auto& t : d.tolerations) {
          w.StartObject();
          if (!t.key.empty()) {
            w.Key("key");
            WriteStr(w, t.key);
          }
          if (!t.op.empty()) {
            w.Key("operator");
            WriteStr(w, t.op);
          }
          if (!t.value.empty()) {
            w.Key("value");
            WriteStr(w, t.value);
          }
          if (!t.effect.empty()) {
            w.Key("effect");
            WriteStr(w, t.effect);
          }
          if (t.toleration_seconds) {
            w.Key("tolerationSeconds");
            w.Int64(*t.toleration_seconds);
          }
          w.EndObject();
        }
        w.EndArray();
      }
      auto write_list = [&](const char* name, const std::vector<std::string>& l) {
        if (l.empty()) return;
        w.Key(name);
        w.StartArray();
        for (const auto& s : l) WriteStr(w, s);
        w.EndArray();
      };
      write_list("bindingConditions", d.binding_conditions);
      write_list("bindingFailureConditions", d.binding_failure_conditions);
      if (d.share_id) {
        w.Key("shareID");
        WriteStr(w, *d.share_id);
      }
      if (!d.consumed_capacity.empty()) {
        w.Key("consumedCapacity");
        w.StartObject();
        for (const auto& [k, q] : d.consumed_capacity) {
          w.Key(k.c_str());
          WriteStr(w, q.ToString());
        }
        w.EndObject();
      }
      write_list("skipNodeOperations", d.skip_node_operations);
      w.EndObject();
    }
    w.EndArray();
  }
  if (!r.config.empty()) {
    w.Key("config");
    w.StartArray();
    for (const auto& c : r.config) {
      w.StartObject();
      w.Key("source");
      WriteStr(w, c.source);
      if (!c.requests.empty()) {
        w.Key("requests");
        w.StartArray();
        for (const auto& s : c.requests) WriteStr(w, s);
        w.EndArray();
      }
      if (c.has_opaque) WriteOpaque(w, c.opaque);
      w.EndObject();
    }
    w.EndArray();
  }
  w.EndObject();
  if (r.node_selector) {
    w.Key("nodeSelector");
    EncodeNodeSelector(*r.node_selector, w);
  }
  w.EndObject();
}

std::string ComputeResultToJson(const AllocationResult& r) {
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  EncodeComputeResult(r, w);
  return {buf.GetString(), buf.GetSize()};
}

void EncodeAllocationResult(const api::AllocationResult& r, JsonWriter& w) {
  EncodeComputeResult(ToAllocAllocationResult(r), w);
}

std::string AllocationResultToJson(const api::AllocationResult& r) {
  return ComputeResultToJson(ToAllocAllocationResult(r));
}

}  // namespace draco::alloc
