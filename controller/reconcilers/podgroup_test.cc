// PodGroup claims (DRAWorkloadResourceClaims): the group's claim is made once for the group,
// shared and allocated once, reserved for the group and released when the group goes.
#include <gtest/gtest.h>

#include "controller/reconcilers/controller.h"
#include "controller/reconcilers/testing_fakes.h"
#include "controller/reconcilers/testing_objects.h"

namespace draco::reconcilers {
namespace {

using testing::FakeAllocator;
using testing::FakeEvents;
using testing::FakeQueue;
using testing::FakeWriter;
using testing::GpuTemplate;

api::Node MakeNode(const std::string& name) {
  api::Node n;
  n.metadata.name = name;
  n.metadata.labels = {{"kubernetes.io/hostname", name}};
  api::NodeCondition c;
  c.type = "Ready";
  c.status = "True";
  n.status.conditions.push_back(c);
  n.status.allocatable["pods"] = *api::Quantity::Parse("110");
  return n;
}

api::PodGroup MakeGroup(const std::string& name, const std::string& uid = "") {
  api::PodGroup g;
  g.metadata.name = name;
  g.metadata.namespace_ = "ns";
  g.metadata.uid = uid.empty() ? "uid-" + name : uid;
  api::PodGroupResourceClaim gc;
  gc.name = "gpu";
  gc.resource_claim_template_name = "tmpl";
  g.spec.resource_claims.push_back(gc);
  return g;
}

api::Pod MakeMember(const std::string& name, const std::string& group, bool gated = true) {
  api::Pod p;
  p.metadata.name = name;
  p.metadata.namespace_ = "ns";
  p.metadata.uid = "uid-" + name;
  p.metadata.resource_version = "1";
  api::PodResourceClaim pc;
  pc.name = "gpu";
  pc.resource_claim_template_name = "tmpl";
  p.spec.resource_claims.push_back(pc);
  p.spec.scheduling_group = api::PodSchedulingGroup{group, {}};
  if (gated) p.spec.scheduling_gates.push_back({std::string(kSchedulingGate), {}});
  p.status.phase = "Pending";
  return p;
}

class PodGroupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    api::ResourceClaimTemplate t = GpuTemplate();
    t.spec.metadata.labels = {{"team", "ml"}};
    cache.UpsertTemplate(std::make_shared<const api::ResourceClaimTemplate>(t));
    cache.UpsertNode(std::make_shared<const api::Node>(MakeNode("node-0")));
  }
  static ControllerOptions Options(bool gate) {
    ControllerOptions o;
    o.observe_timeout = Clock::Duration::zero();
    o.workload_claims = gate;
    return o;
  }
  // Plays the informer for claims, pods and PodGroups.
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
    for (const auto& [k, g] : writer.pod_groups) {
      cache.UpsertPodGroup(std::make_shared<const api::PodGroup>(g));
    }
  }
  void AddPod(const api::Pod& p) {
    writer.pods[FakeWriter::K(p.metadata.namespace_, p.metadata.name)] = p;
    cache.UpsertPod(std::make_shared<const api::Pod>(p));
  }
  void AddGroup(const api::PodGroup& g) {
    writer.pod_groups[FakeWriter::K(g.metadata.namespace_, g.metadata.name)] = g;
    cache.UpsertPodGroup(std::make_shared<const api::PodGroup>(g));
  }

  ClusterCache cache;
  FakeWriter writer;
  FakeAllocator allocator;
  FakeEvents events;
  FakeQueue queue;
  FakeClock clock;
  Controller ctrl{cache, writer, allocator, events, queue, clock, nullptr, Options(true)};
  Controller gate_off{cache, writer, allocator, events, queue, clock, nullptr, Options(false)};
};

TEST_F(PodGroupTest, GroupClaimIsCreatedOnceForTheGroup) {
  AddGroup(MakeGroup("job"));
  AddPod(MakeMember("job-0", "job"));
  queue.added.clear();
  ctrl.OnPodGroup(nullptr, cache.GetPodGroup("ns", "job"));
  EXPECT_TRUE(queue.added.count("podgroup:ns/job"));
  EXPECT_TRUE(queue.added.count("pod:ns/job-0"));
  ASSERT_TRUE(ctrl.SyncPodGroup("ns", "job").ok());
  ASSERT_EQ(writer.claims.size(), 1u);
  const api::ResourceClaim& c = writer.claims.begin()->second;
  EXPECT_EQ(c.metadata.generate_name, "job-gpu-");
  EXPECT_EQ(c.metadata.labels.at("team"), "ml");
  EXPECT_EQ(c.metadata.annotations.at(std::string(kPodClaimNameAnnotation)), "gpu");
  ASSERT_EQ(c.metadata.owner_references.size(), 1u);
  const api::OwnerReference& o = c.metadata.owner_references[0];
  EXPECT_EQ(o.api_version, "scheduling.k8s.io/v1beta1");
  EXPECT_EQ(o.kind, "PodGroup");
  EXPECT_EQ(o.name, "job");
  EXPECT_EQ(o.uid, "uid-job");
  EXPECT_TRUE(o.controller.value_or(false));
  EXPECT_TRUE(c.metadata.finalizers.empty());  // set when a member's allocation is written
  const api::PodGroup& g = writer.pod_groups.at("ns/job");
  ASSERT_EQ(g.status.resource_claim_statuses.size(), 1u);
  EXPECT_EQ(g.status.resource_claim_statuses[0].resource_claim_name, c.metadata.name);
  // Again (the informer has caught up, or not): no second claim, no write.
  writer.calls.clear();
  ASSERT_TRUE(ctrl.SyncPodGroup("ns", "job").ok());
  Sync();
  ASSERT_TRUE(ctrl.SyncPodGroup("ns", "job").ok());
  EXPECT_TRUE(writer.calls.empty()) << writer.calls.front();
  // Standalone claim logic leaves it alone: it is allocated with the first member.
  ASSERT_TRUE(ctrl.SyncClaim("ns", c.metadata.name).ok());
  EXPECT_EQ(allocator.calls, 0);
}

TEST_F(PodGroupTest, MembersShareTheClaimAllocatedOnceAndReservedForTheGroup) {
  AddGroup(MakeGroup("job"));
  AddPod(MakeMember("job-0", "job"));
  AddPod(MakeMember("job-1", "job"));
  // A member synced before the group's claim exists waits for it and creates nothing.
  ASSERT_TRUE(ctrl.SyncPod("ns", "job-0").ok());
  EXPECT_TRUE(writer.claims.empty());
  ASSERT_FALSE(events.events.empty());
  EXPECT_EQ(events.events.back().reason, "ClaimNotFound");
  EXPECT_FALSE(writer.pods.at("ns/job-0").spec.scheduling_gates.empty());

  ASSERT_TRUE(ctrl.SyncPodGroup("ns", "job").ok());
  Sync();
  std::string name = writer.claims.begin()->second.metadata.name;
  ASSERT_TRUE(ctrl.SyncPod("ns", "job-0").ok());
  Sync();
  ASSERT_TRUE(ctrl.SyncPod("ns", "job-1").ok());
  Sync();
  EXPECT_EQ(writer.claims.size(), 1u);
  EXPECT_EQ(allocator.calls, 1);  // allocated once, for the first member
  const api::ResourceClaim& c = writer.claims.at("ns/" + name);
  ASSERT_TRUE(c.status.allocation.has_value());
  EXPECT_TRUE(HasFinalizer(c.metadata, kDeleteProtectionFinalizer));
  // Node-local allocation: the first member is pinned and the claim reserved for the group.
  ASSERT_EQ(c.status.reserved_for.size(), 1u);
  EXPECT_EQ(c.status.reserved_for[0].api_group, "scheduling.k8s.io");
  EXPECT_EQ(c.status.reserved_for[0].resource, "podgroups");
  EXPECT_EQ(c.status.reserved_for[0].name, "job");
  EXPECT_EQ(c.status.reserved_for[0].uid, "uid-job");
  for (const char* pod : {"ns/job-0", "ns/job-1"}) {
    const api::Pod& p = writer.pods.at(pod);
    EXPECT_TRUE(p.spec.scheduling_gates.empty()) << pod;
    ASSERT_EQ(p.status.resource_claim_statuses.size(), 1u) << pod;
    EXPECT_EQ(p.status.resource_claim_statuses[0].resource_claim_name, name) << pod;
  }
  // A bound member adds no reservation of its own: the group's covers it.
  api::Pod bound = writer.pods.at("ns/job-1");
  bound.spec.node_name = "node-0";
  AddPod(bound);
  writer.calls.clear();
  ASSERT_TRUE(ctrl.SyncPod("ns", "job-1").ok());
  EXPECT_EQ(writer.Count("status"), 0);
}

TEST_F(PodGroupTest, MemberWithAStaleViewDoesNotAllocateTheGroupClaimAgain) {
  AddGroup(MakeGroup("job"));
  AddPod(MakeMember("job-0", "job"));
  AddPod(MakeMember("job-1", "job"));
  ASSERT_TRUE(ctrl.SyncPodGroup("ns", "job").ok());
  Sync();
  // Two workers, one shared claim: job-1's sync has read the claim unallocated when job-0's sync
  // allocates and writes it.
  writer.interleave_before["apply"] = [&] { ASSERT_TRUE(ctrl.SyncPod("ns", "job-0").ok()); };
  auto r = ctrl.SyncPod("ns", "job-1");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(allocator.calls, 1) << "the claim was allocated again from a stale view";
  EXPECT_TRUE(r->requeue_after.has_value());  // decided again on the newest state
  EXPECT_FALSE(writer.pods.at("ns/job-1").spec.scheduling_gates.empty());
  Sync();
  ASSERT_TRUE(ctrl.SyncPod("ns", "job-1").ok());
  EXPECT_EQ(allocator.calls, 1);
  EXPECT_TRUE(writer.pods.at("ns/job-1").spec.scheduling_gates.empty());
}

TEST_F(PodGroupTest, BoundMemberReservesTheGroupNotItself) {
  AddGroup(MakeGroup("job"));
  ASSERT_TRUE(ctrl.SyncPodGroup("ns", "job").ok());
  Sync();
  std::string name = writer.claims.begin()->second.metadata.name;
  api::ResourceClaim c = writer.claims.at("ns/" + name);
  c.status.allocation = api::AllocationResult{};  // allocated elsewhere, reserved for nobody
  writer.claims["ns/" + name] = c;
  Sync();
  api::Pod p = MakeMember("job-0", "job", false);
  p.spec.node_name = "node-0";
  AddPod(p);
  ASSERT_TRUE(ctrl.SyncPod("ns", "job-0").ok());
  const auto& reserved = writer.claims.at("ns/" + name).status.reserved_for;
  ASSERT_EQ(reserved.size(), 1u);
  EXPECT_EQ(reserved[0].resource, "podgroups");
  EXPECT_EQ(reserved[0].uid, "uid-job");
}

TEST_F(PodGroupTest, MemberWaitsForItsGroup) {
  AddPod(MakeMember("job-0", "job"));
  auto r = ctrl.SyncPod("ns", "job-0");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("PodGroup ns/job"), std::string::npos) << r.status();
  EXPECT_TRUE(writer.calls.empty());
}

TEST_F(PodGroupTest, WithTheGateOffMembersGetTheirOwnClaims) {
  AddGroup(MakeGroup("job"));
  AddPod(MakeMember("job-0", "job"));
  ASSERT_TRUE(gate_off.SyncPodGroup("ns", "job").ok());
  EXPECT_TRUE(writer.claims.empty());
  ASSERT_TRUE(gate_off.SyncPod("ns", "job-0").ok());
  ASSERT_EQ(writer.claims.size(), 1u);
  const api::ResourceClaim& c = writer.claims.begin()->second;
  EXPECT_EQ(c.metadata.owner_references[0].kind, "Pod");
  EXPECT_EQ(c.status.reserved_for[0].resource, "pods");
}

TEST_F(PodGroupTest, DeletedGroupReleasesAndDeletesItsClaim) {
  AddGroup(MakeGroup("job"));
  AddPod(MakeMember("job-0", "job"));
  ASSERT_TRUE(ctrl.SyncPodGroup("ns", "job").ok());
  Sync();
  ASSERT_TRUE(ctrl.SyncPod("ns", "job-0").ok());
  Sync();
  std::string name = writer.claims.begin()->second.metadata.name;
  // While the group exists its reservation stays, even after the member finished.
  api::Pod done = writer.pods.at("ns/job-0");
  done.spec.node_name = "node-0";
  done.status.phase = "Succeeded";
  AddPod(done);
  ASSERT_TRUE(ctrl.SyncClaim("ns", name).ok());
  EXPECT_EQ(writer.claims.at("ns/" + name).status.reserved_for.size(), 1u);
  // The group is deleted: its claims are synced, released and deleted.
  PodGroupPtr g = cache.GetPodGroup("ns", "job");
  writer.pod_groups.clear();
  cache.DeletePodGroup("ns", "job");
  queue.added.clear();
  ctrl.OnPodGroup(g, nullptr);
  EXPECT_TRUE(queue.added.count("claim:ns/" + name));
  ASSERT_TRUE(ctrl.SyncClaim("ns", name).ok());
  EXPECT_EQ(writer.Count("delete " + name), 1);
  EXPECT_TRUE(writer.claims.empty());
}

TEST_F(PodGroupTest, ReservationOfAnUnknownGroupIsCheckedLive) {
  api::ResourceClaim c;
  c.metadata.name = "shared";
  c.metadata.namespace_ = "ns";
  c.metadata.finalizers = {std::string(kDeleteProtectionFinalizer)};
  c.status.allocation = api::AllocationResult{};
  c.status.reserved_for.push_back(PodGroupConsumer(MakeGroup("job")));
  writer.claims["ns/shared"] = c;
  writer.pod_groups["ns/job"] = MakeGroup("job");  // exists, but no informer (gate off)
  writer.claims["ns/shared"].metadata.resource_version = "5";
  Sync();
  cache.DeletePodGroup("ns", "job");
  auto r = gate_off.SyncClaim("ns", "shared");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(writer.Count("get podgroup job"), 1);
  EXPECT_EQ(writer.claims.at("ns/shared").status.reserved_for.size(), 1u);
  // Nothing watches PodGroups with the gate off: the claim is looked at again later.
  ASSERT_TRUE(r->requeue_after.has_value());
  // Replaced by a new group of the same name: the old reservation is stale.
  writer.pod_groups["ns/job"] = MakeGroup("job", "uid-other");
  r = gate_off.SyncClaim("ns", "shared");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(writer.claims.at("ns/shared").status.reserved_for.empty());
  EXPECT_FALSE(writer.claims.at("ns/shared").status.allocation.has_value());
  EXPECT_FALSE(r->requeue_after.has_value());
}

TEST(PodGroupUtilTest, BindToFollowsTheGroupsClaimList) {
  api::PodGroup g = MakeGroup("job");
  api::Pod p = MakeMember("job-0", "job");
  auto b = BindTo(p, &g, p.spec.resource_claims[0]);
  ASSERT_TRUE(b.ok());
  EXPECT_TRUE(IsPodGroupConsumer(*b));
  // Same name, other template: the pod's own claim.
  api::PodResourceClaim other = p.spec.resource_claims[0];
  other.resource_claim_template_name = "tmpl-2";
  b = BindTo(p, &g, other);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->resource, "pods");
  EXPECT_EQ(b->uid, "uid-job-0");
  // No group (gate off): the pod.
  b = BindTo(p, nullptr, p.spec.resource_claims[0]);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->resource, "pods");
  // A group the pod does not belong to is an error.
  EXPECT_FALSE(BindTo(MakeMember("x", "other"), &g, p.spec.resource_claims[0]).ok());

  api::ResourceClaim c;
  c.status.reserved_for.push_back(PodGroupConsumer(g));
  EXPECT_TRUE(IsReservedForPodOrGroup(c, p, true));
  EXPECT_FALSE(IsReservedForPodOrGroup(c, p, false));
  EXPECT_FALSE(IsReservedForPodOrGroup(c, MakeMember("y", "other"), true));
}

TEST(PodGroupUtilTest, ClaimOwnershipByGroup) {
  api::PodGroup g = MakeGroup("a-very-long-pod-group-name-for-a-large-training-job");
  api::ResourceClaimTemplate t;
  api::ResourceClaim c = ClaimFromPodGroupTemplate(g, g.spec.resource_claims[0], t);
  EXPECT_LE(c.metadata.generate_name.size(), 57u);
  EXPECT_EQ(c.metadata.generate_name,
            GeneratedClaimPrefix(g.metadata.name, g.spec.resource_claims[0].name));
  EXPECT_TRUE(IsClaimForPodGroup(c, g));
  EXPECT_EQ(OwnerPodGroupName(c), g.metadata.name);
  EXPECT_TRUE(OwnerPodUid(c).empty());
  EXPECT_FALSE(IsClaimForPodGroup(c, MakeGroup(g.metadata.name, "uid-new")));
  // Another API group's "PodGroup" kind is not a PodGroup owner.
  c.metadata.owner_references[0].api_version = "scheduling.x-k8s.io/v1alpha1";
  EXPECT_TRUE(OwnerPodGroupUid(c).empty());
}

}  // namespace
}  // namespace draco::reconcilers
