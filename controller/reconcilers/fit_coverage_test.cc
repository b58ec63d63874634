#include "controller/reconcilers/fit_coverage.h"

#include <gtest/gtest.h>

namespace draco::reconcilers {
namespace {

api::Pod PlainPod() {
  api::Pod p;
  p.metadata.name = "p";
  api::Container c;
  c.name = "c";
  c.resources.requests["cpu"] = *api::Quantity::Parse("1");
  c.resources.limits["memory"] = *api::Quantity::Parse("1Gi");
  p.spec.containers.push_back(c);
  return p;
}

TEST(FitCoversPodTest, ModelledConstraintsAreCovered) {
  api::Pod p = PlainPod();
  p.spec.node_selector = {{"zone", "a"}};
  p.spec.affinity = api::Affinity{};
  p.spec.affinity->node_affinity = api::NodeAffinity{};
  p.spec.affinity->node_affinity->unknown.members.push_back(
      {"preferredDuringSchedulingIgnoredDuringExecution", "[]"});
  p.spec.unknown.members.push_back(
      {"volumes", R"([{"name":"cache","emptyDir":{}},{"name":"cfg","configMap":{"name":"x"}}])"});
  p.spec.containers[0].unknown.members.push_back({"ports", R"([{"containerPort":80}])"});
  EXPECT_TRUE(FitCoversPod(p));
  p.spec.scheduler_name = "default-scheduler";
  EXPECT_TRUE(FitCoversPod(p));
}

TEST(FitCoversPodTest, AnotherSchedulerIsNotCovered) {
  api::Pod p = PlainPod();
  p.spec.scheduler_name = "draco-e2e-strict";
  EXPECT_FALSE(FitCoversPod(p));
}

TEST(FitCoversPodTest, PodAffinityAndSpreadAreNotCovered) {
  for (const char* field : {"podAffinity", "podAntiAffinity"}) {
    api::Pod p = PlainPod();
    p.spec.affinity = api::Affinity{};
    p.spec.affinity->unknown.members.push_back({field, "{}"});
    EXPECT_FALSE(FitCoversPod(p)) << field;
  }
  api::Pod p = PlainPod();
  p.spec.unknown.members.push_back({"topologySpreadConstraints", "[]"});
  EXPECT_FALSE(FitCoversPod(p));
}

TEST(FitCoversPodTest, HostPortsAndSchedulingVolumesAreNotCovered) {
  api::Pod ports = PlainPod();
  ports.spec.containers[0].unknown.members.push_back(
      {"ports", R"([{"containerPort":80,"hostPort":8080}])"});
  EXPECT_FALSE(FitCoversPod(ports));
  api::Pod init = PlainPod();
  init.spec.init_containers.push_back(init.spec.containers[0]);
  init.spec.init_containers[0].unknown.members.push_back({"ports", R"([{"hostPort":1}])"});
  EXPECT_FALSE(FitCoversPod(init));
  api::Pod pvc = PlainPod();
  pvc.spec.unknown.members.push_back(
      {"volumes", R"([{"name":"d","persistentVolumeClaim":{"claimName":"data"}}])"});
  EXPECT_FALSE(FitCoversPod(pvc));
  // A value that merely mentions the name is not a volume source.
  api::Pod named = PlainPod();
  named.spec.unknown.members.push_back(
      {"volumes", R"([{"name":"\"persistentVolumeClaim\":","emptyDir":{}}])"});
  EXPECT_TRUE(FitCoversPod(named));
}

TEST(FitCoversPodTest, ResourcesOtherThanCpuAndMemoryAreNotCovered) {
  api::Pod ext = PlainPod();
  ext.spec.containers[0].resources.limits["example.com/fpga"] = *api::Quantity::Parse("1");
  EXPECT_FALSE(FitCoversPod(ext));
  api::Pod eph = PlainPod();
  eph.spec.containers[0].resources.requests["ephemeral-storage"] = *api::Quantity::Parse("1Gi");
  EXPECT_FALSE(FitCoversPod(eph));
  api::Pod level = PlainPod();
  level.spec.resources = api::ResourceRequirements{};
  level.spec.resources->requests["hugepages-2Mi"] = *api::Quantity::Parse("2Mi");
  EXPECT_FALSE(FitCoversPod(level));
  api::Pod overhead = PlainPod();
  overhead.spec.overhead["example.com/x"] = *api::Quantity::Parse("1");
  EXPECT_FALSE(FitCoversPod(overhead));
}

}  // namespace
}  // namespace draco::reconcilers
