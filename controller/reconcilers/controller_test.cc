#include "controller/reconcilers/controller.h"

#include <atomic>
#include <thread>

#include <gtest/gtest.h>

#include "controller/reconcilers/testing_fakes.h"
#include "controller/reconcilers/testing_objects.h"

namespace draco::reconcilers {
namespace {

using testing::FakeAllocator;
using testing::FakeEvents;
using testing::FakeQueue;
using testing::FakeWriter;
using testing::GpuTemplate;

api::Node MakeNode(const std::string& name, bool ready = true) {
  api::Node n;
  n.metadata.name = name;
  n.metadata.labels = {{"kubernetes.io/hostname", name}};
  api::NodeCondition c;
  c.type = "Ready";
  c.status = ready ? "True" : "False";
  n.status.conditions.push_back(c);
  n.status.allocatable["pods"] = *api::Quantity::Parse("110");
  n.status.allocatable["cpu"] = *api::Quantity::Parse("4");
  n.status.allocatable["memory"] = *api::Quantity::Parse("16Gi");
  return n;
}

api::Pod MakePod(const std::string& name, bool gated = true) {
  api::Pod p;
  p.metadata.name = name;
  p.metadata.namespace_ = "ns";
  p.metadata.uid = "uid-" + name;
  p.metadata.resource_version = "1";
  api::PodResourceClaim pc;
  pc.name = "gpu";
  pc.resource_claim_template_name = "tmpl";
  p.spec.resource_claims.push_back(pc);
  if (gated) {
    api::PodSchedulingGate g;
    g.name = std::string(kSchedulingGate);
    p.spec.scheduling_gates.push_back(g);
  }
  p.status.phase = "Pending";
  return p;
}

class ControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    api::ResourceClaimTemplate t = GpuTemplate();
    t.spec.metadata.labels = {{"team", "ml"}};
    t.spec.metadata.annotations = {{"note", "x"}};
    cache.UpsertTemplate(std::make_shared<const api::ResourceClaimTemplate>(t));
    cache.UpsertNode(std::make_shared<const api::Node>(MakeNode("node-0")));
    cache.UpsertNode(std::make_shared<const api::Node>(MakeNode("node-1")));
  }

  // Plays the informer: copies the fake API server's state into the cache.
  void Sync() {
    for (const auto& c : cache.Claims()) {
      if (!writer.claims.count(FakeWriter::K(c->metadata.namespace_, c->metadata.name))) {
        cache.DeleteClaim(c->metadata.namespace_, c->metadata.name);
      }
    }
    for (const auto& [k, c] : writer.claims) {
      cache.UpsertClaim(std::make_shared<const api::ResourceClaim>(c));
    }
    for (const auto& [k, p] : writer.pods) cache.UpsertPod(std::make_shared<const api::Pod>(p));
  }

  void AddPod(const api::Pod& p) {
    writer.pods[FakeWriter::K(p.metadata.namespace_, p.metadata.name)] = p;
    cache.UpsertPod(std::make_shared<const api::Pod>(p));
  }

  ClusterCache cache;
  FakeWriter writer;
  FakeAllocator allocator;
  FakeEvents events;
  FakeQueue queue;
  FakeClock clock;
  // No watch in these tests: do not wait for allocations to come back through it.
  Controller ctrl{cache, writer, allocator, events, queue, clock, nullptr, [] {
                    ControllerOptions o;
                    o.observe_timeout = Clock::Duration::zero();
                    return o;
                  }()};
};

TEST_F(ControllerTest, GateIsRemovedOnlyAfterTheWatchDeliveredTheAllocation) {
  Controller waiting(cache, writer, allocator, events, queue, clock, nullptr);  // up to 2 s
  AddPod(MakePod("train"));
  // The pass allocates, then, with the watch not showing the allocation yet, leaves the gate and
  // the worker free (no blocking): a requeue at the release deadline.
  auto r = waiting.SyncPod("ns", "train");
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->requeue_after.has_value());
  EXPECT_EQ(*r->requeue_after, std::chrono::seconds(2));
  EXPECT_EQ(allocator.calls, 1);
  EXPECT_FALSE(writer.pods.at("ns/train").spec.scheduling_gates.empty());
  // The informer delivers the allocated claim: the pod goes to the urgent line at once.
  queue.added.clear();
  for (const auto& [k, c] : writer.claims) {
    ClaimPtr old = cache.GetClaim(c.metadata.namespace_, c.metadata.name);
    auto now = std::make_shared<const api::ResourceClaim>(c);
    cache.UpsertClaim(now);
    waiting.OnClaim(old, now);
  }
  EXPECT_TRUE(queue.next.count("pod:ns/train"));
  r = waiting.SyncPod("ns", "train");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->requeue_after.has_value());
  EXPECT_EQ(allocator.calls, 1);  // released, not allocated again
  EXPECT_TRUE(writer.pods.at("ns/train").spec.scheduling_gates.empty());
}

TEST_F(ControllerTest, GateIsRemovedAfterTheTimeoutWhenTheWatchIsSlow) {
  Controller waiting(cache, writer, allocator, events, queue, clock, nullptr);
  AddPod(MakePod("train"));
  ASSERT_TRUE(waiting.SyncPod("ns", "train").ok());
  clock.Step(std::chrono::seconds(1));
  auto r = waiting.SyncPod("ns", "train");  // the deadline counts from the first pass
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->requeue_after.has_value());
  EXPECT_EQ(*r->requeue_after, std::chrono::seconds(1));
  EXPECT_FALSE(writer.pods.at("ns/train").spec.scheduling_gates.empty());
  clock.Step(std::chrono::seconds(1));
  ASSERT_TRUE(waiting.SyncPod("ns", "train").ok());
  EXPECT_TRUE(writer.pods.at("ns/train").spec.scheduling_gates.empty());
}

TEST_F(ControllerTest, GatedPodGetsClaimAllocationAndLosesGate) {
  AddPod(MakePod("train"));
  auto r = ctrl.SyncPod("ns", "train");
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(writer.claims.size(), 1u);
  const api::ResourceClaim& c = writer.claims.begin()->second;
  EXPECT_EQ(c.metadata.generate_name, "train-gpu-");
  EXPECT_EQ(c.metadata.labels.at("team"), "ml");
  EXPECT_EQ(c.metadata.annotations.at("note"), "x");
  EXPECT_EQ(c.metadata.annotations.at(std::string(kPodClaimNameAnnotation)), "gpu");
  ASSERT_EQ(c.metadata.owner_references.size(), 1u);
  EXPECT_EQ(c.metadata.owner_references[0].uid, "uid-train");
  EXPECT_TRUE(c.metadata.owner_references[0].controller.value_or(false));
  EXPECT_FALSE(c.metadata.owner_references[0].block_owner_deletion.has_value());
  EXPECT_TRUE(HasFinalizer(c.metadata, kDeleteProtectionFinalizer));
  ASSERT_TRUE(c.status.allocation.has_value());
  EXPECT_TRUE(c.status.allocation->allocation_timestamp.has_value());
  ASSERT_EQ(c.status.reserved_for.size(), 1u);
  EXPECT_EQ(c.status.reserved_for[0].uid, "uid-train");
  const api::Pod& p = writer.pods.at("ns/train");
  ASSERT_EQ(p.status.resource_claim_statuses.size(), 1u);
  EXPECT_EQ(p.status.resource_claim_statuses[0].resource_claim_name, c.metadata.name);
  EXPECT_TRUE(p.spec.scheduling_gates.empty());
  // Finalizer set at create: create, status, nominate, ungate = 4 writes, no separate update.
  EXPECT_EQ(writer.Count("update"), 0);
  EXPECT_EQ(writer.calls.size(), 4u);
  // The allocation is node-local: the pod's claim statuses and nominated node go in one write
  // just before the gate removal, which pins the pod to that node.
  const std::string node =
      c.status.allocation->node_selector->node_selector_terms[0].match_fields[0].values[0];
  EXPECT_EQ(writer.Count("apply"), 0);
  EXPECT_EQ(writer.calls[2], "nominate train " + node + " with statuses");
  EXPECT_EQ(writer.calls.back(), "ungate train pin " + node);
  EXPECT_EQ(p.status.nominated_node_name, node);
  // A second sync (stale informer or not) changes nothing.
  Sync();
  writer.calls.clear();
  ASSERT_TRUE(ctrl.SyncPod("ns", "train").ok());
  EXPECT_TRUE(writer.calls.empty()) << writer.calls.front();
}

TEST_F(ControllerTest, NoPinWhenTheAllocationDoesNotRestrictThePodToOneNode) {
  allocator.network_attached = true;
  AddPod(MakePod("a"));
  ASSERT_TRUE(ctrl.SyncPod("ns", "a").ok());
  EXPECT_EQ(writer.calls.back(), "ungate a");
}

TEST_F(ControllerTest, NoPinWhenDisabled) {
  ControllerOptions o;
  o.observe_timeout = Clock::Duration::zero();
  o.pin_node = false;
  Controller c2{cache, writer, allocator, events, queue, clock, nullptr, o};
  AddPod(MakePod("b"));
  ASSERT_TRUE(c2.SyncPod("ns", "b").ok());
  EXPECT_EQ(writer.calls.back(), "ungate b");
}

TEST_F(ControllerTest, FailedStatusApplyNeverCreatesDuplicateClaim) {
  AddPod(MakePod("p"));
  writer.fail_next.insert("nominate");  // the statuses' write with the nominated node
  EXPECT_FALSE(ctrl.SyncPod("ns", "p").ok());
  // The pod's status is still empty in the cache, but the created claim was assumed.
  ASSERT_TRUE(ctrl.SyncPod("ns", "p").ok());
  EXPECT_EQ(writer.Count("create"), 1);
  EXPECT_EQ(writer.claims.size(), 1u);
  EXPECT_EQ(allocator.calls, 1);
  EXPECT_EQ(writer.calls.back().rfind("ungate p pin ", 0), 0u) << writer.calls.back();
}

TEST_F(ControllerTest, FailedStatusApplyNeverCreatesDuplicateClaimWithoutPin) {
  ControllerOptions o;
  o.observe_timeout = Clock::Duration::zero();
  o.pin_node = false;  // no nominated node: the statuses are written when the claim is made
  Controller c2{cache, writer, allocator, events, queue, clock, nullptr, o};
  AddPod(MakePod("p"));
  writer.fail_next.insert("apply");
  EXPECT_FALSE(c2.SyncPod("ns", "p").ok());
  ASSERT_TRUE(c2.SyncPod("ns", "p").ok());
  EXPECT_EQ(writer.Count("create"), 1);
  EXPECT_EQ(writer.claims.size(), 1u);
  EXPECT_EQ(writer.Count("nominate"), 0);
  EXPECT_EQ(writer.calls.back(), "ungate p");
}

// A pod draco cannot place still gets its claim statuses at once, as upstream writes them.
TEST_F(ControllerTest, DeferredStatusesAreWrittenWhenThePodStaysPending) {
  AllocateResponse none;
  none.kind = AllocateResponse::Kind::kUnschedulable;
  none.message = "no devices";
  allocator.next_failure = none;
  AddPod(MakePod("p"));
  ASSERT_TRUE(ctrl.SyncPod("ns", "p").ok());
  EXPECT_EQ(writer.Count("apply"), 1);
  EXPECT_EQ(writer.Count("nominate"), 0);
  const api::Pod& p = writer.pods.at("ns/p");
  ASSERT_EQ(p.status.resource_claim_statuses.size(), 1u);
  EXPECT_FALSE(p.spec.scheduling_gates.empty());
  EXPECT_TRUE(p.status.nominated_node_name.empty());
}

// Waiting for the watch to show the allocation: the statuses and nominated node are written on
// the first pass, the gate comes off on a later one, and nothing is written twice.
TEST_F(ControllerTest, NominatedOnceWhileTheReleaseWaitsForTheWatch) {
  ControllerOptions o;
  o.observe_timeout = std::chrono::seconds(5);
  Controller c2{cache, writer, allocator, events, queue, clock, nullptr, o};
  AddPod(MakePod("w"));
  auto r = c2.SyncPod("ns", "w");
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->requeue_after.has_value());
  EXPECT_EQ(writer.Count("nominate"), 1);
  EXPECT_EQ(writer.Count("ungate"), 0);
  Sync();  // the watch delivers the claim and the pod
  ASSERT_TRUE(c2.SyncPod("ns", "w").ok());
  EXPECT_EQ(writer.Count("nominate"), 1);
  EXPECT_EQ(writer.Count("apply"), 0);
  EXPECT_EQ(writer.Count("ungate"), 1);
}

TEST_F(ControllerTest, UngatedPodOnlyGetsClaims) {
  AddPod(MakePod("p", /*gated=*/false));
  ASSERT_TRUE(ctrl.SyncPod("ns", "p").ok());
  EXPECT_EQ(writer.claims.size(), 1u);
  EXPECT_FALSE(writer.claims.begin()->second.status.allocation.has_value());
  // kube-scheduler allocates it and adds the finalizer itself.
  EXPECT_FALSE(HasFinalizer(writer.claims.begin()->second.metadata, kDeleteProtectionFinalizer));
  EXPECT_EQ(allocator.calls, 0);
}

TEST_F(ControllerTest, MissingTemplateIsReportedAndRetried) {
  api::Pod p = MakePod("p");
  p.spec.resource_claims[0].resource_claim_template_name = "nope";
  AddPod(p);
  auto r = ctrl.SyncPod("ns", "p");
  EXPECT_FALSE(r.ok());
  ASSERT_FALSE(events.events.empty());
  EXPECT_EQ(events.events[0].reason, "FailedResourceClaimCreation");
}

// Only a refusal of the claim is reported on the pod; an API server that cannot answer (a
// transport failure, a 5xx) is retried without an Event, so an outage is not an Event storm.
TEST_F(ControllerTest, ClaimCreationFailuresAreEventsOnlyWhenRefused) {
  AddPod(MakePod("p"));
  for (const char* failure : {"transport:create", "create"}) {
    writer.fail_next = {failure};
    EXPECT_FALSE(ctrl.SyncPod("ns", "p").ok()) << failure;
    EXPECT_TRUE(events.events.empty()) << failure;
  }
  writer.fail_next = {"forbidden:create"};
  EXPECT_FALSE(ctrl.SyncPod("ns", "p").ok());
  ASSERT_EQ(events.events.size(), 1u);
  EXPECT_EQ(events.events[0].reason, "FailedResourceClaimCreation");
  ASSERT_TRUE(ctrl.SyncPod("ns", "p").ok());  // and the retry goes through
  EXPECT_EQ(writer.claims.size(), 1u);
}

// A create that the API server committed but whose answer was lost (found by e2e/chaos's
// connection resets): the retry asks for the same name, gets AlreadyExists and waits for the
// informer instead of creating a second claim for the pod, then adopts the first one.
TEST_F(ControllerTest, LostCreateAnswerDoesNotCreateASecondClaim) {
  AddPod(MakePod("p"));
  writer.fail_next = {"lost:create"};
  EXPECT_FALSE(ctrl.SyncPod("ns", "p").ok());
  ASSERT_EQ(writer.claims.size(), 1u);
  const std::string first = writer.claims.begin()->second.metadata.name;
  // The informer has not delivered the claim yet: the retry must not create another.
  auto r = ctrl.SyncPod("ns", "p");
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable) << r.status();
  EXPECT_EQ(writer.claims.size(), 1u);
  EXPECT_TRUE(events.events.empty());
  // Once it has, the pod adopts the claim and goes on.
  Sync();
  ASSERT_TRUE(ctrl.SyncPod("ns", "p").ok());
  ASSERT_EQ(writer.claims.size(), 1u);
  const api::Pod& pod = writer.pods.at("ns/p");
  ASSERT_EQ(pod.status.resource_claim_statuses.size(), 1u);
  EXPECT_EQ(pod.status.resource_claim_statuses[0].resource_claim_name, first);
  EXPECT_TRUE(writer.claims.begin()->second.status.allocation.has_value());
}

// Another pod's claim holding the derived name (a hash collision) does not block the pod: the
// server picks a name.
TEST_F(ControllerTest, ClaimNameTakenByAnotherPodFallsBackToGenerateName) {
  api::Pod p = MakePod("p");
  AddPod(p);
  api::ResourceClaim other;
  other.metadata.namespace_ = "ns";
  other.metadata.name = GeneratedClaimName("p-gpu-", p.metadata.uid, "gpu");
  api::OwnerReference o;
  o.kind = "Pod";
  o.name = "someone-else";
  o.uid = "uid-someone-else";
  o.controller = true;
  other.metadata.owner_references.push_back(o);
  writer.claims["ns/" + other.metadata.name] = other;
  Sync();
  ASSERT_TRUE(ctrl.SyncPod("ns", "p").ok());
  ASSERT_EQ(writer.claims.size(), 2u);
  const api::Pod& pod = writer.pods.at("ns/p");
  ASSERT_EQ(pod.status.resource_claim_statuses.size(), 1u);
  EXPECT_NE(pod.status.resource_claim_statuses[0].resource_claim_name, other.metadata.name);
}

TEST_F(ControllerTest, NodeFilteringExcludesUnreadyTaintedAndUnselectedNodes) {
  cache.UpsertNode(std::make_shared<const api::Node>(MakeNode("node-0", /*ready=*/false)));
  api::Node tainted = MakeNode("node-2");
  api::Taint t;
  t.key = "gpu";
  t.effect = "NoSchedule";
  tainted.spec.taints.push_back(t);
  cache.UpsertNode(std::make_shared<const api::Node>(tainted));
  api::Node cordoned = MakeNode("node-3");
  cordoned.spec.unschedulable = true;
  cache.UpsertNode(std::make_shared<const api::Node>(cordoned));
  api::Pod p = MakePod("p");
  AddPod(p);
  ASSERT_TRUE(ctrl.SyncPod("ns", "p").ok());
  EXPECT_EQ(allocator.last_candidates, std::vector<std::string>{"node-1"});

  api::Pod q = MakePod("q");
  q.spec.node_selector = {{"kubernetes.io/hostname", "node-9"}};
  AddPod(q);
  ASSERT_TRUE(ctrl.SyncPod("ns", "q").ok());
  EXPECT_EQ(ctrl.ParkedCount(), 1u);
  bool found = false;
  for (const auto& e : events.events) {
    if (e.target.name == "q" &&
        e.message.find("didn't match Pod's node affinity") != std::string::npos) {
      found = true;
    }
  }
  EXPECT_TRUE(found);
}

TEST_F(ControllerTest, AllocationFailureEmitsEventsParksAndRetriesOnInputChange) {
  AddPod(MakePod("p"));
  AllocateResponse fail;
  fail.kind = AllocateResponse::Kind::kError;
  fail.message = "CEL: no such key: model";
  allocator.next_failure = fail;
  ASSERT_TRUE(ctrl.SyncPod("ns", "p").ok());
  ASSERT_EQ(events.events.size(), 2u);  // pod and claim
  EXPECT_EQ(events.events[0].reason, "AllocationError");
  EXPECT_NE(events.events[0].message.find("no such key: model"), std::string::npos);
  EXPECT_EQ(events.events[1].target.kind, "ResourceClaim");
  EXPECT_FALSE(writer.pods.at("ns/p").spec.scheduling_gates.empty());
  queue.added.clear();
  ctrl.OnAllocationInputsChanged();
  EXPECT_TRUE(queue.added.count("pod:ns/p"));
  EXPECT_EQ(ctrl.ParkedCount(), 0u);
}

TEST_F(ControllerTest, ConflictOnAllocationWriteRequeuesAndInvalidates) {
  AddPod(MakePod("p"));
  writer.fail_next.insert("conflict:status");
  auto r = ctrl.SyncPod("ns", "p");
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(k8s::IsConflict(r.status())) << r.status();
  EXPECT_EQ(allocator.invalidations, 1);
  EXPECT_FALSE(writer.pods.at("ns/p").spec.scheduling_gates.empty());
  Sync();
  ASSERT_TRUE(ctrl.SyncPod("ns", "p").ok());
  EXPECT_TRUE(writer.pods.at("ns/p").spec.scheduling_gates.empty());
  EXPECT_EQ(writer.claims.size(), 1u);
}

TEST_F(ControllerTest, SharedAllocatedClaimConstrainsNodeAndIsNotReallocated) {
  AddPod(MakePod("a"));
  ASSERT_TRUE(ctrl.SyncPod("ns", "a").ok());
  Sync();
  std::string claim_name = writer.claims.begin()->second.metadata.name;
  api::Pod b = MakePod("b");
  b.spec.resource_claims[0].resource_claim_template_name.reset();
  b.spec.resource_claims[0].resource_claim_name = claim_name;
  AddPod(b);
  int calls = allocator.calls;
  ASSERT_TRUE(ctrl.SyncPod("ns", "b").ok());
  EXPECT_EQ(allocator.calls, calls);  // nothing to allocate
  EXPECT_TRUE(writer.pods.at("ns/b").spec.scheduling_gates.empty());
}

TEST_F(ControllerTest, BoundPodGetsReservation) {
  AddPod(MakePod("a"));
  ASSERT_TRUE(ctrl.SyncPod("ns", "a").ok());
  Sync();
  auto claim = writer.claims.begin()->second;
  api::Pod b = MakePod("b", false);
  b.spec.resource_claims[0].resource_claim_template_name.reset();
  b.spec.resource_claims[0].resource_claim_name = claim.metadata.name;
  b.spec.node_name = "node-0";
  AddPod(b);
  ASSERT_TRUE(ctrl.SyncPod("ns", "b").ok());
  EXPECT_EQ(writer.claims.begin()->second.status.reserved_for.size(), 2u);
}

TEST_F(ControllerTest, FinishedPodReleasesAndDeletesGeneratedClaimInTwoWrites) {
  AddPod(MakePod("p"));
  ASSERT_TRUE(ctrl.SyncPod("ns", "p").ok());
  Sync();
  api::Pod done = writer.pods.at("ns/p");
  done.spec.node_name = "node-0";
  done.status.phase = "Succeeded";
  AddPod(done);
  std::string name = writer.claims.begin()->second.metadata.name;
  queue.added.clear();
  ctrl.OnPod(nullptr, cache.GetPod("ns", "p"));
  EXPECT_TRUE(queue.urgent.count("claim:ns/" + name));  // its devices are waited for
  ASSERT_TRUE(ctrl.SyncClaim("ns", name).ok());
  // The pod is done and the claim is its own: finalizer removed and claim deleted, without a
  // separate deallocation write (the object, and with it the allocation, goes).
  EXPECT_EQ(writer.Count("status " + name), 1);  // the allocation earlier, nothing now
  EXPECT_EQ(writer.Count("update " + name), 1);
  EXPECT_EQ(writer.Count("delete " + name), 1);
  EXPECT_TRUE(writer.claims.empty());
  // The watch still delivers the finalizer removal before the deletion: the claim is in the
  // cache again for a moment, and its sync must not send a second DELETE (it would be a 404).
  ASSERT_TRUE(cache.GetClaim("ns", name) != nullptr);
  ASSERT_TRUE(ctrl.SyncClaim("ns", name).ok());
  EXPECT_EQ(writer.Count("delete " + name), 1);
  EXPECT_EQ(writer.calls.back(), "delete " + name);
}

TEST_F(ControllerTest, UnknownPodIsCheckedLiveBeforeDroppingReservation) {
  AddPod(MakePod("p"));
  ASSERT_TRUE(ctrl.SyncPod("ns", "p").ok());
  Sync();
  std::string name = writer.claims.begin()->second.metadata.name;
  cache.DeletePod("ns", "p");  // cache lost the pod, but it still exists
  writer.live_pods["ns/p"] = writer.pods.at("ns/p");
  ASSERT_TRUE(ctrl.SyncClaim("ns", name).ok());
  EXPECT_EQ(writer.Count("get p"), 1);
  EXPECT_EQ(writer.claims.at("ns/" + name).status.reserved_for.size(), 1u);
  // Now it is really gone.
  writer.live_pods.clear();
  ASSERT_TRUE(ctrl.SyncClaim("ns", name).ok());
  EXPECT_TRUE(writer.claims.at("ns/" + name).status.reserved_for.empty());
  EXPECT_FALSE(writer.claims.at("ns/" + name).status.allocation.has_value());
}

TEST_F(ControllerTest, DeletedClaimIsDeallocatedAndFinalizerRemoved) {
  AddPod(MakePod("p"));
  ASSERT_TRUE(ctrl.SyncPod("ns", "p").ok());
  Sync();
  std::string name = writer.claims.begin()->second.metadata.name;
  ctrl.OnPod(cache.GetPod("ns", "p"), nullptr);  // pod deleted: UID remembered
  cache.DeletePod("ns", "p");
  ASSERT_TRUE(writer.DeleteClaim("ns", name, "").ok());  // the garbage collector
  Sync();
  ASSERT_TRUE(ctrl.SyncClaim("ns", name).ok());
  EXPECT_TRUE(writer.claims.empty());
}

TEST_F(ControllerTest, ImmediateStandaloneClaimIsAllocated) {
  api::ResourceClaim c;
  c.metadata.name = "shared";
  c.metadata.namespace_ = "ns";
  c.metadata.annotations[std::string(kAllocationAnnotation)] = "immediate";
  ASSERT_TRUE(writer.CreateClaim(c).ok());
  Sync();
  ASSERT_TRUE(ctrl.SyncClaim("ns", "shared").ok());
  const auto& s = writer.claims.at("ns/shared");
  ASSERT_TRUE(s.status.allocation.has_value());
  EXPECT_TRUE(s.status.reserved_for.empty());
  EXPECT_TRUE(HasFinalizer(s.metadata, kDeleteProtectionFinalizer));
}

TEST_F(ControllerTest, EnqueueAllResyncsPodsAndClaims) {
  AddPod(MakePod("p"));
  ASSERT_TRUE(ctrl.SyncPod("ns", "p").ok());
  Sync();
  queue.added.clear();
  ctrl.EnqueueAll();
  EXPECT_TRUE(queue.added.count("pod:ns/p"));
  EXPECT_TRUE(queue.added.count("claim:ns/" + writer.claims.begin()->second.metadata.name));
}

TEST(TimestampTest, RoundTrips) {
  auto t = ParseTimestamp("2026-03-04T05:06:07Z");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(FormatTimestamp(*t), "2026-03-04T05:06:07Z");
  auto f = ParseTimestamp("2026-03-04T05:06:07.250000Z");
  EXPECT_EQ(std::chrono::duration_cast<std::chrono::milliseconds>(*f - *t).count(), 250);
  EXPECT_FALSE(ParseTimestamp("yesterday").has_value());
}

}  // namespace
}  // namespace draco::reconcilers
