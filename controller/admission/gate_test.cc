#include "controller/admission/gate.h"

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <yaml-cpp/yaml.h>

#include "controller/api/codec.h"
#include "controller/cel/program.h"
#include "controller/cel/stdlib.h"

namespace draco::admission {
namespace {

// rapidjson -> CEL value, as the API server hands the admitted object to CEL (maps of strings).
cel::Value ToCel(const rapidjson::Value& v) {
  if (v.IsObject()) {
    std::vector<std::pair<cel::Value, cel::Value>> entries;
    for (auto it = v.MemberBegin(); it != v.MemberEnd(); ++it) {
      entries.emplace_back(cel::Value::String(it->name.GetString()), ToCel(it->value));
    }
    return cel::Value::Map(std::make_shared<cel::MapValueImpl>(std::move(entries)));
  }
  if (v.IsArray()) {
    std::vector<cel::Value> elems;
    for (const auto& e : v.GetArray()) elems.push_back(ToCel(e));
    return cel::Value::List(std::move(elems));
  }
  if (v.IsString()) return cel::Value::String(v.GetString());
  if (v.IsBool()) return cel::Value::Bool(v.GetBool());
  if (v.IsInt64()) return cel::Value::Int(v.GetInt64());
  if (v.IsNumber()) return cel::Value::Double(v.GetDouble());
  return cel::Value::Null();
}

// The chart's matchConditions (charts/draco/files/gate-conditions.yaml), compiled.
class ChartConditions {
 public:
  ChartConditions() {
    cel::AddStandardLibrary(env_);
    env_.AddVariable("object", cel::Type::Dyn());
    YAML::Node list =
        YAML::LoadFile(std::string(DRACO_SOURCE_DIR) + "/charts/draco/files/gate-conditions.yaml");
    for (const auto& c : list) {
      names_.push_back(c["name"].as<std::string>());
      auto r = cel::Compile(env_, c["expression"].as<std::string>());
      EXPECT_NE(r.program, nullptr) << names_.back() << ": " << r.error;
      programs_.push_back(r.program);
    }
  }
  size_t size() const { return programs_.size(); }
  // All conditions true, as the API server requires before it mutates.
  bool Match(const std::string& pod_json) const {
    rapidjson::Document doc;
    doc.Parse(pod_json.c_str());
    EXPECT_FALSE(doc.HasParseError()) << pod_json;
    cel::SimpleActivation act;
    act.Bind("object", ToCel(doc));
    for (size_t i = 0; i < programs_.size(); ++i) {
      if (!programs_[i]) return false;
      auto r = programs_[i]->Evaluate(act);
      EXPECT_TRUE(r.ok());
      EXPECT_TRUE(r->value.IsBool()) << names_[i] << ": " << r->value.DebugString();
      if (!r->value.IsBool() || !r->value.bool_value()) return false;
    }
    return true;
  }

 private:
  cel::Env env_;
  std::vector<std::string> names_;
  std::vector<std::shared_ptr<const cel::Program>> programs_;
};

struct PodCase {
  const char* name;
  const char* spec;  // JSON members of spec
  bool gate;
};

const PodCase kPods[] = {
    {"claim", R"("resourceClaims":[{"name":"gpu","resourceClaimName":"c"}])", true},
    {"template claim", R"("resourceClaims":[{"name":"gpu","resourceClaimTemplateName":"t"}])",
     true},
    {"two claims",
     R"("resourceClaims":[{"name":"a","resourceClaimName":"c"},{"name":"b","resourceClaimName":"d"}])",
     true},
    {"no claims", R"("schedulerName":"default-scheduler")", false},
    {"empty claims list", R"("resourceClaims":[])", false},
    {"bound", R"("nodeName":"node-1","resourceClaims":[{"name":"gpu","resourceClaimName":"c"}])",
     false},
    {"empty nodeName", R"("nodeName":"","resourceClaims":[{"name":"gpu","resourceClaimName":"c"}])",
     true},
    {"other gate",
     R"("schedulingGates":[{"name":"example.com/other"}],"resourceClaims":[{"name":"g","resourceClaimName":"c"}])",
     true},
    {"already gated",
     R"("schedulingGates":[{"name":"draco.dev/allocation"}],"resourceClaims":[{"name":"g","resourceClaimName":"c"}])",
     false},
    {"gated among others",
     R"("schedulingGates":[{"name":"a.example.com/x"},{"name":"draco.dev/allocation"}],"resourceClaims":[{"name":"g","resourceClaimName":"c"}])",
     false},
    {"empty gates",
     R"("schedulingGates":[],"resourceClaims":[{"name":"g","resourceClaimName":"c"}])", true},
    {"bound, no claims", R"("nodeName":"node-1")", false},
};

std::string PodJson(const PodCase& c) {
  return std::string(
             R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ns"},)") +
         R"("spec":{"containers":[{"name":"c","image":"busybox"}],)" + c.spec + "}}";
}

TEST(GateTest, WebhookAndChartPolicyGateExactlyTheSamePods) {
  ChartConditions policy;
  ASSERT_EQ(policy.size(), 3u);
  for (const auto& c : kPods) {
    std::string json = PodJson(c);
    // The pod as the webhook sees it.
    auto pod = api::Decode<api::Pod>(json);
    ASSERT_TRUE(pod.ok()) << c.name << ": " << pod.status().ToString();
    EXPECT_EQ(ShouldGate(*pod), c.gate) << "webhook, pod " << c.name;
    EXPECT_EQ(policy.Match(json), c.gate) << "chart policy, pod " << c.name;
  }
}

TEST(GateTest, PatchAddsTheGateAndKeepsOthers) {
  api::Pod pod;
  EXPECT_EQ(
      GatePatch(pod),
      R"([{"op":"add","path":"/spec/schedulingGates","value":[{"name":"draco.dev/allocation"}]}])");
  pod.spec.scheduling_gates.push_back({"example.com/other", {}});
  EXPECT_EQ(
      GatePatch(pod),
      R"([{"op":"add","path":"/spec/schedulingGates/-","value":{"name":"draco.dev/allocation"}}])");
}

}  // namespace
}  // namespace draco::admission
