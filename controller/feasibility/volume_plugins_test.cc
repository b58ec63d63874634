#include "controller/feasibility/test_util.h"

namespace draco::feasibility {
namespace {

using testing::MakeNode;
using testing::MakePod;
using testing::Obj;
using testing::Results;

std::string PvcPod(const std::string& claim) {
  return R"({"volumes":[{"name":"v","persistentVolumeClaim":{"claimName":")" + claim +
         R"("}}],"containers":[{"name":"c"}]})";
}

TEST(VolumeBindingTest, BoundPvNodeAffinity) {
  Snapshot s;
  s.nodes = {MakeNode("a", R"({"kubernetes.io/hostname":"a"})"),
             MakeNode("b", R"({"kubernetes.io/hostname":"b"})")};
  s.pvs["pv1"] = Obj<api::PersistentVolume>(R"({"metadata":{"name":"pv1"},"spec":{
      "capacity":{"storage":"1Gi"},"nodeAffinity":{"required":{"nodeSelectorTerms":[{
      "matchExpressions":[{"key":"kubernetes.io/hostname","operator":"In","values":["b"]}]}]}}}})");
  s.pvcs["ns/c1"] = Obj<api::PersistentVolumeClaim>(R"({"metadata":{"name":"c1","namespace":"ns",
      "annotations":{"pv.kubernetes.io/bind-completed":"yes"}},"spec":{"volumeName":"pv1"}})");
  EXPECT_EQ(Results(*MakePod("p", "{}", PvcPod("c1")), s), "VolumeBinding ok");
  EXPECT_EQ(Results(*MakePod("p", "{}", PvcPod("missing")), s),
            "VolumeRestrictions VolumeRestrictions");
}

TEST(VolumeBindingTest, WaitForFirstConsumerUsesAllowedTopologies) {
  Snapshot s;
  s.nodes = {MakeNode("a", R"({"zone":"z1"})"), MakeNode("b", R"({"zone":"z2"})")};
  s.storage_classes["wffc"] = Obj<api::StorageClass>(R"({"metadata":{"name":"wffc"},
      "provisioner":"csi.example.com","volumeBindingMode":"WaitForFirstConsumer",
      "allowedTopologies":[{"matchLabelExpressions":[{"key":"zone","values":["z2"]}]}]})");
  s.storage_classes["now"] = Obj<api::StorageClass>(R"({"metadata":{"name":"now"},
      "provisioner":"csi.example.com","volumeBindingMode":"Immediate"})");
  s.pvcs["ns/c1"] = Obj<api::PersistentVolumeClaim>(R"({"metadata":{"name":"c1",
      "namespace":"ns"},"spec":{"storageClassName":"wffc","accessModes":["ReadWriteOnce"],
      "resources":{"requests":{"storage":"1Gi"}}}})");
  s.pvcs["ns/c2"] = Obj<api::PersistentVolumeClaim>(R"({"metadata":{"name":"c2",
      "namespace":"ns"},"spec":{"storageClassName":"now"}})");
  EXPECT_EQ(Results(*MakePod("p", "{}", PvcPod("c1")), s), "VolumeBinding ok");
  EXPECT_EQ(Results(*MakePod("p", "{}", PvcPod("c2")), s), "VolumeBinding VolumeBinding");
  // An available PV of the class on z1 makes node a feasible too.
  s.pvs["local"] = Obj<api::PersistentVolume>(R"({"metadata":{"name":"local"},"spec":{
      "storageClassName":"wffc","accessModes":["ReadWriteOnce"],"capacity":{"storage":"2Gi"},
      "nodeAffinity":{"required":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"zone",
      "operator":"In","values":["z1"]}]}]}}},"status":{"phase":"Available"}})");
  EXPECT_EQ(Results(*MakePod("p", "{}", PvcPod("c1")), s), "ok ok");
}

TEST(VolumeRestrictionsTest, ReadWriteOncePodInUse) {
  Snapshot s;
  s.nodes = {MakeNode("a"), MakeNode("b")};
  s.pvcs["ns/c1"] = Obj<api::PersistentVolumeClaim>(R"({"metadata":{"name":"c1",
      "namespace":"ns","annotations":{"pv.kubernetes.io/bind-completed":"yes"}},"spec":{
      "accessModes":["ReadWriteOncePod"],"volumeName":"pv1"}})");
  s.pvs["pv1"] = Obj<api::PersistentVolume>(R"({"metadata":{"name":"pv1"},"spec":{}})");
  EXPECT_EQ(Results(*MakePod("p", "{}", PvcPod("c1")), s), "ok ok");
  s.pods = {{MakePod("x", "{}", PvcPod("c1")), "a"}};
  EXPECT_EQ(Results(*MakePod("p", "{}", PvcPod("c1")), s), "VolumeRestrictions VolumeRestrictions");
}

TEST(NodeVolumeLimitsTest, CsiAttachLimit) {
  Snapshot s;
  s.nodes = {MakeNode("a"), MakeNode("b")};
  s.csi_nodes["a"] = Obj<api::CSINode>(R"({"metadata":{"name":"a"},"spec":{"drivers":[{
      "name":"csi.example.com","nodeID":"a","allocatable":{"count":1}}]}})");
  for (const char* n : {"1", "2"}) {
    s.pvs[std::string("pv") + n] = Obj<api::PersistentVolume>(
        std::string(R"({"metadata":{"name":"pv)") + n +
        R"("},"spec":{"csi":{"driver":"csi.example.com","volumeHandle":"h)" + n + R"("}}})");
    s.pvcs[std::string("ns/c") + n] = Obj<api::PersistentVolumeClaim>(
        std::string(R"({"metadata":{"name":"c)") + n +
        R"(","namespace":"ns","annotations":{"pv.kubernetes.io/bind-completed":"yes"}},)" +
        R"("spec":{"volumeName":"pv)" + n + R"("}})");
  }
  s.pods = {{MakePod("x", "{}", PvcPod("c1")), "a"}};
  EXPECT_EQ(Results(*MakePod("p", "{}", PvcPod("c2")), s), "NodeVolumeLimits ok");
  EXPECT_EQ(Results(*MakePod("p", "{}", PvcPod("c1")), s), "ok ok");  // already attached
}

TEST(VolumeZoneTest, BoundPvZoneLabel) {
  Snapshot s;
  s.nodes = {MakeNode("a", R"({"topology.kubernetes.io/zone":"z1"})"),
             MakeNode("b", R"({"topology.kubernetes.io/zone":"z2"})"), MakeNode("c")};
  s.pvs["pv1"] = Obj<api::PersistentVolume>(R"({"metadata":{"name":"pv1","labels":{
      "topology.kubernetes.io/zone":"z2__z3"}},"spec":{}})");
  s.pvcs["ns/c1"] = Obj<api::PersistentVolumeClaim>(R"({"metadata":{"name":"c1",
      "namespace":"ns","annotations":{"pv.kubernetes.io/bind-completed":"yes"}},"spec":{
      "volumeName":"pv1"}})");
  EXPECT_EQ(Results(*MakePod("p", "{}", PvcPod("c1")), s), "VolumeZone ok ok");
}

}  // namespace
}  // namespace draco::feasibility
