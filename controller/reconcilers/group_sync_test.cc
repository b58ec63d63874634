// All-or-nothing groups in the controller, with the real allocator (SnapshotAllocator, CEL):
// a group waits for its minimum, is placed as a whole or not at all, keeps to one domain of its
// match attribute, is released together, and never leaves devices with part of a group.
#include <gtest/gtest.h>

#include "controller/allocator/allocator.h"
#include "controller/reconcilers/controller.h"
#include "controller/reconcilers/snapshot_allocator.h"
#include "controller/reconcilers/testing_fakes.h"
#include "controller/reconcilers/testing_groups.h"

namespace draco::reconcilers {
namespace {

using testing::FakeEvents;
using testing::FakeQueue;
using testing::FakeWriter;

class GroupSyncTest : public ::testing::Test {
 protected:
  void SetUp() override { testing::AddGpuClassAndTemplate(cache, 2); }
  void AddNodes(int nodes, int per_node, int nodes_per_clique) {
    testing::AddCliqueNodes(cache, nodes, per_node, nodes_per_clique);
  }
  void TearDown() override {
    if (!HasFailure()) return;
    for (const auto& e : events.events) {
      std::cerr << "event " << e.target.name << " " << e.reason << ": " << e.message << "\n";
    }
  }
  static ControllerOptions Options() {
    ControllerOptions o;
    o.observe_timeout = Clock::Duration::zero();
    o.group_reserve_after = std::chrono::seconds(60);
    o.group_reserve_max = std::chrono::seconds(300);
    return o;
  }
  static api::Pod Member(const std::string& name, const std::string& group, int min,
                         const std::string& match = "") {
    return testing::GroupMember(name, group, min, match);
  }
  void AddPod(const api::Pod& p) {
    writer.pods[FakeWriter::K(p.metadata.namespace_, p.metadata.name)] = p;
    cache.UpsertPod(std::make_shared<const api::Pod>(p));
  }
  // Plays the informer for claims and pods.
  void Sync() { testing::PlayInformer(writer, cache); }
  // Syncs every pod of the writer until nothing changes (at most `rounds` passes).
  void Settle(int rounds = 4) {
    for (int r = 0; r < rounds; ++r) {
      std::vector<std::string> names;
      for (const auto& [k, p] : writer.pods) names.push_back(p.metadata.name);
      for (const auto& n : names) {
        auto res = ctrl.SyncPod("ns", n);
        EXPECT_TRUE(res.ok()) << n << ": " << res.status().ToString();
        Sync();
      }
    }
  }
  // The key of the claim generated for `pod` ("ns/<name>").
  std::string ClaimOf(const std::string& pod) {
    for (const auto& [k, c] : writer.claims) {
      for (const auto& o : c.metadata.owner_references) {
        if (o.uid == "uid-" + pod) return k;
      }
    }
    return "";
  }
  void Finish(const std::string& pod) {
    std::string claim = ClaimOf(pod);
    writer.pods.erase(FakeWriter::K("ns", pod));
    cache.DeletePod("ns", pod);
    cache.DeleteClaim("ns", writer.claims.at(claim).metadata.name);
    writer.claims.erase(claim);
  }
  bool Gated(const std::string& pod) {
    const api::Pod& p = writer.pods.at(FakeWriter::K("ns", pod));
    return !p.spec.scheduling_gates.empty();
  }
  // Allocated claims of the writer, and the cliques of their devices.
  size_t Allocated(std::set<std::string>* cliques = nullptr,
                   std::set<std::string>* nodes = nullptr) {
    size_t n = 0;
    for (const auto& [k, c] : writer.claims) {
      if (!c.status.allocation) continue;
      ++n;
      for (const auto& d : c.status.allocation->devices.results) {
        int node = std::stoi(d.pool.substr(1));
        if (cliques) cliques->insert("c" + std::to_string(node / clique_size));
        if (nodes) nodes->insert(d.pool);
      }
    }
    return n;
  }
  bool HasEvent(const std::string& pod, const std::string& reason, const std::string& part = "") {
    for (const auto& e : events.events) {
      if (e.target.name == pod && e.reason == reason && e.message.find(part) != std::string::npos) {
        return true;
      }
    }
    return false;
  }

  int clique_size = 1;
  ClusterCache cache;
  FakeWriter writer;
  SnapshotAllocator allocator{cache, [] {
                                alloc::Allocator::Config c;
                                c.selectors = alloc::NewCelSelectorCompiler();
                                return c;
                              }()};
  FakeEvents events;
  FakeQueue queue;
  FakeClock clock;
  Controller ctrl{cache, writer, allocator, events, queue, clock, nullptr, Options()};
};

TEST_F(GroupSyncTest, WaitsForTheMinimumThenPlacesAndReleasesAllTogether) {
  AddNodes(2, 4, 1);  // 8 devices; 4 members x 2
  for (int i = 0; i < 3; ++i) AddPod(Member("w" + std::to_string(i), "train", 4));
  Settle();
  EXPECT_EQ(Allocated(), 0u);  // 3 of 4: nothing is allocated
  EXPECT_TRUE(Gated("w0") && Gated("w1") && Gated("w2"));
  EXPECT_TRUE(HasEvent("w0", "WaitingForGroupMembers", "3 of 4 member(s) exist"));
  AddPod(Member("w3", "train", 4));
  Settle();
  EXPECT_EQ(Allocated(), 4u);
  for (int i = 0; i < 4; ++i) EXPECT_FALSE(Gated("w" + std::to_string(i))) << i;
}

TEST_F(GroupSyncTest, AGroupPacksIntoTheFewestNodes) {
  AddNodes(4, 4, 1);  // 16 devices on 4 nodes; 4 members x 2 fill 2 nodes
  for (int i = 0; i < 4; ++i) AddPod(Member("w" + std::to_string(i), "train", 4));
  Settle();
  std::set<std::string> nodes;
  ASSERT_EQ(Allocated(nullptr, &nodes), 4u);
  EXPECT_EQ(nodes.size(), 2u);
  // Single pods rotate their start node instead (upstream's spreading of ties).
  for (int i = 0; i < 2; ++i) AddPod(Member("s" + std::to_string(i), "", 0));
  Settle();
  std::set<std::string> all;
  Allocated(nullptr, &all);
  EXPECT_GE(all.size(), 3u);
}

TEST_F(GroupSyncTest, AGroupThatDoesNotFitHoldsNothing) {
  AddNodes(3, 2, 1);  // 3 nodes x 2 devices: 3 members of 2 fit, 4 do not
  for (int i = 0; i < 4; ++i) AddPod(Member("w" + std::to_string(i), "train", 4));
  Settle();
  EXPECT_EQ(Allocated(), 0u);
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(Gated("w" + std::to_string(i)));
  EXPECT_TRUE(HasEvent("w0", "FailedAllocation",
                       "group train needs 4 member(s) placed at once: 3 placed, then member ns/w3 "
                       "fits nowhere"));
  // A single pod still gets devices: nothing was held by the group.
  AddPod(Member("solo", "", 0));
  Settle();
  EXPECT_EQ(Allocated(), 1u);
  EXPECT_FALSE(Gated("solo"));
}

TEST_F(GroupSyncTest, TwoCompetingGroupsOneGetsEverythingTheOtherWaitsItsTurn) {
  AddNodes(2, 4, 1);  // 8 devices: one group of 4 x 2 at a time
  for (int i = 0; i < 4; ++i) AddPod(Member("a" + std::to_string(i), "a", 4));
  for (int i = 0; i < 4; ++i) AddPod(Member("b" + std::to_string(i), "b", 4));
  Settle();
  EXPECT_EQ(Allocated(), 4u);
  int a_free = 0, b_free = 0;
  for (int i = 0; i < 4; ++i) {
    a_free += !Gated("a" + std::to_string(i));
    b_free += !Gated("b" + std::to_string(i));
  }
  EXPECT_TRUE((a_free == 4 && b_free == 0) || (a_free == 0 && b_free == 4)) << a_free << b_free;
  // The winner finishes: its pods are deleted, their claims deallocated; the other gets its turn.
  const char* winner = a_free == 4 ? "a" : "b";
  for (int i = 0; i < 4; ++i) {
    std::string name = winner + std::to_string(i);
    writer.pods.erase(FakeWriter::K("ns", name));
    cache.DeletePod("ns", name);
  }
  for (auto it = writer.claims.begin(); it != writer.claims.end();) {
    if (it->second.status.allocation) {
      cache.DeleteClaim("ns", it->second.metadata.name);
      it = writer.claims.erase(it);
    } else {
      ++it;
    }
  }
  ctrl.OnAllocationInputsChanged();
  Settle();
  EXPECT_EQ(Allocated(), 4u);
  for (const auto& [k, p] : writer.pods) EXPECT_TRUE(p.spec.scheduling_gates.empty()) << k;
}

TEST_F(GroupSyncTest, MatchAttributeKeepsTheGroupInOneCliqueAndFindsTheOneThatFits) {
  clique_size = 2;
  AddNodes(6, 2, 2);  // cliques c0 (n0,n1), c1 (n2,n3), c2 (n4,n5): 4 devices each
  // Fill c0 and c2 partly so that only c1 holds a group of 2 x 2.
  AddPod(Member("filler0", "", 0));
  AddPod(Member("filler1", "", 0));
  Settle();
  std::set<std::string> used;
  ASSERT_EQ(Allocated(&used), 2u);
  for (int i = 0; i < 2; ++i) AddPod(Member("w" + std::to_string(i), "g", 2, "drv/clique"));
  Settle();
  std::set<std::string> all;
  ASSERT_EQ(Allocated(&all), 4u);
  std::set<std::string> group_cliques;
  for (const auto& [k, c] : writer.claims) {
    if (!c.status.allocation || c.metadata.owner_references[0].uid.rfind("uid-w", 0) != 0) continue;
    for (const auto& d : c.status.allocation->devices.results) {
      group_cliques.insert("c" + std::to_string(std::stoi(d.pool.substr(1)) / 2));
    }
  }
  EXPECT_EQ(group_cliques.size(), 1u);
  EXPECT_FALSE(Gated("w0") || Gated("w1"));
  // A late member beyond the minimum must join the group's clique, which is full now: it waits,
  // although the other cliques have free devices.
  AddPod(Member("w2", "g", 2, "drv/clique"));
  Settle();
  EXPECT_TRUE(Gated("w2"));
  EXPECT_EQ(Allocated(), 4u);
}

TEST_F(GroupSyncTest, NoCliqueHoldsTheGroupIsExplained) {
  clique_size = 1;
  AddNodes(3, 2, 1);  // three cliques of 2 devices; a group of 2 x 2 needs 4 in one
  for (int i = 0; i < 2; ++i) AddPod(Member("w" + std::to_string(i), "g", 2, "drv/clique"));
  Settle();
  EXPECT_EQ(Allocated(), 0u);
  EXPECT_TRUE(HasEvent("w0", "FailedAllocation", "with one drv/clique (3 value(s) tried"));
}

TEST_F(GroupSyncTest, AWriteFailureRollsBackTheMembersAlreadyWritten) {
  AddNodes(2, 4, 1);
  for (int i = 0; i < 3; ++i) AddPod(Member("w" + std::to_string(i), "train", 3));
  // w0 and w1 create their claims and wait for w2's; w2's sync places the group. Its second
  // allocation write fails.
  for (const char* p : {"w0", "w1"}) {
    ASSERT_TRUE(ctrl.SyncPod("ns", p).ok());
    Sync();
  }
  int status_writes = 0;
  std::function<void()> count;
  count = [&] {
    if (++status_writes == 2) writer.fail_next.insert("status");
    writer.interleave_before["status"] = count;
  };
  writer.interleave_before["status"] = count;
  auto r = ctrl.SyncPod("ns", "w2");
  writer.interleave_before.clear();
  EXPECT_GE(status_writes, 3);  // written, failed, taken back
  EXPECT_FALSE(r.ok());
  Sync();
  EXPECT_EQ(Allocated(), 0u);  // the first member's write was taken back
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(Gated("w" + std::to_string(i)));
  Settle();
  EXPECT_EQ(Allocated(), 3u);
}

TEST_F(GroupSyncTest, AHalfWrittenGroupIsCompletedOrRolledBack) {
  AddNodes(2, 4, 1);
  for (int i = 0; i < 4; ++i) AddPod(Member("w" + std::to_string(i), "train", 4));
  Settle(1);
  ASSERT_EQ(Allocated(), 4u);
  // As if draco had stopped after two of four writes: a fresh controller sees two members with
  // allocated claims, all gated. The rest fits: completed.
  for (auto& [k, p] : writer.pods) {
    p.spec.scheduling_gates.push_back({std::string(kSchedulingGate), {}});
  }
  int n = 0;
  for (auto& [k, c] : writer.claims) {
    if (n++ >= 2) {
      c.status.allocation.reset();
      c.status.reserved_for.clear();
    }
  }
  Sync();
  Controller fresh{cache, writer, allocator, events, queue, clock, nullptr, Options()};
  ASSERT_TRUE(fresh.SyncPod("ns", "w0").ok());
  Sync();
  EXPECT_EQ(Allocated(), 4u);
  for (int i = 0; i < 4; ++i) EXPECT_FALSE(Gated("w" + std::to_string(i)));

  // Again half written, but now a node is gone: the rest cannot fit, so the half goes too.
  for (auto& [k, p] : writer.pods) {
    p.spec.scheduling_gates.push_back({std::string(kSchedulingGate), {}});
  }
  n = 0;
  for (auto& [k, c] : writer.claims) {
    if (n++ >= 2) {
      c.status.allocation.reset();
      c.status.reserved_for.clear();
    }
  }
  Sync();
  cache.DeleteSlice("n1-drv");
  Controller fresh2{cache, writer, allocator, events, queue, clock, nullptr, Options()};
  ASSERT_TRUE(fresh2.SyncPod("ns", "w0").ok());
  Sync();
  EXPECT_EQ(Allocated(), 0u);
  EXPECT_TRUE(HasEvent("w0", "DeallocatedIncompleteGroup") ||
              HasEvent("w1", "DeallocatedIncompleteGroup") ||
              HasEvent("w2", "DeallocatedIncompleteGroup") ||
              HasEvent("w3", "DeallocatedIncompleteGroup"));
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(Gated("w" + std::to_string(i)));
}

TEST_F(GroupSyncTest, AWaitingGroupReservesCapacityAfterTheThreshold) {
  AddNodes(1, 4, 1);  // 4 devices
  AddPod(Member("solo0", "", 0));
  Settle();
  ASSERT_EQ(Allocated(), 1u);  // 2 left: the group of 2 x 2 does not fit
  for (int i = 0; i < 2; ++i) AddPod(Member("w" + std::to_string(i), "g", 2));
  Settle();
  EXPECT_EQ(Allocated(), 1u);
  // Before the threshold a single pod still gets the free devices.
  AddPod(Member("solo1", "", 0));
  Settle();
  EXPECT_EQ(Allocated(), 2u);
  // solo1 finishes; the group failed again more than 60 s after its first failure: it reserves.
  clock.Step(std::chrono::seconds(61));
  Finish("solo1");
  ctrl.OnAllocationInputsChanged();
  Settle();  // the group fails again, now after the threshold: it reserves
  EXPECT_TRUE(Gated("w0"));
  AddPod(Member("solo2", "", 0));
  Settle();
  EXPECT_TRUE(Gated("solo2"));  // held for the group
  EXPECT_TRUE(HasEvent("solo2", "WaitingForGroup", "group g"));
  // solo0 finishes: the group fits, is placed, the reservation ends, solo2 waits for devices.
  Finish("solo0");
  ctrl.OnAllocationInputsChanged();
  Settle();
  EXPECT_FALSE(Gated("w0") || Gated("w1"));
  EXPECT_TRUE(Gated("solo2"));
  EXPECT_TRUE(HasEvent("solo2", "FailedAllocation"));
}

TEST_F(GroupSyncTest, AReservationEndsAfterItsLimit) {
  AddNodes(1, 2, 1);
  AddPod(Member("solo0", "", 0));
  Settle();
  for (int i = 0; i < 2; ++i) AddPod(Member("w" + std::to_string(i), "g", 2));
  Settle();
  clock.Step(std::chrono::seconds(61));
  ctrl.OnAllocationInputsChanged();
  Settle();  // fails again after the threshold: reserves
  AddPod(Member("solo1", "", 0));
  Settle();
  EXPECT_TRUE(HasEvent("solo1", "WaitingForGroup"));
  clock.Step(std::chrono::seconds(301));
  events.events.clear();
  ctrl.OnAllocationInputsChanged();
  Finish("solo0");
  ASSERT_TRUE(ctrl.SyncPod("ns", "solo1").ok());
  Sync();
  EXPECT_FALSE(Gated("solo1"));  // the reservation expired: solo1 is not held
}

}  // namespace
}  // namespace draco::reconcilers
