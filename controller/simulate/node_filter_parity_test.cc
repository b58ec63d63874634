// `draco explain` and `draco run` filter nodes with the same code (feasibility/node_filter.h):
// the same objects give the same candidate nodes and the same per-node reasons through simulate's
// engine and through the controller's FilterNodes on a ClusterCache.
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "controller/api/codec.h"
#include "controller/reconcilers/cluster_cache.h"
#include "controller/reconcilers/node_fit.h"
#include "controller/simulate/engine.h"

namespace draco::simulate {
namespace {

std::string ReadyNode(const std::string& name, const std::string& spec = "{}",
                      const std::string& ready = "True") {
  return R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")" + name +
         R"(","labels":{"kubernetes.io/hostname":")" + name + R"("}},"spec":)" + spec +
         R"(,"status":{"allocatable":{"pods":"10","cpu":"2","memory":"1Gi"},
         "conditions":[{"type":"Ready","status":")" +
         ready + R"("}]}})";
}

// Six nodes, each rejected by another rule but "free"; "occupied" holds a pod the pending pod's
// anti-affinity avoids, "busy" one that leaves too little cpu.
std::vector<std::string> Objects() {
  return {
      ReadyNode("free"),
      ReadyNode("occupied"),
      ReadyNode("busy"),
      ReadyNode("down", "{}", "False"),
      ReadyNode("cordoned", R"({"unschedulable":true})"),
      ReadyNode("tainted", R"({"taints":[{"key":"gpu","value":"x","effect":"NoSchedule"}]})"),
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"occupant","namespace":"w",
          "labels":{"app":"occupant"}},"spec":{"nodeName":"occupied",
          "containers":[{"name":"c"}]}})",
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"hog","namespace":"w"},"spec":{
          "nodeName":"busy","containers":[{"name":"c","resources":{"requests":{"cpu":"1500m"}}}]}})",
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"gpu","namespace":"w"},"spec":{
          "affinity":{"podAntiAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[{
          "labelSelector":{"matchLabels":{"app":"occupant"}},"topologyKey":"kubernetes.io/hostname"}]}},
          "resourceClaims":[{"name":"g","resourceClaimName":"c"}],
          "containers":[{"name":"c","resources":{"requests":{"cpu":"1"}}}]}})",
      R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"c",
          "namespace":"w"},"spec":{"devices":{"requests":[{"name":"r","exactly":{
          "deviceClassName":"gpu"}}]}}})",
  };
}

TEST(NodeFilterParityTest, ExplainAndTheControllerRejectTheSameNodesForTheSameReasons) {
  // simulate: the pod's group, explained (nothing committed).
  Options opts;
  std::string list = R"({"apiVersion":"v1","kind":"List","items":[)";
  for (const auto& o : Objects()) list += (list.back() == '[' ? "" : ",") + o;
  opts.documents.push_back({"the test", list + "]}"});
  Simulation sim;
  ASSERT_TRUE(Build(opts, &sim).ok());
  auto g = std::find_if(sim.groups.begin(), sim.groups.end(),
                        [](const Group& x) { return x.label == "pod w/gpu"; });
  ASSERT_NE(g, sim.groups.end());
  GroupOutcome go = RunGroup(sim, *g, true, "");
  std::set<std::string> sim_fit;
  for (const auto& e : go.explanations) sim_fit.insert(e.node);
  std::set<std::string> sim_why(go.filtered.begin(), go.filtered.end());

  // draco run: the same objects in the controller's cache.
  reconcilers::ClusterCache cache;
  reconcilers::PodPtr pending;
  for (const auto& o : Objects()) {
    if (o.find(R"("kind":"Node")") != std::string::npos) {
      cache.UpsertNode(std::make_shared<api::Node>(*api::Decode<api::Node>(o)));
    } else if (o.find(R"("kind":"Pod")") != std::string::npos) {
      auto p = std::make_shared<api::Pod>(*api::Decode<api::Pod>(o));
      cache.UpsertPod(p);
      if (p->metadata.name == "gpu") pending = p;
    }
  }
  ASSERT_NE(pending, nullptr);
  auto r = reconcilers::FilterNodes(pending.get(), cache.Nodes(), {}, cache);
  std::set<std::string> run_fit, run_why;
  for (const auto& n : r.fit) run_fit.insert(n->metadata.name);
  for (const auto& [node, why] : r.why) run_why.insert(node + ": " + why);

  EXPECT_EQ(sim_fit, std::set<std::string>{"free"});
  EXPECT_EQ(sim_fit, run_fit);
  EXPECT_EQ(sim_why, run_why);
  EXPECT_EQ(sim_why.size(), 5u);
  EXPECT_TRUE(sim_why.count("down: node(s) were not ready")) << ::testing::PrintToString(sim_why);
  EXPECT_TRUE(sim_why.count("occupied: InterPodAffinity: pod anti-affinity with w/occupant"));
}

// A claim no pod references: Ready and schedulable nodes only, in both.
TEST(NodeFilterParityTest, AClaimWithoutAPodSkipsNotReadyAndCordonedNodesInBoth) {
  Options opts;
  std::string list = R"({"apiVersion":"v1","kind":"List","items":[)";
  for (const auto& o : Objects()) list += (list.back() == '[' ? "" : ",") + o;
  list += R"(,{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{
      "name":"lone","namespace":"w"},"spec":{"devices":{"requests":[{"name":"r","exactly":{
      "deviceClassName":"gpu"}}]}}})";
  opts.documents.push_back({"the test", list + "]}"});
  Simulation sim;
  ASSERT_TRUE(Build(opts, &sim).ok());
  auto g = std::find_if(sim.groups.begin(), sim.groups.end(),
                        [](const Group& x) { return x.label == "claim w/lone"; });
  ASSERT_NE(g, sim.groups.end());
  GroupOutcome go = RunGroup(sim, *g, true, "");
  std::set<std::string> sim_why(go.filtered.begin(), go.filtered.end());
  EXPECT_EQ(sim_why, (std::set<std::string>{"cordoned: node(s) were unschedulable",
                                            "down: node(s) were not ready"}));
  EXPECT_EQ(go.explanations.size(), 4u);

  reconcilers::ClusterCache cache;
  for (const auto& o : Objects()) {
    if (o.find(R"("kind":"Node")") == std::string::npos) continue;
    cache.UpsertNode(std::make_shared<api::Node>(*api::Decode<api::Node>(o)));
  }
  auto r = reconcilers::FilterNodes(nullptr, cache.Nodes(), {}, cache);
  std::set<std::string> run_why;
  for (const auto& [node, why] : r.why) run_why.insert(node + ": " + why);
  EXPECT_EQ(sim_why, run_why);
  EXPECT_EQ(r.fit.size(), go.explanations.size());
}

}  // namespace
}  // namespace draco::simulate
