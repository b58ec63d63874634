#include "controller/allocator/json_codec.h"

#include <algorithm>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "base/status_macros.h"

namespace draco::alloc {
namespace {

using rapidjson::Value;

const Value* Field(const Value& obj, const char* name) {
  if (!obj.IsObject()) return nullptr;
  auto it = obj.FindMember(name);
  if (it == obj.MemberEnd() || it->value.IsNull()) return nullptr;
  return &it->value;
}

std::string Str(const Value& obj, const char* name) {
  const Value* f = Field(obj, name);
  return f != nullptr && f->IsString() ? std::string(f->GetString(), f->GetStringLength())
                                       : std::string();
}

std::optional<std::string> OptStr(const Value& obj, const char* name) {
  const Value* f = Field(obj, name);
  if (f == nullptr || !f->IsString()) return std::nullopt;
  return std::string(f->GetString(), f->GetStringLength());
}

std::optional<bool> OptBool(const Value& obj, const char* name) {
  const Value* f = Field(obj, name);
  if (f == nullptr || !f->IsBool()) return std::nullopt;
  return f->GetBool();
}

int64_t Int(const Value& obj, const char* name) {
  const Value* f = Field(obj, name);
  if (f == nullptr) return 0;
  if (f->IsInt64()) return f->GetInt64();
  if (f->IsUint64()) return static_cast<int64_t>(f->GetUint64());
  if (f->IsDouble()) return static_cast<int64_t>(f->GetDouble());
  return 0;
}

std::vector<std::string> StrList(const Value& obj, const char* name) {
  std::vector<std::string> out;
  const Value* f = Field(obj, name);
  if (f == nullptr || !f->IsArray()) return out;
  for (const auto& e : f->GetArray()) {
    if (e.IsString()) out.emplace_back(e.GetString(), e.GetStringLength());
  }
  return out;
}

std::optional<std::vector<std::string>> OptStrList(const Value& obj, const char* name) {
  const Value* f = Field(obj, name);
  if (f == nullptr || !f->IsArray()) return std::nullopt;
  return StrList(obj, name);
}

StatusOr<Qty> ParseQty(const Value& v, std::string_view what) {
  std::string text;
  if (v.IsString()) {
    text.assign(v.GetString(), v.GetStringLength());
  } else if (v.IsInt64()) {
    text = std::to_string(v.GetInt64());
  } else if (v.IsUint64()) {
    text = std::to_string(v.GetUint64());
  } else {
    return InvalidArgumentError(std::string(what) + ": quantity must be a string");
  }
  // UnmarshalJSON trims blanks before parsing.
  size_t b = text.find_first_not_of(" \t\r\n");
  size_t e = text.find_last_not_of(" \t\r\n");
  text = b == std::string::npos ? std::string() : text.substr(b, e - b + 1);
  auto q = Qty::Parse(text);
  if (!q.ok()) {
    return InvalidArgumentError(std::string(what) + ": " + q.status().message());
  }
  return q;
}

StatusOr<std::optional<Qty>> OptQty(const Value& obj, const char* name, std::string_view what) {
  const Value* f = Field(obj, name);
  if (f == nullptr) return std::optional<Qty>();
  DRACO_ASSIGN_OR_RETURN(Qty q, ParseQty(*f, what));
  return std::optional<Qty>(std::move(q));
}

std::string RawJson(const Value& v) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  v.Accept(w);
  return std::string(buf.GetString(), buf.GetSize());
}

std::vector<NodeSelectorRequirement> DecodeRequirements(const Value& obj, const char* name) {
  std::vector<NodeSelectorRequirement> out;
  const Value* f = Field(obj, name);
  if (f == nullptr || !f->IsArray()) return out;
  for (const auto& e : f->GetArray()) {
    NodeSelectorRequirement r;
    r.key = Str(e, "key");
    r.op = Str(e, "operator");
    r.values = StrList(e, "values");
    out.push_back(std::move(r));
  }
  return out;
}

std::optional<NodeSelector> DecodeNodeSelector(const Value& obj, const char* name) {
  const Value* f = Field(obj, name);
  if (f == nullptr || !f->IsObject()) return std::nullopt;
  NodeSelector ns;
  const Value* terms = Field(*f, "nodeSelectorTerms");
  if (terms != nullptr && terms->IsArray()) {
    for (const auto& t : terms->GetArray()) {
      NodeSelectorTerm term;
      term.match_expressions = DecodeRequirements(t, "matchExpressions");
      term.match_fields = DecodeRequirements(t, "matchFields");
      ns.terms.push_back(std::move(term));
    }
  }
  return ns;
}

Attribute DecodeAttribute(const Value& v) {
  Attribute a;
  if (const Value* f = Field(v, "int"); f != nullptr && f->IsInt64()) {
    a.kind = Attribute::Kind::kInt;
    a.i = f->GetInt64();
  } else if (const Value* fb = Field(v, "bool"); fb != nullptr && fb->IsBool()) {
    a.kind = Attribute::Kind::kBool;
    a.b = fb->GetBool();
  } else if (const Value* fs = Field(v, "string"); fs != nullptr && fs->IsString()) {
    a.kind = Attribute::Kind::kString;
    a.s = fs->GetString();
  } else if (const Value* fv = Field(v, "version"); fv != nullptr && fv->IsString()) {
    a.kind = Attribute::Kind::kVersion;
    a.s = fv->GetString();
  } else if (const Value* fi = Field(v, "ints"); fi != nullptr && fi->IsArray() && !fi->Empty()) {
    a.kind = Attribute::Kind::kInts;
    for (const auto& e : fi->GetArray()) a.ints.push_back(e.IsInt64() ? e.GetInt64() : 0);
  } else if (const Value* fbs = Field(v, "bools");
             fbs != nullptr && fbs->IsArray() && !fbs->Empty()) {
    a.kind = Attribute::Kind::kBools;
    for (const auto& e : fbs->GetArray()) a.bools.push_back(e.IsBool() && e.GetBool());
  } else if (const Value* fss = Field(v, "strings");
             fss != nullptr && fss->IsArray() && !fss->Empty()) {
    a.kind = Attribute::Kind::kStrings;
    for (const auto& e : fss->GetArray()) a.strs.emplace_back(e.IsString() ? e.GetString() : "");
  } else if (const Value* fvs = Field(v, "versions");
             fvs != nullptr && fvs->IsArray() && !fvs->Empty()) {
    a.kind = Attribute::Kind::kVersions;
    for (const auto& e : fvs->GetArray()) a.strs.emplace_back(e.IsString() ? e.GetString() : "");
  }
  return a;
}

StatusOr<std::vector<std::pair<std::string, Qty>>> DecodeCounters(const Value& obj,
                                                                  const char* name) {
  std::vector<std::pair<std::string, Qty>> out;
  const Value* f = Field(obj, name);
  if (f == nullptr || !f->IsObject()) return out;
  for (const auto& m : f->GetObject()) {
    const Value* val = Field(m.value, "value");
    Qty q;
    if (val != nullptr) {
      DRACO_ASSIGN_OR_RETURN(q, ParseQty(*val, std::string("counter ") + m.name.GetString()));
    }
    out.emplace_back(m.name.GetString(), std::move(q));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

StatusOr<Device> DecodeDevice(const Value& v) {
  Device d;
  d.name = Str(v, "name");
  if (const Value* attrs = Field(v, "attributes"); attrs != nullptr && attrs->IsObject()) {
    for (const auto& m : attrs->GetObject()) {
      d.attributes.emplace_back(m.name.GetString(), DecodeAttribute(m.value));
    }
    std::sort(d.attributes.begin(), d.attributes.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
  }
  if (const Value* caps = Field(v, "capacity"); caps != nullptr && caps->IsObject()) {
    for (const auto& m : caps->GetObject()) {
      DeviceCapacity c;
      std::string what = std::string("capacity ") + m.name.GetString();
      if (const Value* val = Field(m.value, "value"); val != nullptr) {
        DRACO_ASSIGN_OR_RETURN(c.value, ParseQty(*val, what));
      }
      if (const Value* pol = Field(m.value, "requestPolicy"); pol != nullptr && pol->IsObject()) {
        CapacityRequestPolicy p;
        DRACO_ASSIGN_OR_RETURN(p.default_value, OptQty(*pol, "default", what));
        if (const Value* vv = Field(*pol, "validValues"); vv != nullptr && vv->IsArray()) {
          p.has_valid_values = true;
          for (const auto& e : vv->GetArray()) {
            DRACO_ASSIGN_OR_RETURN(Qty q, ParseQty(e, what));
            p.valid_values.push_back(std::move(q));
          }
        }
        if (const Value* vr = Field(*pol, "validRange"); vr != nullptr && vr->IsObject()) {
          CapacityRange r;
          DRACO_ASSIGN_OR_RETURN(r.min, OptQty(*vr, "min", what));
          DRACO_ASSIGN_OR_RETURN(r.max, OptQty(*vr, "max", what));
          DRACO_ASSIGN_OR_RETURN(r.step, OptQty(*vr, "step", what));
          p.valid_range = std::move(r);
        }
        c.request_policy = std::move(p);
      }
      d.capacity.emplace_back(m.name.GetString(), std::move(c));
    }
    std::sort(d.capacity.begin(), d.capacity.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
  }
  if (const Value* cc = Field(v, "consumesCounters"); cc != nullptr && cc->IsArray()) {
    for (const auto& e : cc->GetArray()) {
      CounterConsumption c;
      c.counter_set = Str(e, "counterSet");
      DRACO_ASSIGN_OR_RETURN(c.counters, DecodeCounters(e, "counters"));
      c.compatibility_groups = StrList(e, "compatibilityGroups");
      d.consumes_counters.push_back(std::move(c));
    }
  }
  d.node_name = OptStr(v, "nodeName");
  d.node_selector = DecodeNodeSelector(v, "nodeSelector");
  d.all_nodes = OptBool(v, "allNodes");
  if (const Value* t = Field(v, "taints"); t != nullptr && t->IsArray()) {
    for (const auto& e : t->GetArray()) {
      d.taints.push_back({Str(e, "key"), Str(e, "value"), Str(e, "effect")});
    }
  }
  d.binds_to_node = OptBool(v, "bindsToNode");
  d.binding_conditions = OptStrList(v, "bindingConditions");
  d.binding_failure_conditions = OptStrList(v, "bindingFailureConditions");
  d.allow_multiple_allocations = OptBool(v, "allowMultipleAllocations");
  return d;
}

std::vector<DeviceToleration> DecodeTolerations(const Value& obj) {
  std::vector<DeviceToleration> out;
  const Value* f = Field(obj, "tolerations");
  if (f == nullptr || !f->IsArray()) return out;
  for (const auto& e : f->GetArray()) {
    DeviceToleration t;
    t.key = Str(e, "key");
    t.op = Str(e, "operator");
    t.value = Str(e, "value");
    t.effect = Str(e, "effect");
    if (const Value* s = Field(e, "tolerationSeconds"); s != nullptr && s->IsInt64()) {
      t.toleration_seconds = s->GetInt64();
    }
    out.push_back(std::move(t));
  }
  return out;
}

std::vector<std::string> DecodeSelectors(const Value& obj) {
  std::vector<std::string> out;
  const Value* f = Field(obj, "selectors");
  if (f == nullptr || !f->IsArray()) return out;
  for (const auto& e : f->GetArray()) {
    const Value* cel = Field(e, "cel");
    out.push_back(cel != nullptr ? Str(*cel, "expression") : std::string());
  }
  return out;
}

StatusOr<RequestSpec> DecodeRequestSpec(const Value& v, std::string name, bool exact) {
  RequestSpec r;
  r.name = std::move(name);
  r.device_class_name = Str(v, "deviceClassName");
  r.selectors = DecodeSelectors(v);
  r.allocation_mode = Str(v, "allocationMode");
  r.count = Int(v, "count");
  if (exact) r.admin_access = OptBool(v, "adminAccess");
  r.tolerations = DecodeTolerations(v);
  if (const Value* cap = Field(v, "capacity"); cap != nullptr && cap->IsObject()) {
    r.has_capacity = true;
    if (const Value* reqs = Field(*cap, "requests"); reqs != nullptr && reqs->IsObject()) {
      for (const auto& m : reqs->GetObject()) {
        auto q = ParseQty(m.value, std::string("capacity request ") + m.name.GetString());
        if (!q.ok()) return q.status();
        r.capacity_requests.emplace_back(m.name.GetString(), std::move(q).value());
      }
      std::sort(r.capacity_requests.begin(), r.capacity_requests.end(),
                [](const auto& a, const auto& b) { return a.first < b.first; });
    }
  }
  if (const Value* da = Field(v, "derivedAttributes"); da != nullptr && da->IsArray()) {
    r.has_derived_attributes = !da->Empty();
    for (const auto& e : da->GetArray()) {
      if (e.IsObject()) r.derived_attributes.emplace_back(Str(e, "name"), Str(e, "expression"));
    }
  }
  return r;
}

OpaqueConfig DecodeOpaque(const Value& v) {
  OpaqueConfig o;
  o.driver = Str(v, "driver");
  if (const Value* p = Field(v, "parameters"); p != nullptr) o.parameters_json = RawJson(*p);
  return o;
}

StatusOr<ResourceClaim> DecodeClaimSpec(const Value& spec, ResourceClaim c) {
  const Value* devices = Field(spec, "devices");
  if (devices == nullptr) return c;
  if (const Value* reqs = Field(*devices, "requests"); reqs != nullptr && reqs->IsArray()) {
    for (const auto& e : reqs->GetArray()) {
      DeviceRequest r;
      r.name = Str(e, "name");
      if (const Value* ex = Field(e, "exactly"); ex != nullptr && ex->IsObject()) {
        DRACO_ASSIGN_OR_RETURN(r.exactly, DecodeRequestSpec(*ex, r.name, true));
      }
      if (const Value* fa = Field(e, "firstAvailable"); fa != nullptr && fa->IsArray()) {
        for (const auto& s : fa->GetArray()) {
          DRACO_ASSIGN_OR_RETURN(RequestSpec sub, DecodeRequestSpec(s, Str(s, "name"), false));
          r.first_available.push_back(std::move(sub));
        }
      }
      c.requests.push_back(std::move(r));
    }
  }
  if (const Value* cons = Field(*devices, "constraints"); cons != nullptr && cons->IsArray()) {
    for (const auto& e : cons->GetArray()) {
      DeviceConstraint k;
      k.requests = StrList(e, "requests");
      k.match_attribute = OptStr(e, "matchAttribute");
      k.distinct_attribute = OptStr(e, "distinctAttribute");
      c.constraints.push_back(std::move(k));
    }
  }
  if (const Value* cfg = Field(*devices, "config"); cfg != nullptr && cfg->IsArray()) {
    for (const auto& e : cfg->GetArray()) {
      ClaimConfig k;
      k.requests = StrList(e, "requests");
      if (const Value* o = Field(e, "opaque"); o != nullptr && o->IsObject()) {
        k.has_opaque = true;
        k.opaque = DecodeOpaque(*o);
      }
      c.config.push_back(std::move(k));
    }
  }
  return c;
}

}  // namespace

StatusOr<Node> DecodeNode(const Value& v) {
  Node n;
  if (!v.IsObject()) return n;
  if (const Value* md = Field(v, "metadata"); md != nullptr) {
    n.name = Str(*md, "name");
    if (const Value* l = Field(*md, "labels"); l != nullptr && l->IsObject()) {
      for (const auto& m : l->GetObject()) {
        n.labels[m.name.GetString()] = m.value.IsString() ? m.value.GetString() : "";
      }
    }
  }
  if (const Value* st = Field(v, "status"); st != nullptr) {
    n.declared_features = StrList(*st, "declaredFeatures");
  }
  return n;
}

StatusOr<ResourceSlice> DecodeResourceSlice(const Value& v) {
  ResourceSlice s;
  if (const Value* md = Field(v, "metadata"); md != nullptr) s.name = Str(*md, "name");
  const Value* spec = Field(v, "spec");
  if (spec == nullptr) return s;
  s.driver = Str(*spec, "driver");
  if (const Value* pool = Field(*spec, "pool"); pool != nullptr) {
    s.pool = Str(*pool, "name");
    s.generation = Int(*pool, "generation");
    s.resource_slice_count = Int(*pool, "resourceSliceCount");
  }
  s.node_name = OptStr(*spec, "nodeName");
  s.node_selector = DecodeNodeSelector(*spec, "nodeSelector");
  s.all_nodes = OptBool(*spec, "allNodes");
  s.per_device_node_selection = OptBool(*spec, "perDeviceNodeSelection");
  if (const Value* devs = Field(*spec, "devices"); devs != nullptr && devs->IsArray()) {
    for (const auto& e : devs->GetArray()) {
      auto d = DecodeDevice(e);
      if (!d.ok()) {
        return d.status().WithPrefix("ResourceSlice " + s.name + ", device " + Str(e, "name"));
      }
      s.devices.push_back(std::move(d).value());
    }
  }
  if (const Value* sc = Field(*spec, "sharedCounters"); sc != nullptr && sc->IsArray()) {
    for (const auto& e : sc->GetArray()) {
      CounterSet cs;
      cs.name = Str(e, "name");
      auto counters = DecodeCounters(e, "counters");
      if (!counters.ok()) return counters.status().WithPrefix("ResourceSlice " + s.name);
      cs.counters = std::move(counters).value();
      s.shared_counters.push_back(std::move(cs));
    }
  }
  s.skip_node_operations = StrList(*spec, "skipNodeOperations");
  return s;
}

StatusOr<DeviceClass> DecodeDeviceClass(const Value& v) {
  DeviceClass c;
  if (const Value* md = Field(v, "metadata"); md != nullptr) {
    c.name = Str(*md, "name");
    c.creation_timestamp = Str(*md, "creationTimestamp");
    if (const Value* l = Field(*md, "labels"); l != nullptr && l->IsObject()) {
      for (const auto& m : l->GetObject()) {
        c.labels[m.name.GetString()] = m.value.IsString() ? m.value.GetString() : "";
      }
    }
  }
  const Value* spec = Field(v, "spec");
  if (spec == nullptr) return c;
  c.selectors = DecodeSelectors(*spec);
  c.extended_resource_name = Str(*spec, "extendedResourceName");
  if (const Value* cfg = Field(*spec, "config"); cfg != nullptr && cfg->IsArray()) {
    for (const auto& e : cfg->GetArray()) {
      const Value* o = Field(e, "opaque");
      c.config_has_opaque.push_back(o != nullptr && o->IsObject());
      c.config.push_back(o != nullptr && o->IsObject() ? DecodeOpaque(*o) : OpaqueConfig{});
    }
  }
  return c;
}

StatusOr<AllocationPolicy> DecodeAllocationPolicy(const Value& v) {
  AllocationPolicy p;
  if (const Value* md = Field(v, "metadata"); md != nullptr) p.name = Str(*md, "name");
  if (p.name.empty()) return InvalidArgumentError("AllocationPolicy: metadata.name is required");
  const std::string where = "AllocationPolicy " + p.name + ": ";
  const Value* spec = Field(v, "spec");
  if (spec == nullptr) return InvalidArgumentError(where + "spec is required");
  const Value* sel = Field(*spec, "deviceClassSelector");
  if (sel == nullptr || !sel->IsObject()) {
    return InvalidArgumentError(where + "spec.deviceClassSelector is required");
  }
  p.class_names = OptStrList(*sel, "names");
  if (const Value* ls = Field(*sel, "labelSelector"); ls != nullptr && ls->IsObject()) {
    p.has_label_selector = true;
    if (const Value* ml = Field(*ls, "matchLabels"); ml != nullptr && ml->IsObject()) {
      for (const auto& m : ml->GetObject()) {
        p.match_labels[m.name.GetString()] = m.value.IsString() ? m.value.GetString() : "";
      }
    }
    if (const Value* me = Field(*ls, "matchExpressions"); me != nullptr && me->IsArray()) {
      for (const auto& e : me->GetArray()) {
        LabelSelectorRequirement r{Str(e, "key"), Str(e, "operator"), StrList(e, "values")};
        if (r.op != "In" && r.op != "NotIn" && r.op != "Exists" && r.op != "DoesNotExist") {
          return InvalidArgumentError(where + "unknown labelSelector operator \"" + r.op + "\"");
        }
        p.match_expressions.push_back(std::move(r));
      }
    }
  }
  if (p.class_names.has_value() == p.has_label_selector) {
    return InvalidArgumentError(
        where +
        "set exactly one of deviceClassSelector.names and deviceClassSelector.labelSelector");
  }
  std::string strategy = Str(*spec, "strategy");
  if (strategy.empty() || strategy == "FirstFit") {
    p.strategy = Strategy::kFirstFit;
  } else if (strategy == "BinPack") {
    p.strategy = Strategy::kBinPack;
  } else if (strategy == "Spread") {
    p.strategy = Strategy::kSpread;
  } else {
    return InvalidArgumentError(where + "unknown strategy \"" + strategy + "\"");
  }
  p.priority = int32_t(Int(*spec, "priority"));
  if (const Value* nl = Field(*spec, "namespaceLimits"); nl != nullptr && nl->IsArray()) {
    for (const auto& e : nl->GetArray()) {
      NamespaceLimit l;
      l.namespace_name = Str(e, "namespace");
      if (l.namespace_name.empty()) {
        return InvalidArgumentError(where + "namespaceLimits entry without namespace");
      }
      if (Field(e, "maxDevices") != nullptr) l.max_devices = Int(e, "maxDevices");
      if (const Value* mc = Field(e, "maxCapacity"); mc != nullptr && mc->IsObject()) {
        for (const auto& m : mc->GetObject()) {
          std::string val = m.value.IsString() ? m.value.GetString() : "";
          auto q = Qty::Parse(val);
          if (!q.ok()) {
            return InvalidArgumentError(where + "namespaceLimits[" + l.namespace_name +
                                        "].maxCapacity[" + m.name.GetString() +
                                        "]: " + q.status().message());
          }
          l.max_capacity.emplace_back(m.name.GetString(), *q);
        }
        std::sort(l.max_capacity.begin(), l.max_capacity.end(),
                  [](const auto& a, const auto& b) { return a.first < b.first; });
      }
      p.namespace_limits.push_back(std::move(l));
    }
  }
  return p;
}

StatusOr<AllocationResult> DecodeAllocationResult(const Value& v) {
  AllocationResult a;
  if (const Value* devs = Field(v, "devices"); devs != nullptr) {
    if (const Value* res = Field(*devs, "results"); res != nullptr && res->IsArray()) {
      for (const auto& e : res->GetArray()) {
        DeviceRequestAllocationResult r;
        r.request = Str(e, "request");
        r.driver = Str(e, "driver");
        r.pool = Str(e, "pool");
        r.device = Str(e, "device");
        r.admin_access = OptBool(e, "adminAccess");
        r.tolerations = DecodeTolerations(e);
        r.binding_conditions = StrList(e, "bindingConditions");
        r.binding_failure_conditions = StrList(e, "bindingFailureConditions");
        r.share_id = OptStr(e, "shareID");
        if (const Value* cc = Field(e, "consumedCapacity"); cc != nullptr && cc->IsObject()) {
          r.has_consumed_capacity = true;
          for (const auto& m : cc->GetObject()) {
            DRACO_ASSIGN_OR_RETURN(Qty q, ParseQty(m.value, "consumedCapacity"));
            r.consumed_capacity.emplace_back(m.name.GetString(), std::move(q));
          }
          std::sort(r.consumed_capacity.begin(), r.consumed_capacity.end(),
                    [](const auto& x, const auto& y) { return x.first < y.first; });
        }
        r.skip_node_operations = StrList(e, "skipNodeOperations");
        a.results.push_back(std::move(r));
      }
    }
    if (const Value* cfg = Field(*devs, "config"); cfg != nullptr && cfg->IsArray()) {
      for (const auto& e : cfg->GetArray()) {
        AllocationConfig c;
        c.source = Str(e, "source");
        c.requests = StrList(e, "requests");
        if (const Value* o = Field(e, "opaque"); o != nullptr && o->IsObject()) {
          c.has_opaque = true;
          c.opaque = DecodeOpaque(*o);
        }
        a.config.push_back(std::move(c));
      }
    }
  }
  a.node_selector = DecodeNodeSelector(v, "nodeSelector");
  return a;
}

StatusOr<ResourceClaim> DecodeResourceClaim(const Value& v) {
  ResourceClaim c;
  if (const Value* md = Field(v, "metadata"); md != nullptr) {
    c.name = Str(*md, "name");
    c.namespace_name = Str(*md, "namespace");
    c.uid = Str(*md, "uid");
    if (const Value* an = Field(*md, "annotations"); an != nullptr && an->IsObject()) {
      for (const auto& m : an->GetObject()) {
        c.annotations[m.name.GetString()] = m.value.IsString() ? m.value.GetString() : "";
      }
    }
  }
  if (const Value* spec = Field(v, "spec"); spec != nullptr) {
    auto decoded = DecodeClaimSpec(*spec, std::move(c));
    if (!decoded.ok()) return decoded.status().WithPrefix("ResourceClaim");
    c = std::move(decoded).value();
  }
  if (const Value* st = Field(v, "status"); st != nullptr) {
    if (const Value* al = Field(*st, "allocation"); al != nullptr && al->IsObject()) {
      auto a = DecodeAllocationResult(*al);
      if (!a.ok()) return a.status().WithPrefix("ResourceClaim " + c.name + " status");
      c.allocation = std::move(a).value();
    }
    if (const Value* rf = Field(*st, "reservedFor"); rf != nullptr && rf->IsArray()) {
      for (const auto& e : rf->GetArray()) c.reserved_for.push_back(Str(e, "name"));
    }
  }
  return c;
}

StatusOr<ResourceClaim> DecodeClaimTemplateSpec(const Value& v) {
  ResourceClaim c;
  if (const Value* md = Field(v, "metadata"); md != nullptr) {
    c.name = Str(*md, "name");
    c.namespace_name = Str(*md, "namespace");
  }
  const Value* spec = Field(v, "spec");
  const Value* inner = spec != nullptr ? Field(*spec, "spec") : nullptr;
  if (inner == nullptr) return c;
  return DecodeClaimSpec(*inner, std::move(c));
}

StatusOr<DeviceTaintRule> DecodeDeviceTaintRule(const Value& v) {
  DeviceTaintRule r;
  if (const Value* md = Field(v, "metadata"); md != nullptr) r.name = Str(*md, "name");
  const Value* spec = Field(v, "spec");
  if (spec == nullptr) return r;
  if (const Value* sel = Field(*spec, "deviceSelector"); sel != nullptr && sel->IsObject()) {
    r.has_selector = true;
    r.driver = OptStr(*sel, "driver");
    r.pool = OptStr(*sel, "pool");
    r.device = OptStr(*sel, "device");
  }
  if (const Value* t = Field(*spec, "taint"); t != nullptr) {
    r.taint = {Str(*t, "key"), Str(*t, "value"), Str(*t, "effect")};
  }
  return r;
}

}  // namespace draco::alloc
