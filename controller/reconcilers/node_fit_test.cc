#include "controller/reconcilers/node_fit.h"

#include <gtest/gtest.h>

#include "controller/api/codec.h"

namespace draco::reconcilers {
namespace {

NodePtr ReadyNode(const std::string& name, const std::string& zone) {
  auto n = api::Decode<api::Node>(R"({"metadata":{"name":")" + name +
                                  R"(","labels":{"kubernetes.io/hostname":")" + name +
                                  R"(","zone":")" + zone + R"("}},"status":{"allocatable":{
      "pods":"2","cpu":"2","memory":"1Gi"},"conditions":[{"type":"Ready","status":"True"}]}})");
  EXPECT_TRUE(n.ok()) << n.status().message();
  return std::make_shared<api::Node>(*n);
}

PodPtr MakePod(const std::string& json) {
  auto p = api::Decode<api::Pod>(json);
  EXPECT_TRUE(p.ok()) << p.status().message();
  return std::make_shared<api::Pod>(*p);
}

TEST(FilterNodesTest, UsesKubeSchedulerFiltersOnTheCache) {
  ClusterCache cache;
  for (const char* n : {"node-1", "node-2", "node-3"}) cache.UpsertNode(ReadyNode(n, "a"));
  cache.UpsertPod(MakePod(R"({"metadata":{"name":"occupant","namespace":"wedge","labels":{
      "app":"occupant"}},"spec":{"nodeName":"node-1","containers":[{"name":"c"}]}})"));
  auto gated = MakePod(R"({"metadata":{"name":"gpu","namespace":"wedge"},"spec":{
      "affinity":{"podAntiAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[{
      "labelSelector":{"matchLabels":{"app":"occupant"}},"topologyKey":"kubernetes.io/hostname"}]}},
      "containers":[{"name":"c","resources":{"requests":{"cpu":"1"}}}]}})");
  cache.UpsertPod(gated);
  // draco's own in-flight choice counts as placed: node-2 has 1.5 cpu of 2 taken.
  cache.UpsertPod(MakePod(R"({"metadata":{"name":"inflight","namespace":"x"},"spec":{
      "containers":[{"name":"c","resources":{"requests":{"cpu":"1500m"}}}]}})"));
  cache.NominatePod("x/inflight", "node-2");
  auto r = FilterNodes(gated.get(), cache.Nodes(), {}, cache);
  ASSERT_EQ(r.fit.size(), 1u);
  EXPECT_EQ(r.fit[0]->metadata.name, "node-3");
  EXPECT_EQ(r.why["node-1"], "InterPodAffinity: pod anti-affinity with wedge/occupant");
  EXPECT_EQ(r.why["node-2"], "NodeResourcesFit: Insufficient cpu");
  EXPECT_EQ(r.Summary(3),
            "1/3 nodes are available: 1 Insufficient cpu, 1 node(s) didn't match pod "
            "anti-affinity rules");
}

TEST(FilterNodesTest, NotReadyAndAllocationSelectorAreDracosOwnRules) {
  ClusterCache cache;
  auto ready = ReadyNode("a", "z");
  auto not_ready = std::make_shared<api::Node>(*ReadyNode("b", "z"));
  not_ready->status.conditions.clear();
  auto pod = MakePod(R"({"metadata":{"name":"p","namespace":"ns"},"spec":{
      "containers":[{"name":"c"}]}})");
  auto r = FilterNodes(pod.get(), {ready, not_ready}, {}, cache);
  ASSERT_EQ(r.fit.size(), 1u);
  EXPECT_EQ(r.why["b"], "node(s) were not ready");
  auto claim = std::make_shared<api::ResourceClaim>();
  claim->status.allocation.emplace();
  claim->status.allocation->node_selector = api::NodeSelector{
      {api::NodeSelectorTerm{
          {}, {api::NodeSelectorRequirement{"metadata.name", "In", {"b"}, {}}}, {}}},
      {}};
  EXPECT_TRUE(FilterNodes(pod.get(), {ready}, {claim}, cache).fit.empty());
}

}  // namespace
}  // namespace draco::reconcilers
