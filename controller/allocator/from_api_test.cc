// from_api.h field by field: API objects (JSON decoded by the api codec) against hand-written
// compute-form values, covering every field the allocator reads, nil-vs-empty distinctions,
// defaulting, quantities (by value and by text) and the CRD rules of AllocationPolicy. The golden
// API objects and the differential cases are checked for a faithful mirror (names, order,
// quantity texts) and for the allocation result round trip (ToApi(ToAlloc(x)) == x).
#include "controller/allocator/from_api.h"

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "controller/allocator/allocator.h"
#include "controller/allocator/scenario_json.h"
#include "controller/api/codec.h"

namespace draco::alloc {
namespace {

using QtyList = std::vector<std::pair<std::string, Qty>>;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Compact(const rapidjson::Value& v) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  v.Accept(w);
  return std::string(buf.GetString(), buf.GetSize());
}

Qty Q(std::string_view s) {
  auto q = Qty::Parse(s);
  EXPECT_TRUE(q.ok()) << s;
  return q.ok() ? *q : Qty{};
}

template <class T>
T DecodeOrDie(const std::string& json) {
  auto a = api::Decode<T>(json);
  EXPECT_TRUE(a.ok()) << a.status().ToString() << "\n" << json;
  return a.ok() ? *a : T{};
}

// Qty equality is by value; the text kept for output must be the canonical form given.
void ExpectTexts(const QtyList& got, const std::vector<std::string>& texts,
                 const std::string& what) {
  ASSERT_EQ(got.size(), texts.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].second.ToString(), texts[i]) << what << " " << got[i].first;
  }
}

// ToAllocAllocationResult and ToApiAllocationResult are inverse to each other, and the reverse
// equals the upstream-shaped JSON encoder (scenario_json.h) read back by the api codec.
void CheckResultRoundTrip(const AllocationResult& r) {
  api::AllocationResult direct = ToApiAllocationResult(r);
  auto via_json = api::Decode<api::AllocationResult>(ComputeResultToJson(r));
  ASSERT_TRUE(via_json.ok()) << via_json.status().ToString();
  EXPECT_TRUE(direct == *via_json);
  EXPECT_EQ(api::Encode(direct), api::Encode(*via_json));
  AllocationResult back = ToAllocAllocationResult(direct);
  EXPECT_TRUE(back == r);
  for (size_t i = 0; i < back.results.size() && i < r.results.size(); ++i) {
    for (size_t k = 0;
         k < back.results[i].consumed_capacity.size() && k < r.results[i].consumed_capacity.size();
         ++k) {
      EXPECT_EQ(back.results[i].consumed_capacity[k].second.ToString(),
                r.results[i].consumed_capacity[k].second.ToString());
    }
  }
}

// A converted slice mirrors its API object: same devices, attributes and capacities in name
// order, with the API's quantity texts.
void CheckSliceMirrors(const std::string& json) {
  SCOPED_TRACE(json.substr(0, 200));
  auto a = DecodeOrDie<api::ResourceSlice>(json);
  ResourceSlice s = ToAllocSlice(a);
  EXPECT_EQ(s.name, a.metadata.name);
  EXPECT_EQ(s.driver, a.spec.driver);
  EXPECT_EQ(s.pool, a.spec.pool.name);
  EXPECT_EQ(s.generation, a.spec.pool.generation);
  EXPECT_EQ(s.resource_slice_count, a.spec.pool.resource_slice_count);
  EXPECT_EQ(s.node_name, a.spec.node_name);
  ASSERT_EQ(s.devices.size(), a.spec.devices.size());
  for (size_t i = 0; i < s.devices.size(); ++i) {
    const Device& d = s.devices[i];
    const api::Device& ad = a.spec.devices[i];
    EXPECT_EQ(d.name, ad.name);
    ASSERT_EQ(d.attributes.size(), ad.attributes.size());
    auto ait = ad.attributes.begin();
    for (const auto& [name, attr] : d.attributes) {
      EXPECT_EQ(name, (ait++)->first);
      EXPECT_NE(attr.kind, Attribute::Kind::kNone) << d.name << " " << name;
    }
    ASSERT_EQ(d.capacity.size(), ad.capacity.size());
    auto cit = ad.capacity.begin();
    for (const auto& [name, cap] : d.capacity) {
      EXPECT_EQ(name, cit->first);
      EXPECT_EQ(cap.value.ToString(), cit->second.value.ToString());
      EXPECT_EQ(cap.request_policy.has_value(), cit->second.request_policy.has_value());
      ++cit;
    }
    EXPECT_EQ(d.consumes_counters.size(), ad.consumes_counters.size());
    EXPECT_EQ(d.taints.size(), ad.taints.size());
  }
  ASSERT_EQ(s.shared_counters.size(), a.spec.shared_counters.size());
  for (size_t i = 0; i < s.shared_counters.size(); ++i) {
    const auto& ac = a.spec.shared_counters[i].counters;
    ASSERT_EQ(s.shared_counters[i].counters.size(), ac.size());
    auto it = ac.begin();
    for (const auto& [name, q] : s.shared_counters[i].counters) {
      EXPECT_EQ(name, it->first);
      EXPECT_EQ(q.ToString(), (it++)->second.value.ToString());
    }
  }
}

void CheckClaimMirrors(const std::string& json) {
  SCOPED_TRACE(json.substr(0, 200));
  auto a = DecodeOrDie<api::ResourceClaim>(json);
  ResourceClaim c = ToAllocClaim(a);
  EXPECT_EQ(c.name, a.metadata.name);
  EXPECT_EQ(c.namespace_name, a.metadata.namespace_);
  ASSERT_EQ(c.requests.size(), a.spec.devices.requests.size());
  for (size_t i = 0; i < c.requests.size(); ++i) {
    const DeviceRequest& r = c.requests[i];
    const api::DeviceRequest& ar = a.spec.devices.requests[i];
    EXPECT_EQ(r.name, ar.name);
    EXPECT_EQ(r.exactly.has_value(), ar.exactly.has_value());
    EXPECT_EQ(r.first_available.size(), ar.first_available.size());
    // Defaulted: a mode is always set, and ExactCount asks for at least one device.
    if (r.exactly) {
      EXPECT_FALSE(r.exactly->allocation_mode.empty());
      if (r.exactly->allocation_mode == "ExactCount") {
        EXPECT_GE(r.exactly->count, 1);
      }
    }
  }
  EXPECT_EQ(c.constraints.size(), a.spec.devices.constraints.size());
  EXPECT_EQ(c.config.size(), a.spec.devices.config.size());
  ASSERT_EQ(c.allocation.has_value(), a.status.allocation.has_value());
  if (c.allocation) CheckResultRoundTrip(*c.allocation);
}

std::string Golden(const std::string& name) {
  return ReadFile(std::string(DRACO_SOURCE_DIR) + "/tests/golden/api/" + name + ".golden.json");
}

TEST(FromApiTest, GoldenObjects) {
  CheckSliceMirrors(Golden("resourceslice"));
  CheckSliceMirrors(Golden("resourceslice-counters"));
  CheckClaimMirrors(Golden("resourceclaim"));

  DeviceClass cls = ToAllocClass(DecodeOrDie<api::DeviceClass>(Golden("deviceclass")));
  EXPECT_FALSE(cls.name.empty());
  EXPECT_EQ(cls.config.size(), cls.config_has_opaque.size());

  DeviceTaintRule rule =
      ToAllocTaintRule(DecodeOrDie<api::DeviceTaintRule>(Golden("devicetaintrule")));
  DeviceTaintRule want_rule{"drain-gpu-0",     true,
                            "gpu.example.com", "node-1",
                            "gpu-0",           {"example.com/maintenance", "planned", "NoExecute"}};
  EXPECT_TRUE(rule == want_rule);

  Node node = ToAllocNode(DecodeOrDie<api::Node>(Golden("node")));
  EXPECT_EQ(node.name, "node-1");
  EXPECT_EQ(node.labels, (std::map<std::string, std::string>{{"kubernetes.io/hostname", "node-1"},
                                                             {"zone", "a"}}));
}

TEST(FromApiTest, DifferentialCases) {
  std::ifstream in(std::string(DRACO_SOURCE_DIR) + "/tests/differential/cases.jsonl");
  std::string line;
  int cases = 0;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    rapidjson::Document d;
    d.Parse(line.data(), line.size());
    ASSERT_FALSE(d.HasParseError()) << line;
    ++cases;
    auto each = [&](const char* member, void (*check)(const std::string&)) {
      auto it = d.FindMember(member);
      if (it == d.MemberEnd() || !it->value.IsArray()) return;
      for (const auto& e : it->value.GetArray()) check(Compact(e));
    };
    each("slices", CheckSliceMirrors);
    each("claims", CheckClaimMirrors);
    each("allocatedClaims", CheckClaimMirrors);
  }
  EXPECT_GT(cases, 10);
}

NodeSelectorRequirement Req(std::string key, std::string op, std::vector<std::string> values) {
  return {std::move(key), std::move(op), std::move(values)};
}

Attribute Attr(Attribute::Kind kind) {
  Attribute a;
  a.kind = kind;
  return a;
}

ResourceSlice WantRichSlice() {
  ResourceSlice s;
  s.name = "s1";
  s.driver = "gpu.example.com";
  s.pool = "p";
  s.generation = 3;
  s.resource_slice_count = 2;
  s.node_selector = NodeSelector{
      {{{Req("zone", "In", {"a", "b"})}, {Req("metadata.name", "NotIn", {"n1"})}}, {}}};
  s.per_device_node_selection = true;
  s.skip_node_operations = {"Prepare"};
  s.shared_counters.push_back(
      {"cs", {{"a", Q("1.5Gi")}, {"mem", Q("80Gi")}, {"sm", Q("100")}, {"z", Q("1")}}});

  Device d0;
  d0.name = "d0";
  Attribute b = Attr(Attribute::Kind::kBool);  // false
  Attribute bs = Attr(Attribute::Kind::kBools);
  bs.bools = {true, false};
  Attribute i = Attr(Attribute::Kind::kInt);
  i.i = -7;
  Attribute is = Attr(Attribute::Kind::kInts);
  is.ints = {1, 2};
  Attribute str = Attr(Attribute::Kind::kString);
  str.s = "x";
  Attribute ss = Attr(Attribute::Kind::kStrings);
  ss.strs = {"p", "q"};
  Attribute two = Attr(Attribute::Kind::kInt);  // int wins over string
  two.i = 1;
  Attribute v = Attr(Attribute::Kind::kVersion);
  v.s = "1.2.3";
  Attribute vs = Attr(Attribute::Kind::kVersions);
  vs.strs = {"1.0.0"};
  // An empty list and no member at all both leave the attribute without a value.
  d0.attributes = {{"b", b},   {"bs", bs}, {"emptylist", Attribute{}},
                   {"i", i},   {"is", is}, {"none", Attribute{}},
                   {"s", str}, {"ss", ss}, {"two", two},
                   {"v", v},   {"vs", vs}};
  CapacityRequestPolicy empty_values;  // validValues: [] is set (not nil) but empty
  empty_values.has_valid_values = true;
  CapacityRequestPolicy mem;
  mem.default_value = Q("1Gi");
  mem.valid_range = CapacityRange{Q("1Gi"), Q("40Gi"), Q("512Mi")};
  CapacityRequestPolicy nomin;
  nomin.valid_range = CapacityRange{std::nullopt, Q("5"), std::nullopt};
  CapacityRequestPolicy slots;
  slots.default_value = Q("1");
  slots.valid_values = {Q("1"), Q("2"), Q("4")};
  slots.has_valid_values = true;
  d0.capacity = {{"emptyvalues", {Q("2"), empty_values}},
                 {"mem", {Q("40Gi"), mem}},
                 {"nilvalues", {Q("1e3"), CapacityRequestPolicy{}}},
                 {"nomin", {Q("1n"), nomin}},
                 {"plain", {Q("1"), std::nullopt}},
                 {"slots", {Q("8"), slots}}};
  d0.consumes_counters = {{"cs", {{"mem", Q("10Gi")}}, {"g1", "g2"}}, {"cs", {}, {}}};
  d0.node_name = "n1";
  d0.taints = {{"k", "v", "NoSchedule"}, {"k2", "", "NoExecute"}};
  d0.binds_to_node = true;
  d0.binding_conditions = std::vector<std::string>{"ready"};
  d0.binding_failure_conditions = std::vector<std::string>{"failed"};
  d0.allow_multiple_allocations = true;

  Device d1;
  d1.name = "d1";
  d1.all_nodes = true;
  d1.binding_conditions = std::vector<std::string>{};
  d1.binding_failure_conditions = std::vector<std::string>{};
  d1.node_selector = NodeSelector{};
  d1.allow_multiple_allocations = false;
  d1.binds_to_node = false;

  Device d2;
  d2.name = "d2";
  d2.node_selector = NodeSelector{{{{Req("x", "Exists", {})}, {}}}};
  s.devices = {d0, d1, d2};
  return s;
}

// Every field the allocator reads, with nil-vs-empty and quantity forms.
TEST(FromApiTest, RichSlice) {
  ResourceSlice got = ToAllocSlice(DecodeOrDie<api::ResourceSlice>(
      R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice",
    "metadata":{"name":"s1","labels":{"a":"b"}},
    "spec":{"driver":"gpu.example.com","pool":{"name":"p","generation":3,"resourceSliceCount":2},
      "nodeSelector":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"zone","operator":"In",
        "values":["a","b"]}],"matchFields":[{"key":"metadata.name","operator":"NotIn",
        "values":["n1"]}]},{}]},
      "perDeviceNodeSelection":true,"skipNodeOperations":["Prepare"],
      "sharedCounters":[{"name":"cs","counters":{"mem":{"value":"80Gi"},"sm":{"value":100},
        "a":{"value":"1.5Gi"},"z":{"value":"1000m"}}}],
      "devices":[
        {"name":"d0","attributes":{"i":{"int":-7},"b":{"bool":false},"s":{"string":"x"},
          "v":{"version":"1.2.3"},"is":{"ints":[1,2]},"bs":{"bools":[true,false]},
          "ss":{"strings":["p","q"]},"vs":{"versions":["1.0.0"]},"none":{},"emptylist":{"ints":[]},
          "two":{"int":1,"string":"s"}},
         "capacity":{"mem":{"value":"40Gi","requestPolicy":{"default":"1Gi","validRange":{
             "min":"1Gi","max":"40Gi","step":"512Mi"}}},
           "slots":{"value":8,"requestPolicy":{"default":"1","validValues":["1","2","4"]}},
           "nilvalues":{"value":"1e3","requestPolicy":{}},
           "emptyvalues":{"value":"2","requestPolicy":{"validValues":[]}},
           "nomin":{"value":"0.1n","requestPolicy":{"validRange":{"max":"5"}}},
           "plain":{"value":"+1"}},
         "consumesCounters":[{"counterSet":"cs","counters":{"mem":{"value":"10Gi"}},
           "compatibilityGroups":["g1","g2"]},{"counterSet":"cs"}],
         "nodeName":"n1","taints":[{"key":"k","value":"v","effect":"NoSchedule",
           "timeAdded":"2024-01-01T00:00:00Z"},{"key":"k2","effect":"NoExecute"}],
         "bindsToNode":true,"bindingConditions":["ready"],"bindingFailureConditions":["failed"],
         "allowMultipleAllocations":true},
        {"name":"d1","allNodes":true,"bindingConditions":[],"bindingFailureConditions":[],
         "nodeSelector":{"nodeSelectorTerms":[]},"allowMultipleAllocations":false,
         "bindsToNode":false},
        {"name":"d2","nodeSelector":{"nodeSelectorTerms":[{"matchExpressions":[
          {"key":"x","operator":"Exists"}]}]}}]}})"));
  ResourceSlice want = WantRichSlice();
  ASSERT_EQ(got.devices.size(), want.devices.size());
  for (size_t i = 0; i < got.devices.size(); ++i) {
    EXPECT_TRUE(got.devices[i].attributes == want.devices[i].attributes) << i;
    EXPECT_TRUE(got.devices[i].capacity == want.devices[i].capacity) << i;
    EXPECT_TRUE(got.devices[i] == want.devices[i]) << i;
  }
  EXPECT_TRUE(got == want);
  // Quantities keep their canonical text for output.
  ExpectTexts(got.shared_counters[0].counters, {"1536Mi", "80Gi", "100", "1"}, "sharedCounters");
  std::vector<std::string> caps;
  for (const auto& [name, c] : got.devices[0].capacity) caps.push_back(c.value.ToString());
  // The text the api codec keeps for each quantity ("+1" as written).
  EXPECT_EQ(caps, (std::vector<std::string>{"2", "40Gi", "1e3", "1n", "+1", "8"}));
  EXPECT_EQ(got.devices[0].capacity[1].second.request_policy->valid_range->step->ToString(),
            "512Mi");

  ResourceSlice s2 = ToAllocSlice(DecodeOrDie<api::ResourceSlice>(
      R"({"metadata":{"name":"s2"},"spec":{"driver":"d","pool":{"name":"p"},
    "allNodes":false,"nodeName":"n","devices":[]}})"));
  ResourceSlice want2;
  want2.name = "s2";
  want2.driver = "d";
  want2.pool = "p";
  want2.all_nodes = false;
  want2.node_name = "n";
  EXPECT_TRUE(s2 == want2);
  ResourceSlice want3;
  want3.name = "s3";
  EXPECT_TRUE(ToAllocSlice(DecodeOrDie<api::ResourceSlice>(R"({"metadata":{"name":"s3"}})")) ==
              want3);
}

TEST(FromApiTest, RichClass) {
  DeviceClass got = ToAllocClass(DecodeOrDie<api::DeviceClass>(
      R"({"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass",
    "metadata":{"name":"gpu","labels":{"tier":"a"},"creationTimestamp":"2024-01-01T00:00:00Z"},
    "spec":{"selectors":[{"cel":{"expression":"device.driver == 'x'"}},{}],
      "config":[{"opaque":{"driver":"d","parameters":{"a":[1,2.5,{"b":null}],"s":"t"}}},{},
        {"opaque":{"driver":"e"}}],
      "extendedResourceName":"example.com/gpu"}})"));
  DeviceClass want;
  want.name = "gpu";
  want.labels = {{"tier", "a"}};
  want.selectors = {"device.driver == 'x'", ""};  // "" marks a selector without cel
  want.config = {{"d", R"({"a":[1,2.5,{"b":null}],"s":"t"})"}, {}, {"e", ""}};
  want.config_has_opaque = {true, false, true};
  want.extended_resource_name = "example.com/gpu";
  want.creation_timestamp = "2024-01-01T00:00:00Z";
  EXPECT_TRUE(got == want);
  EXPECT_EQ(got.config[0].parameters_json, want.config[0].parameters_json);
  DeviceClass bare;
  bare.name = "bare";
  EXPECT_TRUE(ToAllocClass(DecodeOrDie<api::DeviceClass>(R"({"metadata":{"name":"bare"}})")) ==
              bare);
  bare.name = "empty";
  EXPECT_TRUE(ToAllocClass(DecodeOrDie<api::DeviceClass>(
                  R"({"metadata":{"name":"empty"},"spec":{}})")) == bare);
}

}  // namespace
}  // namespace draco::alloc
