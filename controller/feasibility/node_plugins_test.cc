#include "controller/feasibility/test_util.h"

namespace draco::feasibility {
namespace {

using testing::MakeNode;
using testing::MakePod;
using testing::Results;

TEST(NodePluginsTest, UnschedulableTaintsAndAffinityInFilterOrder) {
  Snapshot s;
  s.nodes = {MakeNode("a", R"({"zone":"z1"})", R"({"unschedulable":true})"),
             MakeNode("b", R"({"zone":"z1"})",
                      R"({"taints":[{"key":"gpu","value":"x","effect":"NoSchedule"}]})"),
             MakeNode("c", R"({"zone":"z2"})"), MakeNode("d", R"({"zone":"z1"})")};
  auto pod = MakePod("p", "{}", R"({"nodeSelector":{"zone":"z1"},"containers":[{"name":"c"}]})");
  EXPECT_EQ(Results(*pod, s), "NodeUnschedulable TaintToleration NodeAffinity ok");
  auto tolerant = MakePod("p", "{}",
                          R"({"tolerations":[{"operator":"Exists"}],
                              "containers":[{"name":"c"}]})");
  EXPECT_EQ(Results(*tolerant, s), "ok ok ok ok");
}

TEST(NodePluginsTest, MatchFieldsNarrowsAtPreFilter) {
  Snapshot s;
  s.nodes = {MakeNode("a", "{}", R"({"unschedulable":true})"), MakeNode("b")};
  auto pod = MakePod("p", "{}", R"({"affinity":{"nodeAffinity":{
      "requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchFields":[
      {"key":"metadata.name","operator":"In","values":["b"]}]}]}}},"containers":[{"name":"c"}]})");
  EXPECT_EQ(Results(*pod, s), "NodeAffinity ok");
  auto none = MakePod("p", "{}", R"({"affinity":{"nodeAffinity":{
      "requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchFields":[
      {"key":"metadata.name","operator":"In","values":["a"]},
      {"key":"metadata.name","operator":"In","values":["b"]}]}]}}},"containers":[{"name":"c"}]})");
  EXPECT_EQ(Results(*none, s), "NodeAffinity NodeAffinity");
}

TEST(NodePluginsTest, HostPortsConflictByIpAndProtocol) {
  Snapshot s;
  s.nodes = {MakeNode("a"), MakeNode("b"), MakeNode("c")};
  s.pods = {{MakePod("x", "{}", R"({"containers":[{"name":"c","ports":[
                {"containerPort":80,"hostPort":8080,"protocol":"TCP"}]}]})"),
             "a"},
            {MakePod("y", "{}", R"({"containers":[{"name":"c","ports":[
                {"containerPort":80,"hostPort":8080,"protocol":"UDP"}]}]})"),
             "b"},
            {MakePod("z", "{}", R"({"containers":[{"name":"c","ports":[
                {"containerPort":80,"hostPort":8080,"hostIP":"10.0.0.1"}]}]})"),
             "c"}};
  auto pod = MakePod("p", "{}", R"({"containers":[{"name":"c","ports":[
      {"containerPort":80,"hostPort":8080,"hostIP":"10.0.0.2","protocol":"TCP"}]}]})");
  EXPECT_EQ(Results(*pod, s), "NodePorts ok ok");
}

TEST(NodePluginsTest, ResourcesCountPlacedPodsExtendedAndPodCount) {
  Snapshot s;
  s.nodes = {testing::Obj<api::Node>(R"({"metadata":{"name":"a"},"status":{"allocatable":{
                 "cpu":"2","memory":"1Gi","pods":"10","example.com/gpu":"1"}}})"),
             testing::Obj<api::Node>(R"({"metadata":{"name":"b"},"status":{"allocatable":{
                 "cpu":"2","memory":"1Gi","pods":"10","example.com/gpu":"2"}}})"),
             testing::Obj<api::Node>(R"({"metadata":{"name":"c"},"status":{"allocatable":{
                 "cpu":"2","memory":"1Gi","pods":"0"}}})")};
  auto gpu = R"({"containers":[{"name":"c","resources":{"requests":{
      "cpu":"500m","example.com/gpu":"1"}}}]})";
  s.pods = {{MakePod("x", "{}", gpu), "a"}};
  auto pod = MakePod("p", "{}", gpu);
  EXPECT_EQ(Results(*pod, s), "NodeResourcesFit ok NodeResourcesFit");
  auto big = MakePod("p", "{}", R"({"containers":[{"name":"c","resources":{"requests":{
      "cpu":"1"}}}],"overhead":{"cpu":"1001m"}})");
  EXPECT_EQ(Results(*big, s), "NodeResourcesFit NodeResourcesFit NodeResourcesFit");
}

// Snapshot::node_allocatable (the cache's parse of each node version) is what the filter reads;
// a snapshot without it, or with a null entry, parses the node's status.
TEST(NodePluginsTest, PrecomputedAllocatableIsUsedWhenGiven) {
  Snapshot s;
  s.nodes = {testing::Obj<api::Node>(R"({"metadata":{"name":"a"},"status":{"allocatable":{
                 "cpu":"2","memory":"1Gi","pods":"10"}}})"),
             testing::Obj<api::Node>(R"({"metadata":{"name":"b"},"status":{"allocatable":{
                 "cpu":"2","memory":"1Gi","pods":"10"}}})")};
  auto pod = MakePod("p", "{}", R"({"containers":[{"name":"c","resources":{"requests":{
      "cpu":"1500m"}}}]})");
  EXPECT_EQ(Results(*pod, s), "ok ok");
  Resources small = FromResourceList(s.nodes[0]->status.allocatable);
  small.milli_cpu = 1000;  // not what the node says: proves which one is read
  s.node_allocatable = {std::make_shared<const Resources>(small), nullptr};
  EXPECT_EQ(Results(*pod, s), "NodeResourcesFit ok");
  s.node_allocatable.pop_back();  // not one per node: ignored
  EXPECT_EQ(Results(*pod, s), "ok ok");
}

TEST(NodePluginsTest, ExtendedResourcesServedByADeviceClassAreLeftToDra) {
  // kube-scheduler's shouldDelegateResourceToDRA: a device plugin's allocatable on the node wins;
  // where the node offers none, a name a DeviceClass serves is DynamicResources' business.
  Snapshot s;
  s.nodes = {testing::Obj<api::Node>(R"({"metadata":{"name":"plugin"},"status":{"allocatable":{
                 "cpu":"2","pods":"10","example.com/gpu":"1"}}})"),
             testing::Obj<api::Node>(R"({"metadata":{"name":"dra"},"status":{"allocatable":{
                 "cpu":"2","pods":"10"}}})")};
  s.pods = {{MakePod("x", "{}", R"({"containers":[{"name":"c","resources":{"requests":{
      "example.com/gpu":"1"}}}]})"),
             "plugin"}};
  auto pod = MakePod("p", "{}", R"({"containers":[{"name":"c","resources":{"requests":{
      "example.com/gpu":"1","deviceclass.resource.kubernetes.io/gpu.example.com":"1"}}}]})");
  EXPECT_EQ(Results(*pod, s), "NodeResourcesFit NodeResourcesFit");  // no class serves them
  s.dra_extended_resources = {"example.com/gpu"};
  EXPECT_EQ(Results(*pod, s), "NodeResourcesFit NodeResourcesFit");  // the implicit name: not yet
  s.dra_extended_resources.insert("deviceclass.resource.kubernetes.io/gpu.example.com");
  // "plugin" offers example.com/gpu through its device plugin, which is full; "dra" leaves both
  // names to DRA.
  EXPECT_EQ(Results(*pod, s), "NodeResourcesFit ok");
}

TEST(NodePluginsTest, FinishedPodsAreNotPlaced) {
  Snapshot s;
  s.nodes = {MakeNode("a")};
  s.pods = {{testing::Obj<api::Pod>(R"({"metadata":{"name":"x","namespace":"ns"},"spec":{
      "containers":[{"name":"c","resources":{"requests":{"cpu":"4"}}}]},"status":{
      "phase":"Failed"}})"),
             "a"}};
  auto pod = MakePod("p", "{}", R"({"containers":[{"name":"c","resources":{"requests":{
      "cpu":"1"}}}]})");
  EXPECT_EQ(Results(*pod, s), "ok");
}

TEST(NodePluginsTest, PlacedPodUsesAllocatedResourcesWhileResizing) {
  Snapshot s;
  s.nodes = {MakeNode("a")};
  s.pods = {{testing::Obj<api::Pod>(R"({"metadata":{"name":"x","namespace":"ns"},"spec":{
      "containers":[{"name":"c","resources":{"requests":{"cpu":"1"}}}]},"status":{
      "containerStatuses":[{"name":"c","allocatedResources":{"cpu":"3500m"}}]}})"),
             "a"}};
  auto pod = MakePod("p", "{}", R"({"containers":[{"name":"c","resources":{"requests":{
      "cpu":"1"}}}]})");
  EXPECT_EQ(Results(*pod, s), "NodeResourcesFit");
}

}  // namespace
}  // namespace draco::feasibility
