// kubectl draco: the cluster fetcher against a fake API (items, errors) and the subcommands on
// a fixed snapshot (explain, pools, simulate --from-cluster, output formats).
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/version.h"
#include "controller/kubectl/cluster.h"
#include "controller/kubectl/plugin.h"
#include "controller/kubectl/pools.h"
#include "controller/simulate/explain_pod.h"
#include "k8sclient/api_error.h"
#include "k8sclient/testing/fake_discovery_client.h"

namespace draco::kubectl {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Lists answer from `lists` (resource -> JSON list body) or `errors` (resource -> HTTP code).
class FakeListClient : public k8s::testing::FakeDiscoveryClient {
 public:
  std::map<std::string, std::string> lists;
  std::map<std::string, int> errors;
  StatusOr<k8s::ObjectList> List(const k8s::GroupVersionResource& gvr, std::string_view,
                                 const k8s::ListOptions&) override {
    if (auto e = errors.find(gvr.resource); e != errors.end()) {
      k8s::ApiError err;
      err.http_code = e->second;
      err.reason = e->second == 403 ? "Forbidden" : "NotFound";
      err.message = gvr.resource + " is " + err.reason;
      return err.ToStatus();
    }
    auto it = lists.find(gvr.resource);
    return k8s::ParseObjectList(it == lists.end() ? R"({"items":[]})" : it->second);
  }
};

TEST(FetchClusterTest, ItemsGetKindAndApiVersionAndLoseManagedFields) {
  FakeListClient c;
  c.lists["nodes"] = R"({"items":[{"metadata":{"name":"n1","managedFields":[{"manager":"x"}]}}]})";
  c.errors["allocationpolicies"] = 404;
  std::ostringstream warn;
  ClusterSummary sum;
  auto doc = FetchCluster(c, "https://127.0.0.1:6443", warn, &sum);
  ASSERT_TRUE(doc.ok()) << doc.status().message();
  EXPECT_THAT(doc->text, HasSubstr(R"("apiVersion":"v1","kind":"Node")"));
  EXPECT_THAT(doc->text, Not(HasSubstr("managedFields")));
  EXPECT_THAT(sum.skipped, ::testing::ElementsAre("AllocationPolicy (not served)"));
  EXPECT_EQ(warn.str(), "");
}

TEST(FetchClusterTest, ForbiddenRequiredKindNamesVerbResourceAndGroup) {
  FakeListClient c;
  c.errors["resourceslices"] = 403;
  std::ostringstream warn;
  auto doc = FetchCluster(c, "https://127.0.0.1:6443", warn);
  ASSERT_FALSE(doc.ok());
  EXPECT_EQ(doc.status().code(), StatusCode::kPermissionDenied);
  EXPECT_THAT(doc.status().message(),
              HasSubstr("cannot list resourceslices.resource.k8s.io at the cluster scope: "
                        "forbidden; kubectl draco needs RBAC verb \"list\" on resource "
                        "\"resourceslices\" in API group \"resource.k8s.io\""));
}

TEST(FetchClusterTest, ForbiddenOptionalKindIsAWarning) {
  FakeListClient c;
  c.errors["persistentvolumes"] = 403;
  std::ostringstream warn;
  auto doc = FetchCluster(c, "h", warn);
  ASSERT_TRUE(doc.ok());
  EXPECT_THAT(warn.str(), HasSubstr("warning: cannot list persistentvolumes"));
}

TEST(FetchClusterTest, UnservedDraApiNamesTheVersionNeeded) {
  FakeListClient c;
  c.errors["deviceclasses"] = 404;
  std::ostringstream warn;
  auto doc = FetchCluster(c, "h", warn);
  ASSERT_FALSE(doc.ok());
  EXPECT_THAT(doc.status().message(), HasSubstr("does not serve resource.k8s.io/v1"));
}

// Two nodes with two GPUs each (8Gi memory each); node-1's gpu-0 is allocated to running/a-gpu,
// node-2's gpu-1 is tainted. Pod "waiter" (pending, one claim from a template) must avoid node-1
// (anti-affinity with the running pod). Pod "huge" wants 3 GPUs on one node: fits nowhere.
// Node cpu-1 has no devices; node down-1 has a free GPU but is not Ready.
constexpr char kCluster[] = R"(
apiVersion: v1
kind: Node
metadata: {name: node-1, labels: {kubernetes.io/hostname: node-1}}
---
apiVersion: v1
kind: Node
metadata: {name: node-2, labels: {kubernetes.io/hostname: node-2}}
---
apiVersion: v1
kind: Node
metadata: {name: cpu-1, labels: {kubernetes.io/hostname: cpu-1}}
---
apiVersion: v1
kind: Node
metadata: {name: down-1, labels: {kubernetes.io/hostname: down-1}}
status:
  conditions: [{type: Ready, status: "False", reason: KubeletNotReady}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: down-1-gpus}
spec:
  driver: gpu.example.com
  nodeName: down-1
  pool: {name: down-1, generation: 1, resourceSliceCount: 1}
  devices:
  - name: gpu-0
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu}
spec:
  selectors: [{cel: {expression: 'device.driver == "gpu.example.com"'}}]
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: nic}
spec:
  selectors: [{cel: {expression: 'device.driver == "nic.example.com"'}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-1-counters}
spec:
  driver: gpu.example.com
  nodeName: node-1
  pool: {name: node-1, generation: 1, resourceSliceCount: 2}
  sharedCounters:
  - name: board
    counters: {power: {value: "600"}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-1-gpus}
spec:
  driver: gpu.example.com
  nodeName: node-1
  pool: {name: node-1, generation: 1, resourceSliceCount: 2}
  devices:
  - name: gpu-0
    capacity: {memory: {value: 8Gi}}
    consumesCounters: [{counterSet: board, counters: {power: {value: "300"}}}]
  - name: gpu-1
    capacity: {memory: {value: 8Gi}}
    consumesCounters: [{counterSet: board, counters: {power: {value: "300"}}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-2-gpus}
spec:
  driver: gpu.example.com
  nodeName: node-2
  pool: {name: node-2, generation: 1, resourceSliceCount: 1}
  devices:
  - name: gpu-0
    capacity: {memory: {value: 8Gi}}
  - name: gpu-1
    capacity: {memory: {value: 8Gi}}
    taints: [{key: broken, effect: NoSchedule}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu, namespace: team}
spec:
  spec:
    devices:
      requests: [{name: gpu, exactly: {deviceClassName: gpu}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: three-gpus, namespace: team}
spec:
  spec:
    devices:
      requests: [{name: gpus, exactly: {deviceClassName: gpu, count: 3}}]
---
apiVersion: v1
kind: Pod
metadata: {name: huge, namespace: team}
spec:
  schedulingGates: [{name: draco.dev/allocation}]
  containers: [{name: c, image: x}]
  resourceClaims: [{name: gpus, resourceClaimTemplateName: three-gpus}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: a-gpu, namespace: team}
spec:
  devices:
    requests: [{name: gpu, exactly: {deviceClassName: gpu}}]
status:
  allocation:
    devices:
      results: [{request: gpu, driver: gpu.example.com, pool: node-1, device: gpu-0}]
    nodeSelector:
      nodeSelectorTerms:
      - matchFields: [{key: metadata.name, operator: In, values: [node-1]}]
  reservedFor: [{resource: pods, name: running, uid: u1}]
---
apiVersion: v1
kind: Pod
metadata: {name: running, namespace: team, labels: {app: occupant}}
spec:
  nodeName: node-1
  containers: [{name: c, image: x}]
  resourceClaims: [{name: gpu, resourceClaimName: a-gpu}]
status: {phase: Running}
---
apiVersion: v1
kind: Pod
metadata: {name: waiter, namespace: team}
spec:
  schedulingGates: [{name: draco.dev/allocation}]
  containers: [{name: c, image: x}]
  resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]
  affinity:
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector: {matchLabels: {app: occupant}}
        topologyKey: kubernetes.io/hostname
status: {phase: Pending}
---
apiVersion: v1
kind: Pod
metadata: {name: done, namespace: team}
spec:
  nodeName: node-2
  containers: [{name: c, image: x}]
status: {phase: Succeeded}
)";

int RunPlugin(std::vector<std::string> args, std::string* out, std::string* err = nullptr) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  std::ostringstream o, e;
  Source src;
  src.fixed_document = kCluster;
  int rc = PluginMain(static_cast<int>(argv.size()), argv.data(), o, e, src);
  *out = o.str();
  if (err) *err = e.str();
  return rc;
}

TEST(KubectlDracoTest, VersionPrintsDracosVersionLine) {
  std::string out;
  EXPECT_EQ(RunPlugin({"version"}, &out), 0);
  EXPECT_EQ(out, VersionLine() + "\n");
  EXPECT_EQ(RunPlugin({"--version"}, &out), 0);
  EXPECT_EQ(out, VersionLine() + "\n");
}

TEST(KubectlExplainTest, PendingPodNamesTheFilterAndTheNodeThatFits) {
  std::string out, err;
  EXPECT_EQ(RunPlugin({"explain", "pod/waiter", "-n", "team"}, &out, &err), 0) << err;
  EXPECT_THAT(out, HasSubstr("pod team/waiter: Pending, not on a node yet, scheduling gates: "
                             "draco.dev/allocation"));
  EXPECT_THAT(out, HasSubstr("claim team/waiter-gpu (pod claim gpu): PENDING"));
  EXPECT_THAT(out, HasSubstr("filtered node-1: InterPodAffinity"));
  EXPECT_THAT(out, HasSubstr("would be allocated now on 1 node(s): node-2"));
  EXPECT_THAT(out, Not(HasSubstr("node node-2:")));  // the verdict names it; -o wide explains
  EXPECT_THAT(out, HasSubstr("filtered down-1: node(s) were not ready"));  // as draco run
}

TEST(KubectlExplainTest, PodThatFitsNowhereSummarizesNodesWithoutDevices) {
  std::string out;
  EXPECT_EQ(RunPlugin({"explain", "pod/huge", "-n", "team"}, &out), 1);
  EXPECT_THAT(out, HasSubstr("claim team/huge-gpus (pod claim gpus): PENDING"));
  EXPECT_THAT(out, HasSubstr("node node-1: unsatisfiable"));
  EXPECT_THAT(out, HasSubstr("needs 3"));
  EXPECT_THAT(out, HasSubstr("no devices for these requests on 1 node: cpu-1\n"));
  EXPECT_THAT(out, Not(HasSubstr("node cpu-1:")));
  EXPECT_THAT(out, HasSubstr("fits on no node now"));
}

TEST(KubectlExplainTest, AllocatedPodShowsNodeDeviceAndReservation) {
  std::string out;
  EXPECT_EQ(RunPlugin({"explain", "running", "-n", "team"}, &out), 0);
  EXPECT_THAT(out, HasSubstr("pod team/running: Running, on node node-1"));
  EXPECT_THAT(out, HasSubstr("claim team/a-gpu: allocated on node node-1, reserved for running"));
  EXPECT_THAT(out, HasSubstr("gpu -> gpu.example.com/node-1/gpu-0"));
  EXPECT_THAT(out, Not(HasSubstr("pending claims")));
}

TEST(KubectlExplainTest, ClaimByNameAndJsonAndYaml) {
  std::string out;
  EXPECT_EQ(RunPlugin({"explain", "claim/a-gpu", "-n", "team", "-o", "json"}, &out), 0);
  EXPECT_THAT(out, HasSubstr(R"("claim":"team/a-gpu","allocated":true,"node":"node-1")"));
  EXPECT_EQ(RunPlugin({"explain", "pod/waiter", "-n", "team", "-o", "yaml"}, &out), 0);
  EXPECT_THAT(out, HasSubstr("wouldFitOn:\n  - node-2"));
}

TEST(KubectlExplainTest, UnknownOrFinishedPodIsAnInputError) {
  std::string out, err;
  EXPECT_EQ(RunPlugin({"explain", "pod/done", "-n", "team"}, &out, &err), 2);
  EXPECT_THAT(err, HasSubstr("pod team/done not found (or it has finished)"));
  EXPECT_EQ(RunPlugin({"explain", "deployment/x", "-n", "team"}, &out, &err), 2);
}

TEST(KubectlPoolsTest, CountsCapacityCountersAndLargestFit) {
  std::string out;
  EXPECT_EQ(RunPlugin({"pools", "-o", "wide"}, &out), 0);
  // node-1: gpu-0 allocated; node-2: gpu-1 tainted (still free).
  EXPECT_THAT(out, ::testing::ContainsRegex(
                       "gpu.example.com +node-1 +node-1 +2 +1 +1 +0 +memory 8Gi/16Gi"));
  EXPECT_THAT(
      out, ::testing::ContainsRegex("gpu.example.com +node-2 +node-2 +2 +0 +2 +1 +memory 0/16Gi"));
  EXPECT_THAT(out, ::testing::ContainsRegex("node-1 +board/power +300 +600 +300"));
  // Largest request of class gpu: node-1 one free GPU, node-2 one untainted GPU.
  EXPECT_THAT(out, ::testing::ContainsRegex("gpu +node-1 +1 device\n"));
  EXPECT_THAT(out, ::testing::ContainsRegex("gpu +node-2 +1 device\n"));
  EXPECT_THAT(out, Not(HasSubstr("nic ")));  // no NIC on any node: no fragmentation rows
}

TEST(KubectlPoolsTest, FiltersAndJson) {
  std::string out;
  EXPECT_EQ(RunPlugin({"pools", "--node", "node-2", "-o", "json"}, &out), 0);
  EXPECT_THAT(out, HasSubstr(R"("node":"node-2","devices":2,"allocated":0,"free":2,"tainted":1)"));
  EXPECT_THAT(out, Not(HasSubstr(R"("node":"node-1")")));
  EXPECT_THAT(out, HasSubstr(R"("deviceClass":"gpu","node":"node-2","largestRequest":1)"));
}

TEST(KubectlSimulateTest, FromClusterAddsExtraManifestsAndHidesSettledPods) {
  std::string dir = ::testing::TempDir() + "/kubectl-extra";
  std::filesystem::create_directories(dir);
  {
    std::ofstream f(dir + "/pods.yaml");
    f << "apiVersion: v1\nkind: Pod\nmetadata: {name: extra, namespace: team}\nspec:\n"
         "  containers: [{name: c, image: x}]\n"
         "  resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]\n";
  }
  std::string out, err;
  // waiter takes node-2's free GPU, extra takes node-1's last one.
  EXPECT_EQ(RunPlugin({"simulate", "--from-cluster", "-f", dir}, &out, &err), 1) << err;
  EXPECT_THAT(out, HasSubstr("pod team/waiter: allocated on node-2"));
  EXPECT_THAT(out, HasSubstr("pod team/extra: allocated on node-1"));
  EXPECT_THAT(out, Not(HasSubstr("pod team/running")));
  EXPECT_THAT(out, HasSubstr("pod team/huge: NOT ALLOCATED"));
  EXPECT_THAT(out, HasSubstr("1 pods or claims with nothing to allocate"));
  EXPECT_THAT(out, HasSubstr("2 allocated, 1 not allocated"));
  EXPECT_EQ(RunPlugin({"simulate", "-f", dir}, &out, &err), 2);
  EXPECT_THAT(err, HasSubstr("pass --from-cluster"));
}

TEST(KubectlFlagsTest, BadOutputFormatIsAnInputError) {
  std::string out, err;
  EXPECT_EQ(RunPlugin({"pools", "-o", "table"}, &out, &err), 2);
  EXPECT_THAT(err, HasSubstr("unknown output format \"table\""));
}

TEST(JsonToYamlTest, NestedValues) {
  EXPECT_EQ(simulate::JsonToYaml(R"({"a":[1,"x"],"b":{"c":true}})"),
            "a:\n  - 1\n  - x\nb:\n  c: true\n");
}

}  // namespace
}  // namespace draco::kubectl
