#include <regex>

#include "controller/feasibility/test_util.h"

namespace draco::feasibility {
namespace {

using testing::MakeNode;
using testing::MakePod;
using testing::Results;

Snapshot FourNodes() {
  Snapshot s;
  for (int i = 1; i <= 4; ++i) {
    std::string zone = i <= 2 ? "z1" : "z2";
    s.nodes.push_back(MakeNode("node-" + std::to_string(i),
                               R"({"kubernetes.io/hostname":"node-)" + std::to_string(i) +
                                   R"(","topology.kubernetes.io/zone":")" + zone + R"("})"));
  }
  return s;
}

TEST(InterPodAffinityTest, AntiAffinityAgainstOccupant) {
  Snapshot s = FourNodes();
  s.pods = {
      {MakePod("occupant", R"({"app":"occupant"})", R"({"containers":[{"name":"c"}]})"), "node-1"}};
  auto pod = MakePod("gpu", "{}", R"({"affinity":{"podAntiAffinity":{
      "requiredDuringSchedulingIgnoredDuringExecution":[{"labelSelector":{"matchLabels":{
      "app":"occupant"}},"topologyKey":"kubernetes.io/hostname"}]}},"containers":[{"name":"c"}]})");
  EXPECT_EQ(Results(*pod, s), "InterPodAffinity ok ok ok");
  EXPECT_EQ(Evaluate(*pod, s)[0].reason, "node(s) didn't match pod anti-affinity rules");
  EXPECT_EQ(Evaluate(*pod, s)[0].detail, "pod anti-affinity with ns/occupant");
}

TEST(InterPodAffinityTest, ExistingPodsAntiAffinityAndOtherNamespaces) {
  Snapshot s = FourNodes();
  s.pods = {{MakePod("guard", "{}", R"({"affinity":{"podAntiAffinity":{
      "requiredDuringSchedulingIgnoredDuringExecution":[{"labelSelector":{"matchLabels":{
      "app":"web"}},"topologyKey":"topology.kubernetes.io/zone"}]}},"containers":[{"name":"c"}]})"),
             "node-3"}};
  auto web = MakePod("w", R"({"app":"web"})", R"({"containers":[{"name":"c"}]})");
  EXPECT_EQ(Results(*web, s), "ok ok InterPodAffinity InterPodAffinity");
  auto other = testing::Obj<api::Pod>(R"({"metadata":{"name":"w","namespace":"other","labels":{
      "app":"web"}},"spec":{"containers":[{"name":"c"}]}})");
  EXPECT_EQ(Results(*other, s), "ok ok ok ok");
}

TEST(InterPodAffinityTest, AffinityFirstPodOfASeriesMayGoAnywhereWithTheKey) {
  Snapshot s = FourNodes();
  auto pod = MakePod("p", R"({"app":"db"})", R"({"affinity":{"podAffinity":{
      "requiredDuringSchedulingIgnoredDuringExecution":[{"labelSelector":{"matchLabels":{
      "app":"db"}},"topologyKey":"topology.kubernetes.io/zone"}]}},"containers":[{"name":"c"}]})");
  EXPECT_EQ(Results(*pod, s), "ok ok ok ok");
  s.pods = {{MakePod("d", R"({"app":"db"})", R"({"containers":[{"name":"c"}]})"), "node-4"}};
  EXPECT_EQ(Results(*pod, s), "InterPodAffinity InterPodAffinity ok ok");
}

TEST(InterPodAffinityTest, OneExistingPodMustMatchEveryTerm) {
  Snapshot s = FourNodes();
  s.pods = {{MakePod("db", R"({"app":"db"})", R"({"containers":[{"name":"c"}]})"), "node-1"},
            {MakePod("batch", R"({"app":"batch"})", R"({"containers":[{"name":"c"}]})"), "node-2"}};
  auto pod = MakePod("p", R"({"app":"web"})", R"({"affinity":{"podAffinity":{
      "requiredDuringSchedulingIgnoredDuringExecution":[
      {"labelSelector":{"matchLabels":{"app":"db"}},"topologyKey":"topology.kubernetes.io/zone"},
      {"labelSelector":{"matchLabels":{"app":"batch"}},"topologyKey":"topology.kubernetes.io/zone"}
      ]}},"containers":[{"name":"c"}]})");
  EXPECT_EQ(Results(*pod, s),
            "InterPodAffinity InterPodAffinity InterPodAffinity InterPodAffinity");
}

TEST(PodTopologySpreadTest, SkewAcrossZonesWithMinDomains) {
  Snapshot s = FourNodes();
  s.pods = {{MakePod("a", R"({"app":"x"})", R"({"containers":[{"name":"c"}]})"), "node-1"}};
  std::string spread = R"({"topologySpreadConstraints":[{"maxSkew":1,
      "topologyKey":"topology.kubernetes.io/zone","whenUnsatisfiable":"DoNotSchedule",
      "labelSelector":{"matchLabels":{"app":"x"}}MIN}],"containers":[{"name":"c"}]})";
  auto pod = MakePod("p", R"({"app":"x"})", std::regex_replace(spread, std::regex("MIN"), ""));
  EXPECT_EQ(Results(*pod, s), "PodTopologySpread PodTopologySpread ok ok");
  // Three domains wanted, two exist: the global minimum is 0, so z1 (count 1) + 1 > 1.
  auto min3 = MakePod("p", R"({"app":"x"})",
                      std::regex_replace(spread, std::regex("MIN"), R"(,"minDomains":3)"));
  EXPECT_EQ(Results(*min3, s), "PodTopologySpread PodTopologySpread ok ok");
  s.pods.push_back({MakePod("b", R"({"app":"x"})", R"({"containers":[{"name":"c"}]})"), "node-3"});
  EXPECT_EQ(Results(*pod, s), "ok ok ok ok");
  EXPECT_EQ(Results(*min3, s),
            "PodTopologySpread PodTopologySpread PodTopologySpread "
            "PodTopologySpread");
}

TEST(PodTopologySpreadTest, MissingKeyAndNodeAffinityPolicy) {
  Snapshot s = FourNodes();
  s.nodes.push_back(MakeNode("bare"));
  s.pods = {{MakePod("a", R"({"app":"x"})", R"({"containers":[{"name":"c"}]})"), "node-3"}};
  auto pod = MakePod("p", R"({"app":"x"})", R"({"nodeSelector":{
      "topology.kubernetes.io/zone":"z2"},"topologySpreadConstraints":[{"maxSkew":1,
      "topologyKey":"topology.kubernetes.io/zone","whenUnsatisfiable":"DoNotSchedule",
      "labelSelector":{"matchLabels":{"app":"x"}}}],"containers":[{"name":"c"}]})");
  // Honor: only z2 counts as a domain, so its minimum is 1 and node-3/4 fit (1+1-1 <= 1).
  EXPECT_EQ(Results(*pod, s), "NodeAffinity NodeAffinity ok ok NodeAffinity");
}

TEST(ValidatePodTest, NamesTheField) {
  auto bad = MakePod("p", "{}", R"({"topologySpreadConstraints":[{"maxSkew":1,
      "topologyKey":"k","whenUnsatisfiable":"DoNotSchedule","labelSelector":{"matchExpressions":[
      {"key":"app","operator":"Within","values":["a"]}]}}],"containers":[{"name":"c"}]})");
  Status st = ValidatePod(*bad);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("spec.topologySpreadConstraints[0].labelSelector"), std::string::npos)
      << st.message();
  Snapshot s = FourNodes();
  EXPECT_EQ(Results(*bad, s), "error error error error");
  EXPECT_FALSE(CoversPod(*bad));
}

}  // namespace
}  // namespace draco::feasibility
