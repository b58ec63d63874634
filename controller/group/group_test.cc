#include "controller/group/group.h"

#include <set>

#include <gtest/gtest.h>

namespace draco::group {
namespace {

api::Pod Pod(const std::string& name, api::StringMap labels, api::StringMap annotations = {}) {
  api::Pod p;
  p.metadata.name = name;
  p.metadata.namespace_ = "ml";
  p.metadata.labels = std::move(labels);
  p.metadata.annotations = std::move(annotations);
  return p;
}

TEST(GroupOfTest, NoGroup) {
  EXPECT_FALSE(GroupOf(Pod("p", {{"app", "x"}}), nullptr));
  EXPECT_EQ(GroupKeyOf(Pod("p", {})), "");
}

TEST(GroupOfTest, DracoLabelWithMinimumAndMatchAttribute) {
  auto g = GroupOf(Pod("p", {{"draco.dev/group", "train"}, {"draco.dev/group-min-members", "4"}},
                       {{"draco.dev/group-match-attribute", "gpu.example.com/clique"}}),
                   nullptr);
  ASSERT_TRUE(g);
  EXPECT_EQ(g->key, "ml/group/train");
  EXPECT_EQ(g->display, "group train");
  EXPECT_EQ(g->min_members, 4);
  EXPECT_EQ(g->match_attribute, "gpu.example.com/clique");
  EXPECT_EQ(GroupKeyOf(Pod("q", {{"draco.dev/group", "train"}})), g->key);
}

TEST(GroupOfTest, MalformedMinimumIsUnknown) {
  auto g = GroupOf(Pod("p", {{"draco.dev/group", "t"}}, {{"draco.dev/group-min-members", "x"}}),
                   nullptr);
  ASSERT_TRUE(g);
  EXPECT_EQ(g->min_members, 0);
}

TEST(GroupOfTest, LeaderWorkerSetJobSetAndKueue) {
  auto lws = GroupOf(Pod("p",
                         {{"leaderworkerset.sigs.k8s.io/group-key", "abc"},
                          {"leaderworkerset.sigs.k8s.io/name", "infer"}},
                         {{"leaderworkerset.sigs.k8s.io/size", "3"}}),
                     nullptr);
  ASSERT_TRUE(lws);
  EXPECT_EQ(lws->source, Source::kLeaderWorkerSet);
  EXPECT_EQ(lws->display, "LeaderWorkerSet infer");
  auto lws1 = GroupOf(Pod("p", {{"leaderworkerset.sigs.k8s.io/group-key", "abc"},
                                {"leaderworkerset.sigs.k8s.io/name", "infer"},
                                {"leaderworkerset.sigs.k8s.io/group-index", "1"}}),
                      nullptr);
  EXPECT_EQ(lws1->display, "LeaderWorkerSet infer group 1");
  EXPECT_EQ(lws->min_members, 3);
  auto js = GroupOf(Pod("p", {{"jobset.sigs.k8s.io/jobset-name", "pt"}},
                        {{"jobset.sigs.k8s.io/global-replicas", "2"}}),
                    nullptr);
  ASSERT_TRUE(js);
  EXPECT_EQ(js->display, "JobSet pt");
  EXPECT_EQ(js->min_members, 2);
  auto js8 = GroupOf(
      Pod("p", {{"jobset.sigs.k8s.io/jobset-name", "pt"}},
          {{"jobset.sigs.k8s.io/global-replicas", "2"}, {"draco.dev/group-min-members", "8"}}),
      nullptr);
  EXPECT_EQ(js8->min_members, 8);  // the draco annotation overrides
  auto kq = GroupOf(Pod("p", {{"kueue.x-k8s.io/pod-group-name", "k"}},
                        {{"kueue.x-k8s.io/pod-group-total-count", "5"}}),
                    nullptr);
  ASSERT_TRUE(kq);
  EXPECT_EQ(kq->min_members, 5);
}

TEST(GroupOfTest, PodGroupGangAndBasic) {
  api::Pod p = Pod("p", {});
  p.spec.scheduling_group = api::PodSchedulingGroup{"pg", {}};
  auto unknown = GroupOf(p, nullptr);
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->min_members, 0);  // not seen yet: wait
  api::PodGroup pg;
  pg.metadata.name = "pg";
  pg.metadata.annotations["draco.dev/group-match-attribute"] = "gpu.example.com/rack";
  pg.spec.scheduling_policy = api::PodGroupSchedulingPolicy{api::GangSchedulingPolicy{6, {}}, {}};
  auto g = GroupOf(p, &pg);
  ASSERT_TRUE(g);
  EXPECT_EQ(g->key, "ml/PodGroup/pg");
  EXPECT_EQ(g->min_members, 6);
  EXPECT_EQ(g->match_attribute, "gpu.example.com/rack");
  pg.spec.scheduling_policy = api::PodGroupSchedulingPolicy{};
  EXPECT_FALSE(GroupOf(p, &pg));  // basic policy: not a gang
}

SlicePtr Slice(const std::string& pool,
               std::vector<std::pair<std::string, std::string>> devices_and_clique) {
  auto s = std::make_shared<api::ResourceSlice>();
  s->spec.driver = "gpu.example.com";
  s->spec.pool.name = pool;
  for (const auto& [name, clique] : devices_and_clique) {
    api::Device d;
    d.name = name;
    d.attributes["clique"].string_value = clique;  // unqualified: the driver is the domain
    s->spec.devices.push_back(std::move(d));
  }
  return s;
}

TEST(DomainsTest, DistinctValuesFewestDevicesFirst) {
  std::vector<SlicePtr> slices = {
      Slice("n1", {{"g0", "a"}, {"g1", "a"}, {"g2", "b"}}),
      Slice("n2", {{"g0", "a"}, {"g1", "c\"x"}}),
  };
  auto d = DomainsOf(slices, "gpu.example.com/clique");
  ASSERT_TRUE(d.ok());
  ASSERT_EQ(d->size(), 3u);
  EXPECT_EQ((*d)[0].value, "b");
  EXPECT_EQ((*d)[1].value, "c\"x");
  EXPECT_EQ((*d)[2].value, "a");
  EXPECT_EQ((*d)[2].devices, 3u);
  EXPECT_EQ((*d)[0].selector,
            "\"clique\" in device.attributes[\"gpu.example.com\"] && "
            "device.attributes[\"gpu.example.com\"][\"clique\"] == \"b\"");
  EXPECT_NE((*d)[1].selector.find("== \"c\\\"x\""), std::string::npos) << (*d)[1].selector;
  EXPECT_TRUE(DomainsOf(slices, "other.example.com/clique")->empty());
  EXPECT_FALSE(DomainsOf(slices, "clique").ok());
  EXPECT_EQ(DeviceDomain(slices, "gpu.example.com/clique", "gpu.example.com", "n2", "g1"), "c\"x");
  EXPECT_FALSE(DeviceDomain(slices, "gpu.example.com/clique", "gpu.example.com", "n3", "g1"));
}

TEST(ConstrainedTest, AddsTheSelectorToEveryRequestAndSubrequest) {
  api::ResourceClaim c;
  api::DeviceRequest r1;
  r1.name = "a";
  r1.exactly = api::ExactDeviceRequest{};
  api::DeviceRequest r2;
  r2.name = "b";
  r2.first_available.resize(2);
  c.spec.devices.requests = {r1, r2};
  api::ResourceClaim k = Constrained(c, "true");
  ASSERT_EQ(k.spec.devices.requests[0].exactly->selectors.size(), 1u);
  EXPECT_EQ(k.spec.devices.requests[0].exactly->selectors[0].cel->expression, "true");
  EXPECT_EQ(k.spec.devices.requests[1].first_available[1].selectors.size(), 1u);
  EXPECT_TRUE(c.spec.devices.requests[0].exactly->selectors.empty());  // a copy
}

// A fake world: member i fits in domain d when capacity[d] still has room; undo frees it.
struct World {
  std::vector<int> capacity;
  std::vector<int> used;
  std::vector<std::pair<size_t, size_t>> log;  // (member, domain) placed
  std::set<size_t> never;                      // members that fit nowhere
  MemberOutcome Try(size_t i, const Domain* d, const std::string& prefer) {
    size_t di = d ? static_cast<size_t>(std::stoi(d->value)) : 0;
    if (never.count(i) || used[di] >= capacity[di]) return {false, "", "full"};
    ++used[di];
    log.push_back({i, di});
    return {true, "node-" + std::to_string(di) + "/" + prefer, ""};
  }
  void Undo() {
    for (auto& u : used) u = 0;
    log.clear();
  }
};

std::vector<Domain> Domains(size_t n) {
  std::vector<Domain> out;
  for (size_t i = 0; i < n; ++i) out.push_back({std::to_string(i), "sel", 1});
  return out;
}

TEST(PlanGroupTest, UnconstrainedAllOrNothing) {
  World w{{3}, {0}, {}, {}};
  auto try_member = [&](size_t i, const Domain* d, const std::string& p) { return w.Try(i, d, p); };
  auto out = PlanGroup(4, 4, {}, false, try_member, [&] { w.Undo(); });
  EXPECT_FALSE(out.ok);
  EXPECT_EQ(out.failed_member, 3u);
  EXPECT_EQ(out.placed_before_failure, 3u);
  EXPECT_EQ(out.message, "full");
  EXPECT_EQ(w.used[0], 0);  // undone: nothing held
  World w2{{4}, {0}, {}, {}};
  auto try2 = [&](size_t i, const Domain* d, const std::string& p) { return w2.Try(i, d, p); };
  auto ok = PlanGroup(4, 4, {}, false, try2, [&] { w2.Undo(); });
  EXPECT_TRUE(ok.ok);
  EXPECT_EQ(ok.placed.size(), 4u);
  EXPECT_EQ(w2.used[0], 4);  // kept
}

TEST(PlanGroupTest, TriesDomainsUntilOneHoldsTheGroup) {
  World w{{2, 3, 4}, {0, 0, 0}, {}, {}};
  auto try_member = [&](size_t i, const Domain* d, const std::string& p) { return w.Try(i, d, p); };
  auto out = PlanGroup(4, 4, Domains(3), true, try_member, [&] { w.Undo(); });
  ASSERT_TRUE(out.ok);
  EXPECT_EQ(out.domain, 2u);
  EXPECT_EQ(out.attempts, 3u);
  for (const auto& [m, d] : w.log) EXPECT_EQ(d, 2u);  // every member in the same domain
}

TEST(PlanGroupTest, ReportsTheClosestAttempt) {
  World w{{2, 3, 1}, {0, 0, 0}, {}, {}};
  auto try_member = [&](size_t i, const Domain* d, const std::string& p) { return w.Try(i, d, p); };
  auto doms = Domains(3);
  auto out = PlanGroup(4, 4, doms, true, try_member, [&] { w.Undo(); });
  EXPECT_FALSE(out.ok);
  EXPECT_EQ(out.failed_domain, 1u);
  EXPECT_EQ(out.placed_before_failure, 3u);
  GroupRef g;
  g.display = "group t";
  g.min_members = 4;
  g.match_attribute = "gpu.example.com/clique";
  EXPECT_EQ(DescribeFailure(g, out, doms, "ml/w-3"),
            "group t needs 4 member(s) placed at once with one gpu.example.com/clique (3 value(s) "
            "tried; closest: gpu.example.com/clique=1): 3 placed, then member ml/w-3 fits "
            "nowhere: full");
}

TEST(PlanGroupTest, MembersBeyondTheMinimumMayFail) {
  World w{{3}, {0}, {}, {1}};
  auto try_member = [&](size_t i, const Domain* d, const std::string& p) { return w.Try(i, d, p); };
  auto out = PlanGroup(4, 3, {}, false, try_member, [&] { w.Undo(); });
  ASSERT_TRUE(out.ok);
  EXPECT_EQ(out.placed, (std::vector<size_t>{0, 2, 3}));
}

TEST(PlanGroupTest, PrefersThePreviousMembersNode) {
  std::vector<std::string> prefers;
  auto try_member = [&](size_t i, const Domain*, const std::string& p) {
    prefers.push_back(p);
    return MemberOutcome{true, "n" + std::to_string(i), ""};
  };
  ASSERT_TRUE(PlanGroup(3, 3, {}, false, try_member, [] {}).ok);
  EXPECT_EQ(prefers, (std::vector<std::string>{"", "n0", "n1"}));
}

TEST(PlanGroupTest, ConstrainedWithoutDomainsFails) {
  int calls = 0;
  auto try_member = [&](size_t, const Domain*, const std::string&) {
    ++calls;
    return MemberOutcome{true, "n", ""};
  };
  auto out = PlanGroup(2, 2, {}, true, try_member, [] {});
  EXPECT_FALSE(out.ok);
  EXPECT_EQ(calls, 0);
}

}  // namespace
}  // namespace draco::group
