#include "controller/reconcilers/claim_util.h"

#include <gtest/gtest.h>

#include "controller/feasibility/resources.h"
#include "controller/reconcilers/reconciler.h"

namespace draco::reconcilers {
namespace {

TEST(GeneratedClaimPrefixTest, ShortNamesKeepTrailingDash) {
  EXPECT_EQ(GeneratedClaimPrefix("train", "gpu"), "train-gpu-");
}

TEST(GeneratedClaimPrefixTest, LongNamesAreShortenedProportionally) {
  std::string pod(60, 'p'), claim(20, 'c');
  std::string got = GeneratedClaimPrefix(pod, claim);
  // len = 82; pod part 60*57/82 = 41, claim part 20*57/82 = 13, joined by '-', no trailing dash.
  EXPECT_EQ(got, std::string(41, 'p') + "-" + std::string(13, 'c'));
  EXPECT_LE(got.size(), 57u);
}

TEST(GeneratedClaimNameTest, SameForEveryAttemptAndLikeAGeneratedName) {
  std::string a = GeneratedClaimName("train-gpu-", "uid-1", "gpu");
  EXPECT_EQ(a, GeneratedClaimName("train-gpu-", "uid-1", "gpu"));
  ASSERT_EQ(a.size(), std::string("train-gpu-").size() + 5);
  EXPECT_EQ(a.rfind("train-gpu-", 0), 0u);
  for (char ch : a.substr(10)) {
    EXPECT_NE(std::string_view("bcdfghjklmnpqrstvwxz2456789").find(ch), std::string_view::npos)
        << a;
  }
  // Another pod (a re-created one of the same name) or another claim of the pod: another name.
  EXPECT_NE(a, GeneratedClaimName("train-gpu-", "uid-2", "gpu"));
  EXPECT_NE(a, GeneratedClaimName("train-gpu-", "uid-1", "gpu2"));
}

TEST(ResolveClaimNameTest, FollowsUpstreamRules) {
  api::Pod pod;
  api::PodResourceClaim direct;
  direct.name = "a";
  direct.resource_claim_name = "user-claim";
  auto r = ResolveClaimName(pod, direct);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->name, "user-claim");
  EXPECT_FALSE(r->must_check_owner);

  api::PodResourceClaim tmpl;
  tmpl.name = "b";
  tmpl.resource_claim_template_name = "t";
  r = ResolveClaimName(pod, tmpl);
  EXPECT_TRUE(r->not_created_yet);
  api::PodResourceClaimStatus st;
  st.name = "b";
  st.resource_claim_name = "gen-b";
  pod.status.resource_claim_statuses.push_back(st);
  r = ResolveClaimName(pod, tmpl);
  EXPECT_EQ(r->name, "gen-b");
  EXPECT_TRUE(r->must_check_owner);

  api::PodResourceClaim neither;
  neither.name = "c";
  EXPECT_FALSE(ResolveClaimName(pod, neither).ok());
}

TEST(IsPodDoneTest, TerminalOrDeletedBeforeScheduling) {
  api::Pod p;
  EXPECT_FALSE(IsPodDone(p));
  p.status.phase = "Failed";
  EXPECT_TRUE(IsPodDone(p));
  p.status.phase = "Running";
  p.metadata.deletion_timestamp = "2026-01-01T00:00:00Z";
  EXPECT_TRUE(IsPodDone(p));
  p.spec.node_name = "node-0";  // deleting a running pod: kubelet still needs the claims
  EXPECT_FALSE(IsPodDone(p));
  EXPECT_TRUE(PodReleasesClaims(p));
}

TEST(ComputePodRequestsTest, SumsContainersAndTakesInitMax) {
  api::Pod p;
  api::Container a, b, init;
  a.resources.requests["cpu"] = *api::Quantity::Parse("500m");
  a.resources.requests["memory"] = *api::Quantity::Parse("1Gi");
  b.resources.requests["cpu"] = *api::Quantity::Parse("1");
  init.resources.requests["cpu"] = *api::Quantity::Parse("2");
  p.spec.containers = {a, b};
  p.spec.init_containers = {init};
  PodRequests r = ComputePodRequests(p);
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

TEST(ComputePodRequestsTest, ResourcesTakeTheirMaximumIndependently) {
  api::Pod p;
  p.spec.containers = {Requesting("1", "1Gi")};
  p.spec.init_containers = {Requesting("3", "100Mi")};
  PodRequests r = ComputePodRequests(p);
  EXPECT_EQ(r.milli_cpu, 3000);
  EXPECT_EQ(r.memory, 1LL << 30);
}

TEST(ComputePodRequestsTest, SidecarsRunNextToContainersAndLaterInitContainers) {
  // KEP-753: init1(1) sidecar1(500m) init2(2) sidecar2(300m); container(1).
  // Running: 1 + 500m + 300m = 1800m. Init phase: max(1, 500m, 2 + 500m, 500m + 300m) = 2500m.
  api::Pod p;
  p.spec.init_containers = {Requesting("1", "10Mi"), Requesting("500m", "200Mi", true),
                            Requesting("2", "50Mi"), Requesting("300m", "100Mi", true)};
  p.spec.containers = {Requesting("1", "1Gi")};
  PodRequests r = ComputePodRequests(p);
  EXPECT_EQ(r.milli_cpu, 2500);
  // Memory: running 1Gi + 200Mi + 100Mi dominates the init phase (max 300Mi).
  EXPECT_EQ(r.memory, (1024LL + 300) << 20);
  api::ResourceList agg = feasibility::PodSpecRequests(p);  // no pod-level, no overhead
  EXPECT_EQ(agg.at("cpu").ToString(), "2500m");
  EXPECT_EQ(agg.at("memory").ToString(), "1324Mi");
}

TEST(ComputePodRequestsTest, SidecarsCountOnlyForInitContainersDeclaredAfterThem) {
  api::Pod before;  // init(3) runs before the sidecar starts: max(3, 1 + 1) = 3
  before.spec.init_containers = {Requesting("3"), Requesting("1", "", true)};
  before.spec.containers = {Requesting("1")};
  EXPECT_EQ(ComputePodRequests(before).milli_cpu, 3000);

  api::Pod after;  // init(3) runs next to the sidecar: max(1 + 3, 1 + 1) = 4
  after.spec.init_containers = {Requesting("1", "", true), Requesting("3")};
  after.spec.containers = {Requesting("1")};
  EXPECT_EQ(ComputePodRequests(after).milli_cpu, 4000);

  api::Pod sidecars_only;  // sidecars 2 + 2 with no regular init: running sum 2 + 2 + 1 = 5
  sidecars_only.spec.init_containers = {Requesting("2", "", true), Requesting("2", "", true)};
  sidecars_only.spec.containers = {Requesting("1")};
  EXPECT_EQ(ComputePodRequests(sidecars_only).milli_cpu, 5000);

  api::Pod not_always = after;  // "OnFailure" is not a sidecar: max(1 + 0, 3) vs containers 1
  not_always.spec.init_containers[0].restart_policy = "OnFailure";
  EXPECT_EQ(ComputePodRequests(not_always).milli_cpu, 3000);
}

TEST(ComputePodRequestsTest, PodLevelRequestsOverrideTheAggregateThenOverheadIsAdded) {
  api::Pod p;
  p.spec.init_containers = {Requesting("500m", "", true)};
  p.spec.containers = {Requesting("1", "1Gi")};
  p.spec.overhead["cpu"] = *api::Quantity::Parse("250m");
  p.spec.overhead["memory"] = *api::Quantity::Parse("64Mi");
  PodRequests r = ComputePodRequests(p);
  EXPECT_EQ(r.milli_cpu, 1750);
  EXPECT_EQ(r.memory, (1024LL + 64) << 20);

  // Pod-level cpu replaces the container aggregate (even when smaller); memory is not named, so
  // it stays aggregated.
  p.spec.resources = api::ResourceRequirements{};
  p.spec.resources->requests["cpu"] = *api::Quantity::Parse("4");
  p.spec.resources->requests["example.com/foo"] = *api::Quantity::Parse("1");  // unsupported
  r = ComputePodRequests(p);
  EXPECT_EQ(r.milli_cpu, 4250);
  EXPECT_EQ(r.memory, (1024LL + 64) << 20);
  api::ResourceList all = feasibility::PodSpecRequests(p);
  EXPECT_EQ(all.count("example.com/foo"), 0u);

  p.spec.resources->requests["cpu"] = *api::Quantity::Parse("200m");
  p.spec.resources->requests["memory"] = *api::Quantity::Parse("2Gi");
  r = ComputePodRequests(p);
  EXPECT_EQ(r.milli_cpu, 450);
  EXPECT_EQ(r.memory, (2048LL + 64) << 20);

  // Limits alone are not requests: the aggregate is used.
  p.spec.resources->requests.clear();
  p.spec.resources->limits["cpu"] = *api::Quantity::Parse("8");
  r = ComputePodRequests(p);
  EXPECT_EQ(r.milli_cpu, 1750);
}

TEST(ComputePodRequestsTest, SumsExactlyBeforeRoundingUp) {
  api::Pod p;  // 500u + 500u = 1m exactly (rounding each container up first would give 2m)
  p.spec.containers = {Requesting("500u"), Requesting("500u")};
  EXPECT_EQ(ComputePodRequests(p).milli_cpu, 1);
  p.spec.containers.push_back(Requesting("1u"));
  EXPECT_EQ(ComputePodRequests(p).milli_cpu, 2);
}

TEST(QueueKeyTest, RoundTrips) {
  auto r = ParseQueueKey(QueueKey("pod", "ns", "name"));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->kind, "pod");
  EXPECT_EQ(r->Key(), "ns/name");
  EXPECT_FALSE(ParseQueueKey("garbage").has_value());
  EXPECT_TRUE(IsTerminalError(TerminalError("x")));
  EXPECT_FALSE(IsTerminalError(FailedPreconditionError("x")));
}

}  // namespace
}  // namespace draco::reconcilers
