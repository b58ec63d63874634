// Claim lifecycle ownership (claim_lifecycle.h, lifecycle_probe.h): detection, the probe, and the
// controller leaving creation, recording, releasing and deletion to upstream's controller.
#include "controller/reconcilers/claim_lifecycle.h"

#include <gtest/gtest.h>

#include "controller/reconcilers/claim_util.h"
#include "controller/reconcilers/controller.h"
#include "controller/reconcilers/lifecycle_probe.h"
#include "controller/reconcilers/testing_fakes.h"
#include "controller/reconcilers/testing_groups.h"
#include "controller/reconcilers/testing_objects.h"

namespace draco::reconcilers {
namespace {

using namespace std::chrono_literals;
using testing::FakeAllocator;
using testing::FakeEvents;
using testing::FakeQueue;
using testing::FakeWriter;
using testing::GatedPod;
using testing::GpuTemplate;
using testing::ReadyNode;

// The claim upstream's controller makes for `pod`'s entry "gpu": generateName plus five random
// characters (not draco's derived name), created at `created`.
api::ResourceClaim UpstreamClaim(const api::Pod& pod, const std::string& created,
                                 const std::string& suffix = "x7k2q") {
  api::PodResourceClaim pc = pod.spec.resource_claims.at(0);
  api::ResourceClaim c = ClaimFromTemplate(pod, pc, GpuTemplate(), /*with_finalizer=*/false);
  c.metadata.name = c.metadata.generate_name + suffix;
  c.metadata.uid = "uid-" + c.metadata.name;
  c.metadata.creation_timestamp = created;
  c.metadata.unknown.members.emplace_back(
      "managedFields",
      R"([{"manager":"kube-controller-manager","operation":"Update","apiVersion":"resource.k8s.io/v1"}])");
  return c;
}

TEST(ClaimLifecycleTest, ParsesModes) {
  EXPECT_EQ(*ParseLifecycleMode("auto"), LifecycleMode::kAuto);
  EXPECT_EQ(*ParseLifecycleMode("draco"), LifecycleMode::kDraco);
  EXPECT_EQ(*ParseLifecycleMode("upstream"), LifecycleMode::kUpstream);
  auto bad = ParseLifecycleMode("kcm");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("auto, draco or upstream"), std::string::npos);
}

TEST(ClaimLifecycleTest, TellsUpstreamClaimsFromDracos) {
  FakeClock clock;
  const std::string now = FormatTimestamp(clock.WallNow());
  api::Pod pod = GatedPod("train");
  api::ResourceClaim ours =
      ClaimFromTemplate(pod, pod.spec.resource_claims[0], GpuTemplate(), true);
  EXPECT_FALSE(CreatedByUpstreamController(ours));
  EXPECT_TRUE(CreatedByUpstreamController(UpstreamClaim(pod, now)));
  // Server-picked name (draco's hash-collision path) but draco's field manager: draco's.
  api::ResourceClaim renamed = ours;
  renamed.metadata.name = ours.metadata.generate_name + "abcde";
  renamed.metadata.unknown.members.emplace_back("managedFields",
                                                R"([{"manager":"draco","operation":"Update"}])");
  EXPECT_FALSE(CreatedByUpstreamController(renamed));
  // Not generated for a pod: a user's claim says nothing.
  api::ResourceClaim user = UpstreamClaim(pod, now);
  user.metadata.owner_references.clear();
  EXPECT_FALSE(CreatedByUpstreamController(user));
}

TEST(ClaimLifecycleTest, AutoStartsUndecidedAndFollowsTheEvidence) {
  FakeClock clock;
  ClaimLifecycle lc(LifecycleMode::kAuto, clock);
  std::vector<LifecycleOwner> seen;
  lc.SetOnChange([&](LifecycleOwner o, const std::string&) { seen.push_back(o); });
  EXPECT_EQ(lc.Owner(), LifecycleOwner::kUndecided);
  EXPECT_FALSE(lc.DracoOwns());
  api::Pod pod = GatedPod("train");
  // A claim of upstream's from long ago (the initial LIST) proves nothing about now.
  lc.ObserveClaimAdded(UpstreamClaim(pod, FormatTimestamp(clock.WallNow() - 10min)));
  EXPECT_EQ(lc.Owner(), LifecycleOwner::kUndecided);
  // A probe without its claim and without any evidence: draco takes over.
  lc.ProbeFinished(false, clock.Now());
  EXPECT_EQ(lc.Owner(), LifecycleOwner::kDraco);
  // A fresh claim of upstream's: it runs; switch at once.
  clock.Step(1s);
  lc.ObserveClaimAdded(UpstreamClaim(pod, FormatTimestamp(clock.WallNow())));
  EXPECT_EQ(lc.Owner(), LifecycleOwner::kUpstream);
  EXPECT_NE(lc.Reason().find("ns/train-gpu-x7k2q"), std::string::npos) << lc.Reason();
  // A probe that timed out while upstream's claims kept coming: busy, not gone.
  lc.ProbeFinished(false, clock.Now() - 500ms);
  EXPECT_EQ(lc.Owner(), LifecycleOwner::kUpstream);
  // One that ran after the last evidence: gone.
  clock.Step(1s);
  lc.ProbeFinished(false, clock.Now() - 500ms);
  EXPECT_EQ(lc.Owner(), LifecycleOwner::kDraco);
  lc.ProbeFinished(true, clock.Now());
  EXPECT_EQ(lc.Owner(), LifecycleOwner::kUpstream);
  EXPECT_EQ(seen, (std::vector<LifecycleOwner>{LifecycleOwner::kDraco, LifecycleOwner::kUpstream,
                                               LifecycleOwner::kDraco, LifecycleOwner::kUpstream}));
}

TEST(ClaimLifecycleTest, FixedModesIgnoreEvidence) {
  FakeClock clock;
  ClaimLifecycle draco(LifecycleMode::kDraco, clock);
  ClaimLifecycle upstream(LifecycleMode::kUpstream, clock);
  api::Pod pod = GatedPod("train");
  draco.ObserveClaimAdded(UpstreamClaim(pod, FormatTimestamp(clock.WallNow())));
  upstream.ProbeFinished(false, clock.Now());
  EXPECT_EQ(draco.Owner(), LifecycleOwner::kDraco);
  EXPECT_EQ(upstream.Owner(), LifecycleOwner::kUpstream);
}

class ProbeTest : public ::testing::Test {
 protected:
  ProbeOptions Options() {
    ProbeOptions o;
    o.namespace_ = "draco-system";
    o.interval = 30s;
    o.timeout = 5s;
    o.poll = 200ms;
    return o;
  }
  FakeClock clock;
  ClusterCache cache;
  FakeWriter writer;
  ClaimLifecycle lifecycle{LifecycleMode::kAuto, clock};
  LifecycleProbe probe{lifecycle, cache, writer, clock, Options()};
};

TEST_F(ProbeTest, NoClaimWithinTheTimeoutMeansDracoOwnsTheLifecycle) {
  EXPECT_EQ(probe.QueueKey(), "lifecycle:draco-system/probe");
  auto r = probe.Sync();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->requeue_after, 200ms);
  ASSERT_EQ(writer.created_pods.size(), 1u);
  const api::Pod& p = writer.created_pods[0];
  EXPECT_TRUE(IsLifecycleProbe(p));
  EXPECT_EQ(p.metadata.namespace_, "draco-system");
  ASSERT_EQ(p.spec.scheduling_gates.size(), 1u);
  EXPECT_EQ(p.spec.scheduling_gates[0].name, kProbeLabel);
  EXPECT_EQ(p.spec.resource_claims.at(0).resource_claim_template_name, kProbeTemplate);
  EXPECT_EQ(writer.Count("create template draco-system/draco-lifecycle-probe"), 1);
  clock.Step(4s);
  r = probe.Sync();
  EXPECT_EQ(r->requeue_after, 200ms);  // still waiting
  EXPECT_EQ(lifecycle.Owner(), LifecycleOwner::kUndecided);
  clock.Step(1s);
  r = probe.Sync();
  EXPECT_EQ(r->requeue_after, 30s);
  EXPECT_EQ(lifecycle.Owner(), LifecycleOwner::kDraco);
  EXPECT_EQ(writer.Count("delete pod draco-system/" + p.metadata.name), 1);
  // Not due yet; then due, and the template is not created again.
  clock.Step(10s);
  r = probe.Sync();
  EXPECT_EQ(r->requeue_after, 20s);
  EXPECT_EQ(writer.created_pods.size(), 1u);
  probe.RequestSoon();
  ASSERT_TRUE(probe.Sync().ok());
  EXPECT_EQ(writer.created_pods.size(), 2u);
  EXPECT_EQ(writer.Count("create template"), 1);
}

TEST_F(ProbeTest, TheProbePodsClaimMeansUpstreamOwnsIt) {
  ASSERT_TRUE(probe.Sync().ok());
  api::Pod p = writer.created_pods.at(0);
  cache.UpsertPod(std::make_shared<const api::Pod>(p));
  api::ResourceClaim c;
  c.metadata.name = p.metadata.name + "-probe-abcde";
  c.metadata.namespace_ = "draco-system";
  api::OwnerReference o;
  o.api_version = "v1";
  o.kind = "Pod";
  o.name = p.metadata.name;
  o.uid = p.metadata.uid;
  o.controller = true;
  c.metadata.owner_references.push_back(o);
  cache.UpsertClaim(std::make_shared<const api::ResourceClaim>(c));
  clock.Step(300ms);
  auto r = probe.Sync();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(lifecycle.Owner(), LifecycleOwner::kUpstream);
  EXPECT_EQ(writer.Count("delete pod"), 1);
}

TEST_F(ProbeTest, LeftOverProbePodsAreDeletedAndRefusalsAreErrors) {
  api::Pod old = probe.ProbePod();
  old.metadata.name = "draco-lifecycle-probe-old";
  old.metadata.uid = "uid-old";
  cache.UpsertPod(std::make_shared<const api::Pod>(old));
  writer.fail_next.insert("forbidden:create pod");
  auto r = probe.Sync();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("cannot create the probe pod in draco-system"),
            std::string::npos)
      << r.status();
  EXPECT_EQ(writer.Count("delete pod draco-system/draco-lifecycle-probe-old"), 1);
  EXPECT_EQ(lifecycle.Owner(), LifecycleOwner::kUndecided);
}

class LifecycleControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cache.UpsertTemplate(std::make_shared<const api::ResourceClaimTemplate>(GpuTemplate()));
    cache.UpsertNode(std::make_shared<const api::Node>(ReadyNode("node-0")));
    ctrl.SetLifecycle(&lifecycle, &probe);
  }
  void Sync() { testing::PlayInformer(writer, cache); }
  api::Pod AddPod(api::Pod p) {
    p.metadata.creation_timestamp = FormatTimestamp(clock.WallNow());
    writer.pods[FakeWriter::K(p.metadata.namespace_, p.metadata.name)] = p;
    cache.UpsertPod(std::make_shared<const api::Pod>(p));
    return p;
  }
  // What kube-controller-manager's resourceclaim controller does for the pod: create the claim
  // and record it in the pod's status.
  std::string UpstreamCreates(const api::Pod& pod) {
    api::ResourceClaim c = UpstreamClaim(pod, FormatTimestamp(clock.WallNow()));
    writer.claims[FakeWriter::K("ns", c.metadata.name)] = c;
    api::Pod& live = writer.pods.at(FakeWriter::K("ns", pod.metadata.name));
    live.status.resource_claim_statuses = {{"gpu", c.metadata.name, {}}};
    Sync();
    return c.metadata.name;
  }
  static ControllerOptions Options() {
    ControllerOptions o;
    o.observe_timeout = Clock::Duration::zero();
    return o;
  }

  FakeClock clock;
  ClusterCache cache;
  FakeWriter writer;
  FakeAllocator allocator;
  FakeEvents events;
  FakeQueue queue;
  ClaimLifecycle lifecycle{LifecycleMode::kUpstream, clock};
  LifecycleProbe probe{lifecycle, cache, writer, clock, ProbeOptions{}};
  Controller ctrl{cache, writer, allocator, events, queue, clock, nullptr, Options()};
};

TEST_F(LifecycleControllerTest, UpstreamModeAllocatesTheClaimUpstreamCreatedAndWritesNoStatus) {
  api::Pod pod = AddPod(GatedPod("train"));
  auto r = ctrl.SyncPod("ns", "train");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->requeue_after, Controller::kLifecycleQuiet);  // waits quietly
  EXPECT_TRUE(writer.calls.empty()) << writer.calls.front();
  EXPECT_TRUE(events.events.empty());
  const std::string name = UpstreamCreates(pod);
  r = ctrl.SyncPod("ns", "train");
  ASSERT_TRUE(r.ok()) << r.status();
  const api::ResourceClaim& c = writer.claims.at("ns/" + name);
  ASSERT_TRUE(c.status.allocation.has_value());
  EXPECT_TRUE(HasFinalizer(c.metadata, kDeleteProtectionFinalizer));  // added at allocation
  EXPECT_TRUE(writer.pods.at("ns/train").spec.scheduling_gates.empty());
  EXPECT_EQ(writer.claims.size(), 1u);
  EXPECT_EQ(writer.Count("create"), 0);
  EXPECT_EQ(writer.Count("apply"), 0);
  for (const auto& call : writer.calls) {
    EXPECT_EQ(call.find("with statuses"), std::string::npos) << call;
  }
}

TEST_F(LifecycleControllerTest, UndecidedCreatesNothingEither) {
  ClaimLifecycle undecided(LifecycleMode::kAuto, clock);
  ctrl.SetLifecycle(&undecided, nullptr);
  AddPod(GatedPod("train"));
  ASSERT_TRUE(ctrl.SyncPod("ns", "train").ok());
  EXPECT_TRUE(writer.calls.empty());
  // Decided for draco: the same pod gets its claim.
  undecided.ProbeFinished(false, clock.Now());
  ASSERT_TRUE(ctrl.SyncPod("ns", "train").ok());
  EXPECT_EQ(writer.claims.size(), 1u);
}

TEST_F(LifecycleControllerTest, ALongWaitAsksForAProbeAndSaysWhy) {
  AddPod(GatedPod("train"));
  clock.Step(11s);
  auto r = ctrl.SyncPod("ns", "train");
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(events.events.size(), 1u);
  EXPECT_EQ(events.events[0].reason, "WaitingForClaimCreation");
  EXPECT_NE(events.events[0].message.find("kube-controller-manager's resourceclaim controller"),
            std::string::npos)
      << events.events[0].message;
  EXPECT_TRUE(queue.added.count(probe.QueueKey()));
}

TEST_F(LifecycleControllerTest, UpstreamModeLeavesReleasesReservationsAndDeletionsToUpstream) {
  api::Pod pod = GatedPod("train");
  api::ResourceClaim c = UpstreamClaim(pod, FormatTimestamp(clock.WallNow()));
  c.metadata.finalizers = {std::string(kDeleteProtectionFinalizer)};
  c.status.allocation.emplace();
  c.status.reserved_for.push_back(PodConsumer(pod));  // the pod is gone
  writer.claims["ns/" + c.metadata.name] = c;
  Sync();
  ASSERT_TRUE(ctrl.SyncClaim("ns", c.metadata.name).ok());
  EXPECT_TRUE(writer.calls.empty()) << writer.calls.front();
  // A bound pod whose allocated claim is not reserved for it: upstream reserves it.
  api::Pod bound = GatedPod("bound");
  bound.spec.scheduling_gates.clear();
  bound.spec.node_name = "node-0";
  api::ResourceClaim bc = UpstreamClaim(bound, FormatTimestamp(clock.WallNow()), "b0und");
  bc.status.allocation.emplace();
  writer.claims["ns/" + bc.metadata.name] = bc;
  bound.status.resource_claim_statuses = {{"gpu", bc.metadata.name, {}}};
  AddPod(bound);
  Sync();
  ASSERT_TRUE(ctrl.SyncPod("ns", "bound").ok());
  EXPECT_TRUE(writer.calls.empty()) << writer.calls.front();
  // The same claim with draco owning the lifecycle: the stale reservation goes.
  ClaimLifecycle draco(LifecycleMode::kDraco, clock);
  ctrl.SetLifecycle(&draco, nullptr);
  ASSERT_TRUE(ctrl.SyncClaim("ns", c.metadata.name).ok());
  EXPECT_EQ(writer.Count("status " + c.metadata.name), 1);
}

TEST_F(LifecycleControllerTest, ADuplicateClaimOfALifecycleChangeIsDeletedAfterItsGrace) {
  api::Pod pod = AddPod(GatedPod("train"));
  const std::string used = UpstreamCreates(pod);  // recorded in the pod's status
  // draco's own claim for the same entry, made while it owned the lifecycle, allocated.
  api::ResourceClaim dup = ClaimFromTemplate(pod, pod.spec.resource_claims[0], GpuTemplate(), true);
  dup.metadata.uid = "uid-dup";
  dup.metadata.creation_timestamp = FormatTimestamp(clock.WallNow() - 3s);
  dup.status.allocation.emplace();
  writer.claims["ns/" + dup.metadata.name] = dup;
  Sync();
  queue.added.clear();
  ctrl.OnPod(nullptr, cache.GetPod("ns", "train"));
  EXPECT_TRUE(queue.added.count("claim:ns/" + dup.metadata.name));
  auto r = ctrl.SyncClaim("ns", dup.metadata.name);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->requeue_after, Controller::kDuplicateGrace - 3s);  // not yet
  EXPECT_TRUE(writer.calls.empty());
  clock.Step(8s);
  ASSERT_TRUE(ctrl.SyncClaim("ns", dup.metadata.name).ok());
  EXPECT_EQ(writer.claims.count("ns/" + dup.metadata.name), 0u);
  EXPECT_EQ(writer.claims.count("ns/" + used), 1u);
  ASSERT_FALSE(events.events.empty());
  EXPECT_EQ(events.events.back().reason, "DuplicateClaimDeleted");
  // The claim the pod uses is never a duplicate, and an unallocated second claim is left to the
  // garbage collector.
  api::ResourceClaim idle = UpstreamClaim(pod, FormatTimestamp(clock.WallNow() - 1h), "idle0");
  writer.claims["ns/" + idle.metadata.name] = idle;
  Sync();
  writer.calls.clear();
  ASSERT_TRUE(ctrl.SyncClaim("ns", used).ok());
  ASSERT_TRUE(ctrl.SyncClaim("ns", idle.metadata.name).ok());
  EXPECT_TRUE(writer.calls.empty());
}

TEST_F(LifecycleControllerTest, AReservedDuplicateIsLeftAlone) {
  api::Pod pod = AddPod(GatedPod("train"));
  UpstreamCreates(pod);
  api::ResourceClaim dup = ClaimFromTemplate(pod, pod.spec.resource_claims[0], GpuTemplate(), true);
  dup.metadata.creation_timestamp = FormatTimestamp(clock.WallNow() - 1h);
  dup.status.allocation.emplace();
  dup.status.reserved_for.push_back(PodConsumer(pod));
  writer.claims["ns/" + dup.metadata.name] = dup;
  Sync();
  ASSERT_TRUE(ctrl.SyncClaim("ns", dup.metadata.name).ok());
  EXPECT_TRUE(writer.calls.empty());
}

TEST_F(LifecycleControllerTest, WhenNoProbeCanRunALongWaitingPodStandsInForIt) {
  ClaimLifecycle auto_lc(LifecycleMode::kAuto, clock);
  LifecycleProbe refused(auto_lc, cache, writer, clock, ProbeOptions{});
  ctrl.SetLifecycle(&auto_lc, &refused);
  for (int i = 0; i < 3; ++i) {
    writer.fail_next.insert("forbidden:create pod");
    ASSERT_FALSE(refused.Sync().ok());
  }
  EXPECT_TRUE(refused.Failing());
  AddPod(GatedPod("train"));
  clock.Step(31s);
  ASSERT_TRUE(ctrl.SyncPod("ns", "train").ok());
  EXPECT_EQ(auto_lc.Owner(), LifecycleOwner::kDraco);
  ASSERT_TRUE(ctrl.SyncPod("ns", "train").ok());
  EXPECT_EQ(writer.claims.size(), 1u);
}

TEST_F(LifecycleControllerTest, AGroupMemberWaitsForItsOwnClaimThenTheGroupGoes) {
  // Two members; upstream has created and recorded the first one's claim only.
  api::Pod a = AddPod(testing::GroupMember("a", "g", 2));
  api::Pod b = AddPod(testing::GroupMember("b", "g", 2));
  writer.claims.clear();
  UpstreamCreates(a);
  auto r = ctrl.SyncPod("ns", "b");  // its own claim is missing: it waits, nothing allocated
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(allocator.calls, 0);
  r = ctrl.SyncPod("ns", "a");  // the other member's claim is missing: the group waits
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(allocator.calls, 0);
  api::ResourceClaim cb = UpstreamClaim(b, FormatTimestamp(clock.WallNow()), "bbbbb");
  writer.claims["ns/" + cb.metadata.name] = cb;
  writer.pods.at("ns/b").status.resource_claim_statuses = {{"gpu", cb.metadata.name, {}}};
  Sync();
  ASSERT_TRUE(ctrl.SyncPod("ns", "b").ok());
  EXPECT_TRUE(writer.pods.at("ns/a").spec.scheduling_gates.empty());
  EXPECT_TRUE(writer.pods.at("ns/b").spec.scheduling_gates.empty());
  EXPECT_EQ(writer.Count("create"), 0);
}

TEST_F(LifecycleControllerTest, ADecisionRequeuesTheMembersPodGroups) {
  ControllerOptions o = Options();
  o.workload_claims = true;
  Controller groups{cache, writer, allocator, events, queue, clock, nullptr, o};
  api::Pod p = GatedPod("m");
  p.spec.scheduling_group = api::PodSchedulingGroup{"pg", {}};
  AddPod(p);
  groups.EnqueueAll();  // what a claim lifecycle decision runs
  EXPECT_TRUE(queue.added.count("podgroup:ns/pg"));
}

TEST_F(LifecycleControllerTest, ProbePodsAreNotDracosToServe) {
  api::Pod p = probe.ProbePod();
  p.metadata.name = "draco-lifecycle-probe-1";
  p.metadata.uid = "uid-probe";
  ctrl.OnPod(nullptr, std::make_shared<const api::Pod>(p));
  EXPECT_TRUE(queue.added.empty());
}

}  // namespace
}  // namespace draco::reconcilers
