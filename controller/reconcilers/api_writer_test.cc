#include "controller/reconcilers/api_writer.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "controller/reconcilers/claim_util.h"

namespace draco::reconcilers {
namespace {

api::Pod GatedPod() {
  api::Pod p;
  p.metadata.name = "p";
  p.metadata.namespace_ = "ns";
  p.metadata.resource_version = "7";
  api::PodSchedulingGate other;
  other.name = "example.com/other";
  api::PodSchedulingGate ours;
  ours.name = std::string(kSchedulingGate);
  p.spec.scheduling_gates = {other, ours};
  return p;
}

api::NodeSelectorTerm Term(const std::string& key, bool with_field) {
  api::NodeSelectorTerm t;
  api::NodeSelectorRequirement r;
  r.key = key;
  r.operator_ = "Exists";
  t.match_expressions.push_back(r);
  if (with_field) {
    api::NodeSelectorRequirement f;
    f.key = "metadata.name";
    f.operator_ = "NotIn";
    f.values = {"bad-node"};
    t.match_fields.push_back(f);
  }
  return t;
}

rapidjson::Document Ops(const std::optional<std::string>& patch) {
  rapidjson::Document d;
  EXPECT_TRUE(patch.has_value());
  if (patch) d.Parse(patch->c_str());
  EXPECT_TRUE(d.IsArray()) << patch.value_or("");
  return d;
}

std::string Op(const rapidjson::Value& op) {
  return std::string(op["op"].GetString()) + " " + op["path"].GetString();
}

// The single pinned requirement inside an added value (a requirement or a one-element list).
void ExpectPin(const rapidjson::Value& v, const char* node) {
  const rapidjson::Value& r = v.IsArray() ? v[0] : v;
  ASSERT_TRUE(r.IsObject());
  EXPECT_STREQ(r["key"].GetString(), "metadata.name");
  EXPECT_STREQ(r["operator"].GetString(), "In");
  ASSERT_EQ(r["values"].Size(), 1u);
  EXPECT_STREQ(r["values"][0].GetString(), node);
}

const rapidjson::Value& RequiredIn(const rapidjson::Value& node_affinity) {
  return node_affinity["requiredDuringSchedulingIgnoredDuringExecution"];
}

TEST(GateRemovalPatchTest, NoGateNoPatch) {
  api::Pod p = GatedPod();
  p.spec.scheduling_gates.pop_back();
  EXPECT_FALSE(GateRemovalPatch(p, kSchedulingGate, "node-3").has_value());
}

TEST(GateRemovalPatchTest, WithoutPinTestsAndRemovesTheGateOnly) {
  auto d = Ops(GateRemovalPatch(GatedPod(), kSchedulingGate, ""));
  ASSERT_EQ(d.Size(), 2u);
  EXPECT_EQ(Op(d[0]), "test /spec/schedulingGates/1/name");
  EXPECT_STREQ(d[0]["value"].GetString(), "draco.dev/allocation");
  EXPECT_EQ(Op(d[1]), "remove /spec/schedulingGates/1");
}

TEST(GateRemovalPatchTest, PinCreatesTheAffinityWhenThePodHasNone) {
  auto d = Ops(GateRemovalPatch(GatedPod(), kSchedulingGate, "node-3"));
  ASSERT_EQ(d.Size(), 4u);
  EXPECT_EQ(Op(d[0]), "test /metadata/resourceVersion");
  EXPECT_STREQ(d[0]["value"].GetString(), "7");
  EXPECT_EQ(Op(d[1]), "test /spec/schedulingGates/1/name");
  EXPECT_EQ(Op(d[2]), "remove /spec/schedulingGates/1");
  EXPECT_EQ(Op(d[3]), "add /spec/affinity");
  const auto& terms = RequiredIn(d[3]["value"]["nodeAffinity"])["nodeSelectorTerms"];
  ASSERT_EQ(terms.Size(), 1u);
  EXPECT_FALSE(terms[0].HasMember("matchExpressions"));
  ExpectPin(terms[0]["matchFields"], "node-3");
}

TEST(GateRemovalPatchTest, PinAddsNodeAffinityNextToPodAffinity) {
  api::Pod p = GatedPod();
  p.spec.affinity.emplace();  // e.g. only podAntiAffinity, kept as unknown fields
  auto d = Ops(GateRemovalPatch(p, kSchedulingGate, "n"));
  ASSERT_EQ(d.Size(), 4u);
  EXPECT_EQ(Op(d[3]), "add /spec/affinity/nodeAffinity");
  ExpectPin(RequiredIn(d[3]["value"])["nodeSelectorTerms"][0]["matchFields"], "n");
}

TEST(GateRemovalPatchTest, PinAddsRequiredNextToPreferredTerms) {
  api::Pod p = GatedPod();
  p.spec.affinity.emplace().node_affinity.emplace();  // preferred terms only
  auto d = Ops(GateRemovalPatch(p, kSchedulingGate, "n"));
  ASSERT_EQ(d.Size(), 4u);
  EXPECT_EQ(Op(d[3]),
            "add /spec/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution");
  ExpectPin(d[3]["value"]["nodeSelectorTerms"][0]["matchFields"], "n");
}

TEST(GateRemovalPatchTest, PinIsAndedIntoEveryExistingTerm) {
  api::Pod p = GatedPod();
  auto& req = p.spec.affinity.emplace()
                  .node_affinity.emplace()
                  .required_during_scheduling_ignored_during_execution.emplace();
  req.node_selector_terms = {Term("gpu", /*with_field=*/true), Term("zone", false)};
  auto d = Ops(GateRemovalPatch(p, kSchedulingGate, "node-9"));
  ASSERT_EQ(d.Size(), 5u);
  const std::string terms =
      "/spec/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/"
      "nodeSelectorTerms/";
  // Appended after the term's own field requirement; a new list where the term had none.
  EXPECT_EQ(Op(d[3]), "add " + terms + "0/matchFields/-");
  ASSERT_TRUE(d[3]["value"].IsObject());
  ExpectPin(d[3]["value"], "node-9");
  EXPECT_EQ(Op(d[4]), "add " + terms + "1/matchFields");
  ASSERT_TRUE(d[4]["value"].IsArray());
  ExpectPin(d[4]["value"], "node-9");
}

TEST(GateRemovalPatchTest, NoPinIntoARequiredAffinityWithoutTerms) {
  api::Pod p = GatedPod();
  p.spec.affinity.emplace()
      .node_affinity.emplace()
      .required_during_scheduling_ignored_during_execution.emplace();
  auto d = Ops(GateRemovalPatch(p, kSchedulingGate, "n"));
  ASSERT_EQ(d.Size(), 2u);
  EXPECT_EQ(Op(d[1]), "remove /spec/schedulingGates/1");
}

TEST(SelectsOnlyNodeTest, OnlyASingleNameRequirementForThatNode) {
  api::NodeSelector s;
  api::NodeSelectorTerm t;
  api::NodeSelectorRequirement r;
  r.key = "metadata.name";
  r.operator_ = "In";
  r.values = {"a"};
  t.match_fields.push_back(r);
  s.node_selector_terms.push_back(t);
  EXPECT_TRUE(SelectsOnlyNode(s, "a"));
  EXPECT_FALSE(SelectsOnlyNode(s, "b"));
  EXPECT_FALSE(SelectsOnlyNode(std::nullopt, "a"));
  auto two_values = s;
  two_values.node_selector_terms[0].match_fields[0].values.push_back("b");
  EXPECT_FALSE(SelectsOnlyNode(two_values, "a"));
  auto two_terms = s;
  two_terms.node_selector_terms.push_back(t);
  EXPECT_FALSE(SelectsOnlyNode(two_terms, "a"));
  auto not_in = s;
  not_in.node_selector_terms[0].match_fields[0].operator_ = "NotIn";
  EXPECT_FALSE(SelectsOnlyNode(not_in, "a"));
  auto with_label = s;
  with_label.node_selector_terms[0].match_expressions.push_back(
      Term("zone", false).match_expressions[0]);
  EXPECT_FALSE(SelectsOnlyNode(with_label, "a"));
}

}  // namespace
}  // namespace draco::reconcilers
