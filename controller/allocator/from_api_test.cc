// from_api.h against the lenient json_codec.h decoders: every object is decoded both ways (the api
// codec + ToAlloc*, and alloc::Decode* on the same JSON) and the allocator models must be equal,
// field by field, with quantities also equal as text. Allocation results round-trip both ways.
#include "controller/allocator/from_api.h"

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "controller/allocator/allocator.h"
#include "controller/allocator/json_codec.h"
#include "controller/allocator/scenario_json.h"
#include "controller/api/codec.h"

namespace draco::alloc {
namespace {

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

rapidjson::Document Parse(const std::string& json) {
  rapidjson::Document d;
  d.Parse(json.data(), json.size());
  EXPECT_FALSE(d.HasParseError()) << json;
  return d;
}

// Qty equality is by value; the text (kept for output) must match too.
void ExpectSameText(const std::vector<std::pair<std::string, Qty>>& a,
                    const std::vector<std::pair<std::string, Qty>>& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].first, b[i].first) << what;
    EXPECT_EQ(a[i].second.ToString(), b[i].second.ToString()) << what << " " << a[i].first;
  }
}

void ExpectSameSlice(const ResourceSlice& got, const ResourceSlice& want) {
  ASSERT_EQ(got.devices.size(), want.devices.size()) << want.name;
  for (size_t i = 0; i < got.devices.size(); ++i) {
    const Device& g = got.devices[i];
    const Device& w = want.devices[i];
    EXPECT_TRUE(g.attributes == w.attributes) << want.name << "/" << w.name << " attributes";
    EXPECT_TRUE(g.capacity == w.capacity) << want.name << "/" << w.name << " capacity";
    ASSERT_EQ(g.capacity.size(), w.capacity.size());
    for (size_t k = 0; k < g.capacity.size(); ++k) {
      EXPECT_EQ(g.capacity[k].second.value.ToString(), w.capacity[k].second.value.ToString());
    }
    EXPECT_TRUE(g.consumes_counters == w.consumes_counters) << w.name << " consumesCounters";
    ASSERT_EQ(g.consumes_counters.size(), w.consumes_counters.size());
    for (size_t k = 0; k < g.consumes_counters.size(); ++k) {
      ExpectSameText(g.consumes_counters[k].counters, w.consumes_counters[k].counters, w.name);
    }
    EXPECT_TRUE(g == w) << want.name << "/" << w.name;
  }
  for (size_t i = 0; i < got.shared_counters.size() && i < want.shared_counters.size(); ++i) {
    ExpectSameText(got.shared_counters[i].counters, want.shared_counters[i].counters, want.name);
  }
  EXPECT_TRUE(got == want) << want.name;
}

// One JSON object of each kind, checked both ways.
void CheckSlice(const std::string& json) {
  SCOPED_TRACE(json.substr(0, 200));
  auto a = api::Decode<api::ResourceSlice>(json);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  auto old = DecodeResourceSlice(Parse(json));
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  ExpectSameSlice(ToAllocSlice(*a), *old);
}

void CheckClass(const std::string& json) {
  SCOPED_TRACE(json.substr(0, 200));
  auto a = api::Decode<api::DeviceClass>(json);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  auto old = DecodeDeviceClass(Parse(json));
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  EXPECT_TRUE(ToAllocClass(*a) == *old);
}

void CheckAllocationResultRoundTrip(const AllocationResult& r) {
  // Reverse: equal to the old FromAllocResult (JSON text through api::Decode).
  auto via_json = api::Decode<api::AllocationResult>(AllocationResultToJson(r));
  ASSERT_TRUE(via_json.ok()) << via_json.status().ToString();
  api::AllocationResult direct = ToApiAllocationResult(r);
  EXPECT_TRUE(direct == *via_json);
  EXPECT_EQ(api::Encode(direct), api::Encode(*via_json));
  // And back: the allocator form is restored.
  AllocationResult back = ToAllocAllocationResult(direct);
  EXPECT_TRUE(back == r);
  for (size_t i = 0; i < back.results.size() && i < r.results.size(); ++i) {
    ExpectSameText(back.results[i].consumed_capacity, r.results[i].consumed_capacity, "consumed");
  }
}

void CheckClaim(const std::string& json) {
  SCOPED_TRACE(json.substr(0, 200));
  auto a = api::Decode<api::ResourceClaim>(json);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ResourceClaim got = ToAllocClaim(*a);
  // The old controller path: api::Encode, then the lenient decoder, then DefaultClaim.
  auto old = DecodeResourceClaim(Parse(api::Encode(*a)));
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  DefaultClaim(*old);
  EXPECT_TRUE(got.requests == old->requests) << "requests";
  for (size_t i = 0; i < got.requests.size() && i < old->requests.size(); ++i) {
    if (got.requests[i].exactly && old->requests[i].exactly) {
      ExpectSameText(got.requests[i].exactly->capacity_requests,
                     old->requests[i].exactly->capacity_requests, "capacity requests");
    }
  }
  EXPECT_TRUE(got.constraints == old->constraints) << "constraints";
  EXPECT_TRUE(got.config == old->config) << "config";
  EXPECT_TRUE(got.allocation == old->allocation) << "allocation";
  EXPECT_TRUE(got == *old);
  // The raw JSON through the lenient decoder gives the same (no `consumedCapacity: {}` here).
  auto raw = DecodeResourceClaim(Parse(json));
  ASSERT_TRUE(raw.ok()) << raw.status().ToString();
  DefaultClaim(*raw);
  EXPECT_TRUE(got == *raw);
  if (got.allocation) CheckAllocationResultRoundTrip(*got.allocation);
}

void CheckTaintRule(const std::string& json) {
  SCOPED_TRACE(json.substr(0, 200));
  auto a = api::Decode<api::DeviceTaintRule>(json);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  auto old = DecodeDeviceTaintRule(Parse(json));
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  EXPECT_TRUE(ToAllocTaintRule(*a) == *old);
}

void CheckNode(const std::string& json) {
  SCOPED_TRACE(json.substr(0, 200));
  auto a = api::Decode<api::Node>(json);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  auto old = DecodeNode(Parse(json));
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  EXPECT_TRUE(ToAllocNode(*a) == *old);
}

// Both give the same policy, or both fail with the same message.
void CheckPolicy(const std::string& json) {
  SCOPED_TRACE(json);
  auto a = api::Decode<api::AllocationPolicy>(json);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  auto got = ToAllocPolicy(*a);
  auto old = DecodeAllocationPolicy(Parse(json));
  ASSERT_EQ(got.ok(), old.ok()) << got.status().ToString() << " vs " << old.status().ToString();
  if (!got.ok()) {
    EXPECT_EQ(got.status().ToString(), old.status().ToString());
    return;
  }
  EXPECT_TRUE(*got == *old);
  for (size_t i = 0; i < got->namespace_limits.size(); ++i) {
    ExpectSameText(got->namespace_limits[i].max_capacity, old->namespace_limits[i].max_capacity,
                   "maxCapacity");
  }
}

std::string Golden(const std::string& name) {
  return ReadFile(std::string(DRACO_SOURCE_DIR) + "/tests/golden/api/" + name + ".golden.json");
}

TEST(FromApiTest, GoldenObjects) {
  CheckSlice(Golden("resourceslice"));
  CheckSlice(Golden("resourceslice-counters"));
  CheckClass(Golden("deviceclass"));
  CheckClaim(Golden("resourceclaim"));
  CheckTaintRule(Golden("devicetaintrule"));
  CheckNode(Golden("node"));
}

TEST(FromApiTest, DifferentialCases) {
  std::ifstream in(std::string(DRACO_SOURCE_DIR) + "/tests/differential/cases.jsonl");
  std::string line;
  int cases = 0;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    rapidjson::Document d = Parse(line);
    ++cases;
    auto each = [&](const char* member, void (*check)(const std::string&)) {
      auto it = d.FindMember(member);
      if (it == d.MemberEnd() || !it->value.IsArray()) return;
      for (const auto& e : it->value.GetArray()) check(Compact(e));
    };
    each("classes", CheckClass);
    each("slices", CheckSlice);
    each("claims", CheckClaim);
    each("allocatedClaims", CheckClaim);
    each("deviceTaintRules", CheckTaintRule);
    if (auto it = d.FindMember("node"); it != d.MemberEnd()) CheckNode(Compact(it->value));
  }
  EXPECT_GT(cases, 10);
}

// Every field the allocator reads, with nil-vs-empty and quantity forms.
TEST(FromApiTest, RichSlice) {
  CheckSlice(R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice",
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
          {"key":"x","operator":"Exists"}]}]}}]}})");
  CheckSlice(R"({"metadata":{"name":"s2"},"spec":{"driver":"d","pool":{"name":"p"},
    "allNodes":false,"nodeName":"n","devices":[]}})");
  CheckSlice(R"({"metadata":{"name":"s3"}})");
}

TEST(FromApiTest, RichClass) {
  CheckClass(R"({"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass",
    "metadata":{"name":"gpu","labels":{"tier":"a"},"creationTimestamp":"2024-01-01T00:00:00Z"},
    "spec":{"selectors":[{"cel":{"expression":"device.driver == 'x'"}},{}],
      "config":[{"opaque":{"driver":"d","parameters":{"a":[1,2.5,{"b":null}],"s":"t"}}},{},
        {"opaque":{"driver":"e"}}],
      "extendedResourceName":"example.com/gpu"}})");
  CheckClass(R"({"metadata":{"name":"bare"}})");
  CheckClass(R"({"metadata":{"name":"empty"},"spec":{}})");
}

TEST(FromApiTest, RichClaim) {
  CheckClaim(R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim",
    "metadata":{"name":"c","namespace":"ns","uid":"u1","annotations":{"k":"v"}},
    "spec":{"devices":{
      "requests":[
        {"name":"a","exactly":{"deviceClassName":"gpu","selectors":[{"cel":{"expression":"true"}},
           {}],"allocationMode":"ExactCount","count":2,"adminAccess":false,
           "tolerations":[{"key":"k","operator":"Equal","value":"v","effect":"NoExecute",
             "tolerationSeconds":30},{"operator":"Exists"}],
           "capacity":{"requests":{"mem":"10Gi","cores":"1500m","n":4}},
           "derivedAttributes":[{"name":"x.example.com/y","expression":"device.attributes"}]}},
        {"name":"b","exactly":{"deviceClassName":"gpu","allocationMode":"All","capacity":{}}},
        {"name":"c","exactly":{"deviceClassName":"gpu","adminAccess":true}},
        {"name":"d","exactly":{}},
        {"name":"e","firstAvailable":[
          {"name":"big","deviceClassName":"gpu","count":4,"selectors":[{"cel":{"expression":"x"}}],
           "tolerations":[{"key":"t","operator":"Exists","effect":"NoSchedule"}],
           "capacity":{"requests":{"mem":"1Gi"}},
           "derivedAttributes":[{"name":"a.b/c","expression":"1"}]},
          {"name":"small","deviceClassName":"cpu","allocationMode":"All"},
          {"name":"empty"}]}],
      "constraints":[{"requests":["a","b"],"matchAttribute":"gpu.example.com/numa"},
        {"distinctAttribute":"gpu.example.com/id"},{}],
      "config":[{"requests":["a"],"opaque":{"driver":"d","parameters":{"x":1.25,"y":[true]}}},
        {"opaque":{"driver":"e"}},{"requests":["b"]}]}},
    "status":{"allocation":{
      "devices":{"results":[
        {"request":"a","driver":"gpu.example.com","pool":"p","device":"d0","adminAccess":false,
         "tolerations":[{"key":"k","operator":"Equal","value":"v","effect":"NoExecute",
           "tolerationSeconds":30}],
         "bindingConditions":["ready"],"bindingFailureConditions":["failed"],"shareID":"s-1",
         "consumedCapacity":{"mem":"10Gi","cores":"1500m"},"skipNodeOperations":["Prepare"]},
        {"request":"e/big","driver":"gpu.example.com","pool":"p","device":"d1"}],
       "config":[{"source":"FromClass","requests":["a"],"opaque":{"driver":"d",
         "parameters":{"k":"v"}}},{"source":"FromClaim","opaque":{"driver":"e"}},
         {"source":"FromClaim"}]},
      "nodeSelector":{"nodeSelectorTerms":[{"matchFields":[{"key":"metadata.name",
        "operator":"In","values":["n1"]}]},{"matchExpressions":[{"key":"z",
        "operator":"DoesNotExist"}]},{}]},
      "allocationTimestamp":"2024-01-01T00:00:00Z"},
     "reservedFor":[{"resource":"pods","name":"p1","uid":"x"},{"name":"p2"}]}})");
  CheckClaim(R"({"metadata":{"name":"bare","namespace":"ns"}})");
  CheckClaim(R"({"metadata":{"name":"noalloc"},"spec":{"devices":{"requests":[{"name":"r",
    "exactly":{"deviceClassName":"gpu"}}]}},"status":{"reservedFor":[]}})");
  CheckClaim(R"({"metadata":{"name":"allnodes"},"status":{"allocation":{"devices":{}}}})");
}

TEST(FromApiTest, RichTaintRulesAndNodes) {
  CheckTaintRule(R"({"metadata":{"name":"r1"},"spec":{"deviceSelector":{"driver":"d",
    "pool":"p","device":"x"},"taint":{"key":"k","value":"v","effect":"NoExecute",
    "timeAdded":"2024-01-01T00:00:00Z"}}})");
  CheckTaintRule(R"({"metadata":{"name":"r2"},"spec":{"deviceSelector":{"pool":""},
    "taint":{"key":"k","effect":"None"}}})");
  CheckTaintRule(R"({"metadata":{"name":"r3"},"spec":{"taint":{"key":"k"}}})");
  CheckTaintRule(R"({"metadata":{"name":"r4"}})");
  CheckNode(R"({"metadata":{"name":"n1","labels":{"a":"b","c":""}},
    "status":{"declaredFeatures":["DRAOptionalNodeOperations","X"],"conditions":[]}})");
  CheckNode(R"({"metadata":{"name":"n2"}})");
}

TEST(FromApiTest, Policies) {
  CheckPolicy(R"({"apiVersion":"draco.dev/v1alpha1","kind":"AllocationPolicy",
    "metadata":{"name":"p"},"spec":{"deviceClassSelector":{"names":["gpu","cpu"]},
    "strategy":"BinPack","priority":7,"namespaceLimits":[{"namespace":"team-a","maxDevices":4,
    "maxCapacity":{"mem":"80Gi","cores":"1500m"}},{"namespace":"*","maxDevices":0},
    {"namespace":"b","maxCapacity":{}}]}})");
  CheckPolicy(R"({"metadata":{"name":"l"},"spec":{"deviceClassSelector":{"labelSelector":{
    "matchLabels":{"tier":"a"},"matchExpressions":[{"key":"k","operator":"In","values":["x"]},
    {"key":"j","operator":"Exists"}]}},"strategy":"Spread","priority":-3}})");
  CheckPolicy(R"({"metadata":{"name":"f"},"spec":{"deviceClassSelector":{"names":[]},
    "strategy":"FirstFit"}})");
  CheckPolicy(R"({"metadata":{"name":"d"},"spec":{"deviceClassSelector":{"names":["x"]}}})");
  // Invalid policies: the same errors.
  CheckPolicy(R"({"metadata":{},"spec":{}})");
  CheckPolicy(R"({"metadata":{"name":"nospec"}})");
  CheckPolicy(R"({"metadata":{"name":"nosel"},"spec":{"strategy":"Spread"}})");
  CheckPolicy(R"({"metadata":{"name":"both"},"spec":{"deviceClassSelector":{"names":["x"],
    "labelSelector":{}}}})");
  CheckPolicy(R"({"metadata":{"name":"neither"},"spec":{"deviceClassSelector":{}}})");
  CheckPolicy(R"({"metadata":{"name":"op"},"spec":{"deviceClassSelector":{"labelSelector":{
    "matchExpressions":[{"key":"k","operator":"Gt","values":["1"]}]}}}})");
  CheckPolicy(R"({"metadata":{"name":"st"},"spec":{"deviceClassSelector":{"names":["x"]},
    "strategy":"Random"}})");
  CheckPolicy(R"({"metadata":{"name":"ns"},"spec":{"deviceClassSelector":{"names":["x"]},
    "namespaceLimits":[{"maxDevices":1}]}})");
}

// What the allocator writes: built in the model, through both reverse paths.
TEST(FromApiTest, AllocationResultRoundTrip) {
  AllocationResult r;
  DeviceRequestAllocationResult d;
  d.request = "r/sub";
  d.driver = "drv";
  d.pool = "pool";
  d.device = "dev";
  d.admin_access = true;
  d.tolerations.push_back({"k", "Equal", "v", "NoSchedule", 5});
  d.tolerations.push_back({"", "Exists", "", "", std::nullopt});
  d.binding_conditions = {"a"};
  d.binding_failure_conditions = {"b"};
  d.share_id = "share";
  d.consumed_capacity.emplace_back("cores", *Qty::Parse("1500m"));
  d.consumed_capacity.emplace_back("mem",
                                   Qty::FromInt64(1 << 30, api::Quantity::Format::kBinarySI));
  d.has_consumed_capacity = true;
  d.skip_node_operations = {"Prepare"};
  r.results.push_back(d);
  r.results.push_back(
      {"r2", "drv", "pool", "dev2", std::nullopt, {}, {}, {}, std::nullopt, {}, false, {}});
  r.config.push_back({"FromClass", {"r"}, true, {"drv", R"({"a":[1,2.5],"b":{}})"}});
  r.config.push_back({"FromClaim", {}, true, {"drv", ""}});
  r.config.push_back({"FromClaim", {"r2"}, false, {}});
  NodeSelector ns;
  ns.terms.push_back({{{"zone", "In", {"a", "b"}}}, {{"metadata.name", "In", {"n1"}}}});
  ns.terms.emplace_back();
  r.node_selector = ns;
  CheckAllocationResultRoundTrip(r);
  CheckAllocationResultRoundTrip(AllocationResult{});
}

}  // namespace
}  // namespace draco::alloc
