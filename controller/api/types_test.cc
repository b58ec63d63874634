#include "controller/api/types.h"

#include <gtest/gtest.h>

namespace draco::api {
namespace {

NodeSelectorRequirement Req(std::string key, std::string op, std::vector<std::string> values) {
  NodeSelectorRequirement r;
  r.key = std::move(key);
  r.operator_ = std::move(op);
  r.values = std::move(values);
  return r;
}

TEST(NodeSelectorTest, RequirementOperators) {
  StringMap labels = {{"zone", "a"}, {"gpus", "4"}, {"bad", "x"}};
  EXPECT_TRUE(RequirementMatches(Req("zone", "In", {"a", "b"}), labels));
  EXPECT_FALSE(RequirementMatches(Req("zone", "In", {"b"}), labels));
  EXPECT_FALSE(RequirementMatches(Req("missing", "In", {"a"}), labels));
  EXPECT_TRUE(RequirementMatches(Req("zone", "NotIn", {"b"}), labels));
  EXPECT_TRUE(RequirementMatches(Req("missing", "NotIn", {"b"}), labels));
  EXPECT_FALSE(RequirementMatches(Req("zone", "NotIn", {"a"}), labels));
  EXPECT_TRUE(RequirementMatches(Req("zone", "Exists", {}), labels));
  EXPECT_FALSE(RequirementMatches(Req("zone", "Exists", {"a"}), labels));  // invalid
  EXPECT_TRUE(RequirementMatches(Req("missing", "DoesNotExist", {}), labels));
  EXPECT_FALSE(RequirementMatches(Req("zone", "DoesNotExist", {}), labels));
  EXPECT_TRUE(RequirementMatches(Req("gpus", "Gt", {"3"}), labels));
  EXPECT_FALSE(RequirementMatches(Req("gpus", "Gt", {"4"}), labels));
  EXPECT_TRUE(RequirementMatches(Req("gpus", "Lt", {"5"}), labels));
  // "+5" parses as an integer, but labels.NewRequirement also requires a valid label value.
  EXPECT_FALSE(RequirementMatches(Req("gpus", "Lt", {"+5"}), labels));
  EXPECT_FALSE(RequirementMatches(Req("bad key!", "Exists", {}), labels));
  EXPECT_FALSE(RequirementMatches(Req("zone", "NotIn", {"not a value"}), labels));
  EXPECT_FALSE(RequirementMatches(Req("bad", "Gt", {"1"}), labels));
  EXPECT_FALSE(RequirementMatches(Req("gpus", "Gt", {"x"}), labels));
  EXPECT_FALSE(RequirementMatches(Req("gpus", "Gt", {"1", "2"}), labels));
  EXPECT_FALSE(RequirementMatches(Req("zone", "In", {}), labels));
  EXPECT_FALSE(RequirementMatches(Req("zone", "Equals", {"a"}), labels));
}

TEST(NodeSelectorTest, TermsAreOredRequirementsAnded) {
  StringMap labels = {{"zone", "a"}};
  NodeSelector sel;
  EXPECT_FALSE(NodeSelectorMatches(sel, labels, "node-1"));  // no terms
  sel.node_selector_terms.emplace_back();                    // empty term matches nothing
  EXPECT_FALSE(NodeSelectorMatches(sel, labels, "node-1"));
  NodeSelectorTerm by_name;
  by_name.match_fields.push_back(Req("metadata.name", "In", {"node-1"}));
  sel.node_selector_terms.push_back(by_name);
  EXPECT_TRUE(NodeSelectorMatches(sel, labels, "node-1"));
  EXPECT_FALSE(NodeSelectorMatches(sel, labels, "node-2"));
  NodeSelectorTerm both;
  both.match_expressions.push_back(Req("zone", "In", {"a"}));
  both.match_fields.push_back(Req("metadata.name", "NotIn", {"node-1"}));
  EXPECT_TRUE(TermMatches(both, labels, "node-2"));
  EXPECT_FALSE(TermMatches(both, labels, "node-1"));
  NodeSelectorTerm bad_field;
  bad_field.match_fields.push_back(Req("metadata.uid", "In", {"x"}));
  EXPECT_FALSE(TermMatches(bad_field, labels, "x"));
  NodeSelectorTerm two_values;
  two_values.match_fields.push_back(Req("metadata.name", "In", {"node-1", "node-2"}));
  EXPECT_FALSE(TermMatches(two_values, labels, "node-1"));
}

// LazyErrorNodeSelector: an invalid term matches nothing but the other terms still count; the
// fields set of a node holds only metadata.name, and only when the node has a name.
TEST(NodeSelectorTest, LazyErrorsFieldsOfNamelessNodesAndOtherFieldKeys) {
  StringMap labels = {{"zone", "a"}};
  NodeSelector sel;
  sel.node_selector_terms.emplace_back();
  sel.node_selector_terms.back().match_expressions.push_back(Req("zone", "Like", {"a"}));
  EXPECT_FALSE(NodeSelectorMatches(sel, labels, "node-1"));
  sel.node_selector_terms.emplace_back();
  sel.node_selector_terms.back().match_expressions.push_back(Req("zone", "In", {"a"}));
  EXPECT_TRUE(NodeSelectorMatches(sel, labels, "node-1"));
  NodeSelectorTerm by_name;
  by_name.match_fields.push_back(Req("metadata.name", "In", {"node-1"}));
  EXPECT_TRUE(TermMatches(by_name, labels, ""));  // a PV's node affinity checks labels only
  NodeSelectorTerm other_field;
  other_field.match_fields.push_back(Req("metadata.uid", "NotIn", {"x"}));
  EXPECT_TRUE(TermMatches(other_field, labels, "node-1"));  // reads as "" != "x"
}

TEST(TolerationTest, OneRuleForEveryModel) {
  EXPECT_TRUE(ToleratesTaint({"k", "", "v", ""}, {"k", "v", "NoSchedule"}));
  EXPECT_TRUE(ToleratesTaint({"k", "Equal", "v", "NoSchedule"}, {"k", "v", "NoSchedule"}));
  EXPECT_FALSE(ToleratesTaint({"k", "Equal", "v", "NoExecute"}, {"k", "v", "NoSchedule"}));
  EXPECT_FALSE(ToleratesTaint({"k", "", "w", ""}, {"k", "v", "NoSchedule"}));
  EXPECT_TRUE(ToleratesTaint({"", "Exists", "", ""}, {"any", "v", "NoExecute"}));
  EXPECT_FALSE(ToleratesTaint({"k", "Gt", "1", ""}, {"k", "2", "NoSchedule"}));
  Toleration t;
  t.key = "k";
  t.operator_ = "Exists";
  Taint taint;
  taint.key = "k";
  taint.value = "v";
  taint.effect = "NoSchedule";
  EXPECT_TRUE(TolerationToleratesTaint(t, taint));
  t.key = "other";
  EXPECT_FALSE(TolerationToleratesTaint(t, taint));
}

TEST(TolerationTest, DeviceTolerations) {
  DeviceTaint taint;
  taint.key = "example.com/unhealthy";
  taint.value = "true";
  taint.effect = "NoSchedule";
  DeviceToleration t;
  t.key = "example.com/unhealthy";
  t.value = "true";
  EXPECT_TRUE(DeviceTolerationToleratesTaint(t, taint));
  t.value = "false";
  EXPECT_FALSE(DeviceTolerationToleratesTaint(t, taint));
  t.operator_ = "Exists";
  EXPECT_TRUE(DeviceTolerationToleratesTaint(t, taint));
  t.effect = "NoExecute";
  EXPECT_FALSE(DeviceTolerationToleratesTaint(t, taint));
  DeviceToleration any;
  any.operator_ = "Exists";
  EXPECT_TRUE(DeviceTolerationToleratesTaint(any, taint));
  any.operator_ = "Bogus";
  EXPECT_FALSE(DeviceTolerationToleratesTaint(any, taint));
}

TEST(NodeTest, IsReady) {
  Node n;
  EXPECT_FALSE(n.IsReady());
  NodeCondition c;
  c.type = "Ready";
  c.status = "True";
  n.status.conditions.push_back(c);
  EXPECT_TRUE(n.IsReady());
}

TEST(DeviceTaintSelectorTest, EmptyFieldsMatchAll) {
  DeviceTaintSelector s;
  EXPECT_TRUE(DeviceTaintSelectorMatches(s, "d", "p", "x"));
  s.driver = "d";
  s.device = "x";
  EXPECT_TRUE(DeviceTaintSelectorMatches(s, "d", "p", "x"));
  EXPECT_FALSE(DeviceTaintSelectorMatches(s, "d", "p", "y"));
}

}  // namespace
}  // namespace draco::api
