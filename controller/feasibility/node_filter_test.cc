#include "controller/feasibility/node_filter.h"

#include "controller/feasibility/test_util.h"

namespace draco::feasibility {
namespace {

using testing::MakePod;
using testing::Obj;

// A Ready node with 2 cpu, 2 pods and the given spec (JSON object text).
std::shared_ptr<const api::Node> ReadyNode(const std::string& name,
                                           const std::string& spec = "{}") {
  return Obj<api::Node>(R"({"metadata":{"name":")" + name +
                        R"(","labels":{"kubernetes.io/hostname":")" + name + R"("}},"spec":)" +
                        spec + R"(,"status":{"allocatable":{"cpu":"2","memory":"1Gi","pods":"2"},
      "conditions":[{"type":"Ready","status":"True"}]}})");
}

api::NodeSelector NameIs(const std::string& node) {
  return api::NodeSelector{
      {api::NodeSelectorTerm{
          {}, {api::NodeSelectorRequirement{"metadata.name", "In", {node}, {}}}, {}}},
      {}};
}

TEST(FilterNodesTest, FirstFailingRuleNamesEachNode) {
  Snapshot s;
  auto down = std::make_shared<api::Node>(*ReadyNode("down"));
  down->status.conditions[0].status = "False";
  s.nodes = {ReadyNode("a"), ReadyNode("b"), down, ReadyNode("full"),
             ReadyNode("cordoned", R"({"unschedulable":true})")};
  api::NodeSelector not_b = NameIs("b");
  not_b.node_selector_terms[0].match_fields[0].operator_ = "NotIn";
  s.pods.push_back({MakePod("big", "{}", R"({"containers":[{"name":"c","resources":{
      "requests":{"cpu":"2"}}}]})"),
                    "full"});
  auto pod = MakePod("p", "{}", R"({"containers":[{"name":"c","resources":{
      "requests":{"cpu":"1"}}}]})");
  NodeFilterResult r = FilterNodes(pod.get(), s, {&not_b, nullptr});
  ASSERT_EQ(r.fit.size(), 1u);
  EXPECT_EQ(r.fit[0]->metadata.name, "a");
  EXPECT_EQ(r.why["b"], "node(s) didn't match the node selector of an allocated claim");
  EXPECT_EQ(r.why["down"], "node(s) were not ready");
  EXPECT_EQ(r.why["full"], "NodeResourcesFit: Insufficient cpu");
  EXPECT_EQ(r.why["cordoned"], "NodeUnschedulable: node(s) were unschedulable");
  EXPECT_EQ(r.Summary(5),
            "1/5 nodes are available: 1 Insufficient cpu, 1 node(s) didn't match the node "
            "selector of an allocated claim, 1 node(s) were not ready, 1 node(s) were "
            "unschedulable");
}

TEST(FilterNodesTest, WithoutAPodOnlyReadinessAndSchedulabilityApply) {
  Snapshot s;
  auto no_status = std::make_shared<api::Node>(*ReadyNode("no-status"));
  no_status->status.conditions.clear();
  s.nodes = {ReadyNode("a"), no_status, ReadyNode("cordoned", R"({"unschedulable":true})")};
  s.pods.push_back({MakePod("big", "{}", R"({"containers":[{"name":"c","resources":{
      "requests":{"cpu":"2"}}}]})"),
                    "a"});
  NodeFilterResult r = FilterNodes(nullptr, s, {});
  ASSERT_EQ(r.fit.size(), 1u);
  EXPECT_EQ(r.fit[0]->metadata.name, "a");  // resources are the pod's filters' business
  EXPECT_EQ(r.why["no-status"], "node(s) were not ready");
  EXPECT_EQ(r.why["cordoned"], "node(s) were unschedulable");
  api::NodeSelector only_a = NameIs("a");
  EXPECT_TRUE(MatchesAllocatedSelectors(*s.nodes[0], {&only_a}));
  EXPECT_FALSE(MatchesAllocatedSelectors(*s.nodes[2], {&only_a}));
  EXPECT_TRUE(FilterNodes(nullptr, s, {&only_a}).why.count("a") == 0);
}

TEST(NodeFilterResultTest, SummaryReadsLikeTheScheduler) {
  NodeFilterResult r;
  r.rejected["node(s) were not ready"] = 2;
  r.rejected["Too many pods"] = 1;
  EXPECT_EQ(r.Summary(3), "0/3 nodes are available: 1 Too many pods, 2 node(s) were not ready");
  EXPECT_EQ(NodeFilterResult{}.Summary(0), "0/0 nodes are available");
}

}  // namespace
}  // namespace draco::feasibility
