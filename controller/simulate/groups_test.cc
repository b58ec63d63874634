// `draco simulate` places all-or-nothing pod groups as the controller does (groups.h).
#include <functional>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "controller/simulate/simulate.h"

namespace draco::simulate {
namespace {

constexpr const char* kClassAndTemplates = R"(apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu}
spec: {selectors: [{cel: {expression: 'device.driver == "gpu.example.com"'}}]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu}
spec: {spec: {devices: {requests: [{name: g, exactly: {deviceClassName: gpu}}]}}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: two-gpus}
spec: {spec: {devices: {requests: [{name: g, exactly: {deviceClassName: gpu, count: 2}}]}}}
)";

// `nodes` nodes n0, n1, ... with `gpus` devices each; `clique(node)` names the node's
// gpu.example.com/clique ("" for none).
std::string Cluster(int nodes, int gpus, const std::function<std::string(int)>& clique = {}) {
  std::string out;
  for (int n = 0; n < nodes; ++n) {
    std::string name = "n" + std::to_string(n);
    out += "---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: " + name +
           "}\nspec:\n  driver: gpu.example.com\n  nodeName: " + name + "\n  pool: {name: " + name +
           ", generation: 1, resourceSliceCount: 1}\n  devices:\n";
    std::string attrs = clique ? "{clique: {string: " + clique(n) + "}}" : "{}";
    for (int g = 0; g < gpus; ++g) {
      out += "  - {name: gpu-" + std::to_string(g) + ", attributes: " + attrs + "}\n";
    }
  }
  return out;
}

// A JobSet of `jobs` Jobs x `pods` pods, each pod with the claim template `tmpl`.
std::string JobSet(const std::string& name, int jobs, int pods, const std::string& tmpl) {
  return "---\napiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {name: " + name +
         "}\nspec:\n  replicatedJobs:\n  - name: worker\n    replicas: " + std::to_string(jobs) +
         "\n    template:\n      spec:\n        parallelism: " + std::to_string(pods) +
         "\n        template:\n          spec:\n            restartPolicy: Never\n"
         "            containers: [{name: c, image: i}]\n"
         "            resourceClaims: [{name: gpu, resourceClaimTemplateName: " +
         tmpl + "}]\n";
}

// A pod with one claim from `tmpl`, in group `group` (draco.dev/group) of `min` members; with
// `match`, the members share one gpu.example.com/clique.
std::string Member(const std::string& name, const std::string& group, int min,
                   const std::string& tmpl, bool match = false) {
  return "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name +
         "\n  labels: {draco.dev/group: " + group + ", draco.dev/group-min-members: \"" +
         std::to_string(min) + "\"}\n" +
         (match ? "  annotations: {draco.dev/group-match-attribute: gpu.example.com/clique}\n"
                : "") +
         "spec:\n  containers: [{name: c, image: i}]\n"
         "  resourceClaims: [{name: gpu, resourceClaimTemplateName: " +
         tmpl + "}]\n";
}

std::string Pod(const std::string& name, const std::string& tmpl) {
  return "---\napiVersion: v1\nkind: Pod\nmetadata: {name: " + name +
         "}\nspec:\n  containers: [{name: c, image: i}]\n"
         "  resourceClaims: [{name: gpu, resourceClaimTemplateName: " +
         tmpl + "}]\n";
}

int Simulate(const std::string& manifests, std::string* out, bool json = false) {
  Options opts;
  opts.documents = {Document{"test", std::string(kClassAndTemplates) + manifests}};
  opts.json = json;
  std::ostringstream o, e;
  int rc = RunSimulate(opts, o, e);
  *out = o.str() + e.str();
  return rc;
}

size_t Count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

TEST(SimulateGroupsTest, JobSetThatFitsAsAWholeIsPlacedAtOnce) {
  std::string s;
  EXPECT_EQ(Simulate(Cluster(2, 4) + JobSet("pytorch", 2, 2, "two-gpus"), &s), 0) << s;
  EXPECT_NE(s.find("group JobSet pytorch: 4 member(s) placed at once\n"), std::string::npos) << s;
  // The group line comes before its pods.
  EXPECT_LT(s.find("group JobSet pytorch"), s.find("pod default/pytorch-worker-0-0-")) << s;
  EXPECT_EQ(Count(s, ": allocated on n"), 4u) << s;
  EXPECT_NE(s.find("4 allocated, 0 not allocated"), std::string::npos) << s;
}

TEST(SimulateGroupsTest, JobSetThatDoesNotFitGetsNothing) {
  // 3 nodes x 2 GPUs hold 3 of the 4 two-GPU pods: none is placed, and the pod after the
  // JobSet finds every device free again.
  std::string s;
  EXPECT_EQ(
      Simulate(Cluster(3, 2) + JobSet("pytorch", 2, 2, "two-gpus") + Pod("after", "two-gpus"), &s),
      1)
      << s;
  EXPECT_NE(s.find("group JobSet pytorch: NOT PLACED: JobSet pytorch needs 4 member(s) placed at "
                   "once: 3 placed, then member default/pytorch-worker-1-1-"),
            std::string::npos)
      << s;
  EXPECT_EQ(Count(s, "NOT ALLOCATED (cannot place the group: JobSet pytorch needs 4"), 4u) << s;
  EXPECT_NE(s.find("pod default/after: allocated on n0"), std::string::npos) << s;
  EXPECT_EQ(Count(s, " -> gpu.example.com/"), 2u) << s;  // the two devices of `after` only
  EXPECT_NE(s.find("1 allocated, 4 not allocated"), std::string::npos) << s;
}

TEST(SimulateGroupsTest, LeaderWorkerSetGroupsArePlacedWholeOrNotAtAll) {
  // Two groups of 3 one-GPU pods on one node with 4 GPUs: the first fits, the second does not
  // and leaves its GPU free.
  std::string lws = R"(---
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: serve}
spec:
  replicas: 2
  leaderWorkerTemplate:
    size: 3
    workerTemplate:
      spec:
        containers: [{name: c, image: i}]
        resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]
)";
  std::string s;
  EXPECT_EQ(Simulate(Cluster(1, 4) + lws, &s), 1) << s;
  EXPECT_EQ(Count(s, ": 3 member(s) placed at once\n"), 1u) << s;
  EXPECT_NE(s.find("pod default/serve-0: allocated on n0"), std::string::npos) << s;
  EXPECT_NE(s.find("pod default/serve-0-2: allocated on n0"), std::string::npos) << s;
  EXPECT_NE(s.find("group LeaderWorkerSet serve group 1: NOT PLACED"), std::string::npos) << s;
  EXPECT_NE(s.find("pod default/serve-1: NOT ALLOCATED (cannot place the group"), std::string::npos)
      << s;
  EXPECT_NE(s.find("needs 3 member(s) placed at once: 1 placed, then member default/serve-1-1"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("3 allocated, 3 not allocated"), std::string::npos) << s;
}

TEST(SimulateGroupsTest, MatchAttributePlacesTheGroupInTheCliqueItFits) {
  // Clique a (n0, 2 GPUs) is tried first (fewest devices) and is too small; clique b (n1, n2)
  // takes all three.
  auto clique = [](int n) { return std::string(n == 0 ? "a" : "b"); };
  std::string s;
  EXPECT_EQ(
      Simulate(Cluster(3, 2, clique) + Member("m1", "g1", 3, "one-gpu", true) +
                   Member("m2", "g1", 3, "one-gpu", true) + Member("m3", "g1", 3, "one-gpu", true),
               &s),
      0)
      << s;
  EXPECT_NE(s.find("group g1: 3 member(s) placed at once in gpu.example.com/clique=b\n"),
            std::string::npos)
      << s;
  EXPECT_EQ(s.find("gpu.example.com/n0/"), std::string::npos) << s;
  EXPECT_NE(s.find("pod default/m1: allocated on n1"), std::string::npos) << s;
  EXPECT_NE(s.find("pod default/m3: allocated on n2"), std::string::npos) << s;
  // Without a clique that fits, nothing is placed; the closest clique is named.
  EXPECT_EQ(
      Simulate(Cluster(2, 2, [](int n) { return std::string(n == 0 ? "a" : "b"); }) +
                   Member("m1", "g1", 3, "one-gpu", true) + Member("m2", "g1", 3, "one-gpu", true) +
                   Member("m3", "g1", 3, "one-gpu", true),
               &s),
      1)
      << s;
  EXPECT_NE(s.find("with one gpu.example.com/clique (2 value(s) tried; closest: "
                   "gpu.example.com/clique=a): 2 placed, then member default/m3"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("0 allocated, 3 not allocated"), std::string::npos) << s;
}

TEST(SimulateGroupsTest, FirstGroupInInputOrderGetsEverythingTheSecondNothing) {
  // Pod by pod, a1, b1 and a2 would fit; as groups, g1 (first in input order) takes two nodes
  // and g2 gets nothing, although one node stays free.
  std::string s;
  EXPECT_EQ(Simulate(Cluster(3, 2) + Member("a1", "g1", 2, "two-gpus") +
                         Member("b1", "g2", 2, "two-gpus") + Member("a2", "g1", 2, "two-gpus") +
                         Member("b2", "g2", 2, "two-gpus"),
                     &s),
            1)
      << s;
  EXPECT_NE(s.find("group g1: 2 member(s) placed at once"), std::string::npos) << s;
  EXPECT_NE(s.find("pod default/a1: allocated on n0"), std::string::npos) << s;
  EXPECT_NE(s.find("pod default/a2: allocated on n1"), std::string::npos) << s;
  EXPECT_NE(s.find("group g2: NOT PLACED: group g2 needs 2 member(s) placed at once: 1 placed, "
                   "then member default/b2"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("pod default/b1: NOT ALLOCATED"), std::string::npos) << s;
  EXPECT_NE(s.find("2 allocated, 2 not allocated"), std::string::npos) << s;
}

TEST(SimulateGroupsTest, IncompleteGroupStaysPending) {
  std::string s;
  EXPECT_EQ(
      Simulate(Cluster(2, 4) + Member("a1", "g1", 3, "one-gpu") + Member("a2", "g1", 3, "one-gpu"),
               &s),
      1)
      << s;
  EXPECT_NE(s.find("group g1: NOT PLACED: group g1: 2 of 3 member(s) exist"), std::string::npos)
      << s;
  EXPECT_NE(s.find("pod default/a2: NOT ALLOCATED (group g1: 2 of 3 member(s) exist"),
            std::string::npos)
      << s;
}

TEST(SimulateGroupsTest, BoundMembersCountAgainstTheMinimum) {
  // a1 runs on n0 already: a2 and a3 are the two members still needed.
  std::string bound = R"(---
apiVersion: v1
kind: Pod
metadata:
  name: a1
  labels: {draco.dev/group: g1, draco.dev/group-min-members: "3"}
spec:
  nodeName: n0
  containers: [{name: c, image: i}]
  resourceClaims: [{name: gpu, resourceClaimTemplateName: two-gpus}]
)";
  std::string s;
  EXPECT_EQ(Simulate(Cluster(2, 2) + bound + Member("a2", "g1", 3, "one-gpu") +
                         Member("a3", "g1", 3, "one-gpu"),
                     &s),
            0)
      << s;
  EXPECT_NE(s.find("group g1: 2 member(s) placed at once (1 bound already)"), std::string::npos)
      << s;
  EXPECT_NE(s.find("pod default/a1: allocated on n0"), std::string::npos) << s;
  EXPECT_NE(s.find("pod default/a3: allocated on n1"), std::string::npos) << s;
}

TEST(SimulateGroupsTest, PodGroupGangMinCountAndJsonGroupField) {
  std::string pg = R"(---
apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {name: train}
spec: {schedulingPolicy: {gang: {minCount: 2}}}
)";
  auto pod = [](const std::string& name) {
    return "---\napiVersion: v1\nkind: Pod\nmetadata: {name: " + name +
           "}\nspec:\n  schedulingGroup: {podGroupName: train}\n"
           "  containers: [{name: c, image: i}]\n"
           "  resourceClaims: [{name: gpu, resourceClaimTemplateName: two-gpus}]\n";
  };
  std::string s;
  EXPECT_EQ(Simulate(Cluster(1, 2) + pg + pod("p1") + pod("p2"), &s), 1) << s;
  EXPECT_NE(s.find("group PodGroup train: NOT PLACED: PodGroup train needs 2 member(s)"),
            std::string::npos)
      << s;
  EXPECT_EQ(s.find("ignored"), std::string::npos) << s;  // the PodGroup is read
  EXPECT_EQ(Simulate(Cluster(2, 2) + pg + pod("p1") + pod("p2"), &s, true), 0) << s;
  EXPECT_NE(s.find(R"("name":"pod default/p1","group":"PodGroup train","allocated":true)"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find(R"("podGroups":[{"name":"PodGroup train","placed":true,)"), std::string::npos)
      << s;
}

}  // namespace
}  // namespace draco::simulate
