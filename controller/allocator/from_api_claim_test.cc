// from_api.h for claims, taint rules, nodes and AllocationPolicies: API objects (JSON decoded by
// the api codec) against hand-written compute-form values, with defaulting, nil-vs-empty
// distinctions and quantity texts; allocation results round-trip both ways.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "controller/allocator/allocator.h"
#include "controller/allocator/from_api.h"
#include "controller/allocator/scenario_json.h"
#include "controller/api/codec.h"

namespace draco::alloc {
namespace {

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

std::vector<std::string> Texts(const std::vector<std::pair<std::string, Qty>>& qs) {
  std::vector<std::string> out;
  for (const auto& [name, q] : qs) out.push_back(name + "=" + q.ToString());
  return out;
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
  ASSERT_EQ(back.results.size(), r.results.size());
  for (size_t i = 0; i < back.results.size(); ++i) {
    EXPECT_EQ(Texts(back.results[i].consumed_capacity), Texts(r.results[i].consumed_capacity));
  }
}

RequestSpec Spec(std::string name, std::string cls, std::string mode, int64_t count) {
  RequestSpec s;
  s.name = std::move(name);
  s.device_class_name = std::move(cls);
  s.allocation_mode = std::move(mode);
  s.count = count;
  return s;
}

DeviceRequest Exactly(RequestSpec s) {
  DeviceRequest r;
  r.name = s.name;
  r.exactly = std::move(s);
  return r;
}

constexpr const char* kRichClaim = R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim",
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
     "reservedFor":[{"resource":"pods","name":"p1","uid":"x"},{"name":"p2"}]}})";

ResourceClaim WantRichClaim() {
  ResourceClaim c;
  c.namespace_name = "ns";
  c.name = "c";
  c.uid = "u1";
  c.annotations = {{"k", "v"}};
  RequestSpec a = Spec("a", "gpu", "ExactCount", 2);
  a.selectors = {"true", ""};
  a.admin_access = false;
  a.tolerations = {{"k", "Equal", "v", "NoExecute", 30}, {"", "Exists", "", "", std::nullopt}};
  a.has_capacity = true;
  a.capacity_requests = {{"cores", Q("1500m")}, {"mem", Q("10Gi")}, {"n", Q("4")}};
  a.has_derived_attributes = true;
  a.derived_attributes = {{"x.example.com/y", "device.attributes"}};
  RequestSpec b = Spec("b", "gpu", "All", 0);  // All is not defaulted to a count
  b.has_capacity = true;                       // `capacity: {}` is present
  RequestSpec rc = Spec("c", "gpu", "ExactCount", 1);
  rc.admin_access = true;
  RequestSpec big = Spec("big", "gpu", "ExactCount", 4);
  big.selectors = {"x"};
  big.tolerations = {{"t", "Exists", "", "NoSchedule", std::nullopt}};
  big.has_capacity = true;
  big.capacity_requests = {{"mem", Q("1Gi")}};
  big.has_derived_attributes = true;
  big.derived_attributes = {{"a.b/c", "1"}};
  DeviceRequest e;
  e.name = "e";
  e.first_available = {big, Spec("small", "cpu", "All", 0), Spec("empty", "", "ExactCount", 1)};
  c.requests = {Exactly(a), Exactly(b), Exactly(rc), Exactly(Spec("d", "", "ExactCount", 1)), e};
  c.constraints = {{{"a", "b"}, "gpu.example.com/numa", std::nullopt},
                   {{}, std::nullopt, "gpu.example.com/id"},
                   {}};
  c.config = {
      {{"a"}, true, {"d", R"({"x":1.25,"y":[true]})"}}, {{}, true, {"e", ""}}, {{"b"}, false, {}}};

  AllocationResult r;
  DeviceRequestAllocationResult d0;
  d0.request = "a";
  d0.driver = "gpu.example.com";
  d0.pool = "p";
  d0.device = "d0";
  d0.admin_access = false;
  d0.tolerations = {{"k", "Equal", "v", "NoExecute", 30}};
  d0.binding_conditions = {"ready"};
  d0.binding_failure_conditions = {"failed"};
  d0.share_id = "s-1";
  d0.consumed_capacity = {{"cores", Q("1500m")}, {"mem", Q("10Gi")}};
  d0.has_consumed_capacity = true;
  d0.skip_node_operations = {"Prepare"};
  DeviceRequestAllocationResult d1;
  d1.request = "e/big";
  d1.driver = "gpu.example.com";
  d1.pool = "p";
  d1.device = "d1";
  r.results = {d0, d1};
  r.config = {{"FromClass", {"a"}, true, {"d", R"({"k":"v"})"}},
              {"FromClaim", {}, true, {"e", ""}},
              {"FromClaim", {}, false, {}}};
  r.node_selector = NodeSelector{
      {{{}, {{"metadata.name", "In", {"n1"}}}}, {{{"z", "DoesNotExist", {}}}, {}}, {}}};
  c.allocation = r;
  c.reserved_for = {"p1", "p2"};
  return c;
}

TEST(FromApiClaimTest, RichClaim) {
  ResourceClaim got = ToAllocClaim(DecodeOrDie<api::ResourceClaim>(kRichClaim));
  ResourceClaim want = WantRichClaim();
  ASSERT_EQ(got.requests.size(), want.requests.size());
  for (size_t i = 0; i < got.requests.size(); ++i) {
    EXPECT_TRUE(got.requests[i] == want.requests[i]) << want.requests[i].name;
  }
  EXPECT_EQ(Texts(got.requests[0].exactly->capacity_requests),
            (std::vector<std::string>{"cores=1500m", "mem=10Gi", "n=4"}));
  EXPECT_TRUE(got.constraints == want.constraints);
  EXPECT_TRUE(got.config == want.config);
  EXPECT_TRUE(got.allocation == want.allocation);
  EXPECT_TRUE(got == want);
  CheckResultRoundTrip(*got.allocation);

  // As given: no defaulting of modes, counts or toleration operators.
  ResourceClaim given = ToAllocClaimAsGiven(DecodeOrDie<api::ResourceClaim>(kRichClaim));
  EXPECT_EQ(given.requests[2].exactly->allocation_mode, "");
  EXPECT_EQ(given.requests[2].exactly->count, 0);
  EXPECT_EQ(given.requests[4].first_available[2].allocation_mode, "");
  EXPECT_EQ(given.requests[0].exactly->tolerations[1].op, "Exists");
}

TEST(FromApiClaimTest, SmallClaimsAndTemplates) {
  ResourceClaim bare;
  bare.namespace_name = "ns";
  bare.name = "bare";
  EXPECT_TRUE(ToAllocClaim(DecodeOrDie<api::ResourceClaim>(
                  R"({"metadata":{"name":"bare","namespace":"ns"}})")) == bare);
  ResourceClaim noalloc;
  noalloc.name = "noalloc";
  noalloc.requests = {Exactly(Spec("r", "gpu", "ExactCount", 1))};
  EXPECT_TRUE(ToAllocClaim(DecodeOrDie<api::ResourceClaim>(
                  R"({"metadata":{"name":"noalloc"},"spec":{"devices":{"requests":[{"name":"r",
    "exactly":{"deviceClassName":"gpu"}}]}},"status":{"reservedFor":[]}})")) == noalloc);
  ResourceClaim allnodes;  // an empty allocation is still an allocation
  allnodes.name = "allnodes";
  allnodes.allocation = AllocationResult{};
  EXPECT_TRUE(ToAllocClaim(DecodeOrDie<api::ResourceClaim>(
                  R"({"metadata":{"name":"allnodes"},"status":{"allocation":{"devices":{}}}})")) ==
              allnodes);

  ResourceClaim from_template = ToAllocClaimTemplate(DecodeOrDie<api::ResourceClaimTemplate>(
      R"({"metadata":{"name":"t","namespace":"ns","uid":"x","annotations":{"a":"b"}},
    "spec":{"metadata":{"labels":{"l":"v"}},"spec":{"devices":{"requests":[{"name":"r",
    "exactly":{"deviceClassName":"gpu","count":3}}]}}}})"));
  ResourceClaim want_t;
  want_t.namespace_name = "ns";
  want_t.name = "t";
  want_t.requests = {Exactly(Spec("r", "gpu", "ExactCount", 3))};
  EXPECT_TRUE(from_template == want_t);
}

TEST(FromApiClaimTest, TaintRulesAndNodes) {
  auto rule = [](const std::string& json) {
    return ToAllocTaintRule(DecodeOrDie<api::DeviceTaintRule>(json));
  };
  EXPECT_TRUE(rule(R"({"metadata":{"name":"r1"},"spec":{"deviceSelector":{"driver":"d",
    "pool":"p","device":"x"},"taint":{"key":"k","value":"v","effect":"NoExecute",
    "timeAdded":"2024-01-01T00:00:00Z"}}})") ==
              (DeviceTaintRule{"r1", true, "d", "p", "x", {"k", "v", "NoExecute"}}));
  // An empty pool is a value (matches only pool ""), an absent one matches any.
  EXPECT_TRUE(rule(R"({"metadata":{"name":"r2"},"spec":{"deviceSelector":{"pool":""},
    "taint":{"key":"k","effect":"None"}}})") ==
              (DeviceTaintRule{"r2", true, std::nullopt, "", std::nullopt, {"k", "", "None"}}));
  EXPECT_TRUE(
      rule(R"({"metadata":{"name":"r3"},"spec":{"taint":{"key":"k"}}})") ==
      (DeviceTaintRule{"r3", false, std::nullopt, std::nullopt, std::nullopt, {"k", "", ""}}));
  EXPECT_TRUE(rule(R"({"metadata":{"name":"r4"}})") ==
              (DeviceTaintRule{"r4", false, std::nullopt, std::nullopt, std::nullopt, {}}));

  Node n1 = ToAllocNode(DecodeOrDie<api::Node>(
      R"({"metadata":{"name":"n1","labels":{"a":"b","c":""}},
    "status":{"declaredFeatures":["DRAOptionalNodeOperations","X"],"conditions":[]}})"));
  EXPECT_TRUE(n1 == (Node{"n1", {{"a", "b"}, {"c", ""}}, {"DRAOptionalNodeOperations", "X"}}));
  EXPECT_TRUE(ToAllocNode(DecodeOrDie<api::Node>(R"({"metadata":{"name":"n2"}})")) ==
              (Node{"n2", {}, {}}));
}

StatusOr<AllocationPolicy> Policy(const std::string& json) {
  return ToAllocPolicy(DecodeOrDie<api::AllocationPolicy>(json));
}

TEST(FromApiClaimTest, Policies) {
  auto p = Policy(R"({"apiVersion":"draco.dev/v1alpha1","kind":"AllocationPolicy",
    "metadata":{"name":"p"},"spec":{"deviceClassSelector":{"names":["gpu","cpu"]},
    "strategy":"BinPack","priority":7,"namespaceLimits":[{"namespace":"team-a","maxDevices":4,
    "maxCapacity":{"mem":"80Gi","cores":"1500m"}},{"namespace":"*","maxDevices":0},
    {"namespace":"b","maxCapacity":{}}]}})");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  AllocationPolicy want;
  want.name = "p";
  want.class_names = std::vector<std::string>{"gpu", "cpu"};
  want.strategy = Strategy::kBinPack;
  want.priority = 7;
  want.namespace_limits = {{"team-a", 4, {{"cores", Q("1500m")}, {"mem", Q("80Gi")}}},
                           {"*", 0, {}},
                           {"b", std::nullopt, {}}};
  EXPECT_TRUE(*p == want);
  EXPECT_EQ(Texts(p->namespace_limits[0].max_capacity),
            (std::vector<std::string>{"cores=1500m", "mem=80Gi"}));

  p = Policy(R"({"metadata":{"name":"l"},"spec":{"deviceClassSelector":{"labelSelector":{
    "matchLabels":{"tier":"a"},"matchExpressions":[{"key":"k","operator":"In","values":["x"]},
    {"key":"j","operator":"Exists"}]}},"strategy":"Spread","priority":-3}})");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  want = AllocationPolicy{};
  want.name = "l";
  want.has_label_selector = true;
  want.match_labels = {{"tier", "a"}};
  want.match_expressions = {{"k", "In", {"x"}}, {"j", "Exists", {}}};
  want.strategy = Strategy::kSpread;
  want.priority = -3;
  EXPECT_TRUE(*p == want);

  p = Policy(R"({"metadata":{"name":"f"},"spec":{"deviceClassSelector":{"names":[]},
    "strategy":"FirstFit"}})");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  want = AllocationPolicy{};
  want.name = "f";
  want.class_names = std::vector<std::string>{};  // present and empty: selects no class
  EXPECT_TRUE(*p == want);
  p = Policy(R"({"metadata":{"name":"d"},"spec":{"deviceClassSelector":{"names":["x"]}}})");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->strategy, Strategy::kFirstFit);

  // The CRD's structural rules, with the policy named.
  auto error = [](const std::string& json) {
    auto r = Policy(json);
    EXPECT_FALSE(r.ok()) << json;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << json;
    return r.status().message();
  };
  EXPECT_EQ(error(R"({"metadata":{},"spec":{}})"), "AllocationPolicy: metadata.name is required");
  EXPECT_EQ(error(R"({"metadata":{"name":"nospec"}})"),
            "AllocationPolicy nospec: spec is required");
  EXPECT_EQ(error(R"({"metadata":{"name":"nosel"},"spec":{"strategy":"Spread"}})"),
            "AllocationPolicy nosel: spec.deviceClassSelector is required");
  const std::string one =
      ": set exactly one of deviceClassSelector.names and deviceClassSelector.labelSelector";
  EXPECT_EQ(error(R"({"metadata":{"name":"both"},"spec":{"deviceClassSelector":{"names":["x"],
    "labelSelector":{}}}})"),
            "AllocationPolicy both" + one);
  EXPECT_EQ(error(R"({"metadata":{"name":"neither"},"spec":{"deviceClassSelector":{}}})"),
            "AllocationPolicy neither" + one);
  EXPECT_EQ(error(R"({"metadata":{"name":"op"},"spec":{"deviceClassSelector":{"labelSelector":{
    "matchExpressions":[{"key":"k","operator":"Gt","values":["1"]}]}}}})"),
            "AllocationPolicy op: unknown labelSelector operator \"Gt\"");
  EXPECT_EQ(error(R"({"metadata":{"name":"st"},"spec":{"deviceClassSelector":{"names":["x"]},
    "strategy":"Random"}})"),
            "AllocationPolicy st: unknown strategy \"Random\"");
  EXPECT_EQ(error(R"({"metadata":{"name":"ns"},"spec":{"deviceClassSelector":{"names":["x"]},
    "namespaceLimits":[{"maxDevices":1}]}})"),
            "AllocationPolicy ns: namespaceLimits entry without namespace");
}

// What the allocator writes: built in the compute form, through both reverse paths.
TEST(FromApiClaimTest, AllocationResultRoundTrip) {
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
  d.consumed_capacity.emplace_back("cores", Q("1500m"));
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
  CheckResultRoundTrip(r);
  CheckResultRoundTrip(AllocationResult{});

  // The API form written to status, field by field.
  api::AllocationResult a = ToApiAllocationResult(r);
  ASSERT_EQ(a.devices.results.size(), 2u);
  const api::DeviceRequestAllocationResult& ad = a.devices.results[0];
  EXPECT_EQ(ad.request, "r/sub");
  EXPECT_EQ(ad.device, "dev");
  EXPECT_EQ(ad.admin_access, true);
  ASSERT_EQ(ad.tolerations.size(), 2u);
  EXPECT_EQ(ad.tolerations[0].toleration_seconds, 5);
  EXPECT_EQ(ad.tolerations[1].operator_, "Exists");
  EXPECT_EQ(ad.share_id, "share");
  EXPECT_EQ(ad.consumed_capacity.at("cores").ToString(), "1500m");
  EXPECT_EQ(ad.consumed_capacity.at("mem").ToString(), "1Gi");
  EXPECT_TRUE(a.devices.results[1].consumed_capacity.empty());
  ASSERT_EQ(a.devices.config.size(), 3u);
  EXPECT_EQ(a.devices.config[0].opaque->parameters.json, R"({"a":[1,2.5],"b":{}})");
  EXPECT_FALSE(a.devices.config[2].opaque.has_value());
  ASSERT_TRUE(a.node_selector.has_value());
  EXPECT_EQ(a.node_selector->node_selector_terms.size(), 2u);
  EXPECT_EQ(a.node_selector->node_selector_terms[0].match_fields[0].values,
            (std::vector<std::string>{"n1"}));
}

}  // namespace
}  // namespace draco::alloc
