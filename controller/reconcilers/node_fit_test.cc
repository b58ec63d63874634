#include "controller/reconcilers/node_fit.h"

#include <gtest/gtest.h>

namespace draco::reconcilers {
namespace {

api::Node ReadyNode() {
  api::Node n;
  n.metadata.name = "n";
  n.metadata.labels = {{"zone", "a"}};
  api::NodeCondition c;
  c.type = "Ready";
  c.status = "True";
  n.status.conditions.push_back(c);
  n.status.allocatable["pods"] = *api::Quantity::Parse("2");
  n.status.allocatable["cpu"] = *api::Quantity::Parse("2");
  n.status.allocatable["memory"] = *api::Quantity::Parse("1Gi");
  return n;
}

TEST(NodeRejectionTest, AppliesSchedulerFilters) {
  api::Pod pod;
  api::Node node = ReadyNode();
  EXPECT_EQ(NodeRejection(pod, {}, node, {}), "");
  EXPECT_EQ(NodeRejection(pod, {}, node, NodeUsage{2, 0, 0}), "Too many pods");
  EXPECT_EQ(NodeRejection(pod, PodRequests{1500, 0}, node, NodeUsage{0, 1000, 0}),
            "Insufficient cpu");
  EXPECT_EQ(NodeRejection(pod, PodRequests{0, 2LL << 30}, node, {}), "Insufficient memory");

  api::Taint t;
  t.key = "k";
  t.value = "v";
  t.effect = "NoExecute";
  node.spec.taints.push_back(t);
  EXPECT_EQ(NodeRejection(pod, {}, node, {}), "node(s) had untolerated taint");
  api::Toleration tol;
  tol.key = "k";
  tol.operator_ = "Exists";
  pod.spec.tolerations.push_back(tol);
  EXPECT_EQ(NodeRejection(pod, {}, node, {}), "");

  pod.spec.node_selector = {{"zone", "b"}};
  EXPECT_EQ(NodeRejection(pod, {}, node, {}), "node(s) didn't match Pod's node affinity/selector");
  pod.spec.node_selector = {{"zone", "a"}};
  api::NodeSelectorRequirement req;
  req.key = "zone";
  req.operator_ = "NotIn";
  req.values = {"a"};
  api::NodeSelectorTerm term;
  term.match_expressions.push_back(req);
  pod.spec.affinity = api::Affinity{};
  pod.spec.affinity->node_affinity = api::NodeAffinity{};
  pod.spec.affinity->node_affinity->required_during_scheduling_ignored_during_execution =
      api::NodeSelector{};
  pod.spec.affinity->node_affinity->required_during_scheduling_ignored_during_execution
      ->node_selector_terms.push_back(term);
  EXPECT_EQ(NodeRejection(pod, {}, node, {}), "node(s) didn't match Pod's node affinity/selector");

  api::Pod plain;
  node.spec.taints.clear();
  node.spec.unschedulable = true;
  EXPECT_EQ(NodeRejection(plain, {}, node, {}), "node(s) were unschedulable");
  node.spec.unschedulable = false;
  node.status.conditions[0].status = "Unknown";
  EXPECT_EQ(NodeRejection(plain, {}, node, {}), "node(s) were not ready");
}

TEST(NodeRejectionTest, CountsOverheadSidecarsAndPodLevelRequests) {
  api::Node node = ReadyNode();  // cpu 2, memory 1Gi
  api::Pod pod;
  api::Container c;
  c.resources.requests["cpu"] = *api::Quantity::Parse("1500m");
  c.resources.requests["memory"] = *api::Quantity::Parse("900Mi");
  pod.spec.containers = {c};
  EXPECT_EQ(NodeRejection(pod, ComputePodRequests(pod), node, NodeUsage{0, 400, 0}), "");

  // RuntimeClass overhead: 1500m + 200m on top of 400m in use exceeds 2.
  pod.spec.overhead["cpu"] = *api::Quantity::Parse("200m");
  EXPECT_EQ(ComputePodRequests(pod).milli_cpu, 1700);
  EXPECT_EQ(NodeRejection(pod, ComputePodRequests(pod), node, NodeUsage{0, 400, 0}),
            "Insufficient cpu");
  EXPECT_EQ(NodeRejection(pod, ComputePodRequests(pod), node, NodeUsage{0, 300, 0}), "");
  pod.spec.overhead["memory"] = *api::Quantity::Parse("200Mi");  // 1100Mi > 1Gi
  EXPECT_EQ(NodeRejection(pod, ComputePodRequests(pod), node, {}), "Insufficient memory");
  pod.spec.overhead.clear();

  // A sidecar runs next to the container: 1500m + 600m > 2.
  api::Container sidecar;
  sidecar.resources.requests["cpu"] = *api::Quantity::Parse("600m");
  sidecar.restart_policy = "Always";
  pod.spec.init_containers = {sidecar};
  EXPECT_EQ(NodeRejection(pod, ComputePodRequests(pod), node, {}), "Insufficient cpu");
  pod.spec.init_containers[0].restart_policy.reset();  // a plain init container: max(1500m, 600m)
  EXPECT_EQ(NodeRejection(pod, ComputePodRequests(pod), node, {}), "");

  // Pod-level requests replace the container aggregate.
  pod.spec.resources = api::ResourceRequirements{};
  pod.spec.resources->requests["cpu"] = *api::Quantity::Parse("2500m");
  EXPECT_EQ(NodeRejection(pod, ComputePodRequests(pod), node, {}), "Insufficient cpu");
  pod.spec.resources->requests["cpu"] = *api::Quantity::Parse("2");
  EXPECT_EQ(NodeRejection(pod, ComputePodRequests(pod), node, {}), "");
}

TEST(NodeFilterResultTest, SummaryReadsLikeTheScheduler) {
  NodeFilterResult r;
  r.rejected["node(s) were not ready"] = 2;
  r.rejected["Too many pods"] = 1;
  EXPECT_EQ(r.Summary(3), "0/3 nodes are available: 1 Too many pods, 2 node(s) were not ready");
}

}  // namespace
}  // namespace draco::reconcilers
