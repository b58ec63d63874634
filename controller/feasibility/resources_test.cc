#include "controller/feasibility/resources.h"

#include <gtest/gtest.h>

namespace draco::feasibility {
namespace {

// upstream's resource.PodRequests in framework.Resource units (what NodeResourcesFit compares).
Resources Requests(const api::Pod& p) { return FromResourceList(PodSpecRequests(p)); }

TEST(PodSpecRequestsTest, SumsContainersAndTakesInitMax) {
  api::Pod p;
  api::Container a, b, init;
  a.resources.requests["cpu"] = *api::Quantity::Parse("500m");
  a.resources.requests["memory"] = *api::Quantity::Parse("1Gi");
  b.resources.requests["cpu"] = *api::Quantity::Parse("1");
  init.resources.requests["cpu"] = *api::Quantity::Parse("2");
  p.spec.containers = {a, b};
  p.spec.init_containers = {init};
  Resources r = Requests(p);
  EXPECT_EQ(r.milli_cpu, 2000);
  EXPECT_EQ(r.memory, 1073741824);
}

api::Container Requesting(std::string_view cpu, std::string_view memory = "",
                          bool sidecar = false) {
  api::Container c;
  if (!cpu.empty()) c.resources.requests["cpu"] = *api::Quantity::Parse(cpu);
  if (!memory.empty()) c.resources.requests["memory"] = *api::Quantity::Parse(memory);
  if (sidecar) c.restart_policy = "Always";
  return c;
}

TEST(PodSpecRequestsTest, ResourcesTakeTheirMaximumIndependently) {
  api::Pod p;
  p.spec.containers = {Requesting("1", "1Gi")};
  p.spec.init_containers = {Requesting("3", "100Mi")};
  Resources r = Requests(p);
  EXPECT_EQ(r.milli_cpu, 3000);
  EXPECT_EQ(r.memory, 1LL << 30);
}

TEST(PodSpecRequestsTest, SidecarsRunNextToContainersAndLaterInitContainers) {
  // KEP-753: init1(1) sidecar1(500m) init2(2) sidecar2(300m); container(1).
  // Running: 1 + 500m + 300m = 1800m. Init phase: max(1, 500m, 2 + 500m, 500m + 300m) = 2500m.
  api::Pod p;
  p.spec.init_containers = {Requesting("1", "10Mi"), Requesting("500m", "200Mi", true),
                            Requesting("2", "50Mi"), Requesting("300m", "100Mi", true)};
  p.spec.containers = {Requesting("1", "1Gi")};
  Resources r = Requests(p);
  EXPECT_EQ(r.milli_cpu, 2500);
  // Memory: running 1Gi + 200Mi + 100Mi dominates the init phase (max 300Mi).
  EXPECT_EQ(r.memory, (1024LL + 300) << 20);
  api::ResourceList agg = PodSpecRequests(p);  // no pod-level, no overhead
  EXPECT_EQ(agg.at("cpu").ToString(), "2500m");
  EXPECT_EQ(agg.at("memory").ToString(), "1324Mi");
}

TEST(PodSpecRequestsTest, SidecarsCountOnlyForInitContainersDeclaredAfterThem) {
  api::Pod before;  // init(3) runs before the sidecar starts: max(3, 1 + 1) = 3
  before.spec.init_containers = {Requesting("3"), Requesting("1", "", true)};
  before.spec.containers = {Requesting("1")};
  EXPECT_EQ(Requests(before).milli_cpu, 3000);

  api::Pod after;  // init(3) runs next to the sidecar: max(1 + 3, 1 + 1) = 4
  after.spec.init_containers = {Requesting("1", "", true), Requesting("3")};
  after.spec.containers = {Requesting("1")};
  EXPECT_EQ(Requests(after).milli_cpu, 4000);

  api::Pod sidecars_only;  // sidecars 2 + 2 with no regular init: running sum 2 + 2 + 1 = 5
  sidecars_only.spec.init_containers = {Requesting("2", "", true), Requesting("2", "", true)};
  sidecars_only.spec.containers = {Requesting("1")};
  EXPECT_EQ(Requests(sidecars_only).milli_cpu, 5000);

  api::Pod not_always = after;  // "OnFailure" is not a sidecar: max(1 + 0, 3) vs containers 1
  not_always.spec.init_containers[0].restart_policy = "OnFailure";
  EXPECT_EQ(Requests(not_always).milli_cpu, 3000);
}

TEST(PodSpecRequestsTest, PodLevelRequestsOverrideTheAggregateThenOverheadIsAdded) {
  api::Pod p;
  p.spec.init_containers = {Requesting("500m", "", true)};
  p.spec.containers = {Requesting("1", "1Gi")};
  p.spec.overhead["cpu"] = *api::Quantity::Parse("250m");
  p.spec.overhead["memory"] = *api::Quantity::Parse("64Mi");
  Resources r = Requests(p);
  EXPECT_EQ(r.milli_cpu, 1750);
  EXPECT_EQ(r.memory, (1024LL + 64) << 20);

  // Pod-level cpu replaces the container aggregate (even when smaller); memory is not named, so
  // it stays aggregated.
  p.spec.resources = api::ResourceRequirements{};
  p.spec.resources->requests["cpu"] = *api::Quantity::Parse("4");
  p.spec.resources->requests["example.com/foo"] = *api::Quantity::Parse("1");  // unsupported
  r = Requests(p);
  EXPECT_EQ(r.milli_cpu, 4250);
  EXPECT_EQ(r.memory, (1024LL + 64) << 20);
  api::ResourceList all = PodSpecRequests(p);
  EXPECT_EQ(all.count("example.com/foo"), 0u);

  p.spec.resources->requests["cpu"] = *api::Quantity::Parse("200m");
  p.spec.resources->requests["memory"] = *api::Quantity::Parse("2Gi");
  r = Requests(p);
  EXPECT_EQ(r.milli_cpu, 450);
  EXPECT_EQ(r.memory, (2048LL + 64) << 20);

  // Limits alone are not requests: the aggregate is used.
  p.spec.resources->requests.clear();
  p.spec.resources->limits["cpu"] = *api::Quantity::Parse("8");
  r = Requests(p);
  EXPECT_EQ(r.milli_cpu, 1750);
}

TEST(PodSpecRequestsTest, SumsExactlyBeforeRoundingUp) {
  api::Pod p;  // 500u + 500u = 1m exactly (rounding each container up first would give 2m)
  p.spec.containers = {Requesting("500u"), Requesting("500u")};
  EXPECT_EQ(Requests(p).milli_cpu, 1);
  p.spec.containers.push_back(Requesting("1u"));
  EXPECT_EQ(Requests(p).milli_cpu, 2);
}

}  // namespace
}  // namespace draco::feasibility
