#include "controller/feasibility/test_util.h"

namespace draco::feasibility {
namespace {

using testing::MakeNode;
using testing::MakePod;

TEST(FeasibilityTest, FeasibleNodesKeepsOrderAndFilterAppendsTheNode) {
  Snapshot s;
  s.nodes = {MakeNode("a", "{}", R"({"unschedulable":true})"), MakeNode("b"), MakeNode("c")};
  auto pod = MakePod("p", "{}", R"({"containers":[{"name":"c"}]})");
  auto fit = FeasibleNodes(*pod, s);
  ASSERT_EQ(fit.size(), 2u);
  EXPECT_EQ(fit[0]->metadata.name, "b");
  EXPECT_EQ(fit[1]->metadata.name, "c");
  Verdict v = Filter(*pod, *MakeNode("d", "{}", R"({"unschedulable":true})"), s);
  EXPECT_FALSE(v.passed);
  EXPECT_EQ(v.plugin, "NodeUnschedulable");
}

TEST(FeasibilityTest, CoversPodOnlyForTheDefaultScheduler) {
  auto pod = MakePod("p", "{}", R"({"containers":[{"name":"c"}]})");
  EXPECT_TRUE(CoversPod(*pod));
  auto other = MakePod("p", "{}", R"({"schedulerName":"volcano","containers":[{"name":"c"}]})");
  EXPECT_FALSE(CoversPod(*other));
  auto rbd = MakePod("p", "{}", R"({"volumes":[{"name":"v","rbd":{"monitors":["m"],
      "image":"i"}}],"containers":[{"name":"c"}]})");
  EXPECT_FALSE(CoversPod(*rbd));
}

}  // namespace
}  // namespace draco::feasibility
