#include "controller/simulate/simulate.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

namespace draco::simulate {
namespace {

const std::string kSamples = std::string(DRACO_SOURCE_DIR) + "/e2e/samples/simulate";

TEST(SimulateTest, SamplesAllocateAllButTheImpossibleJob) {
  Options opts;
  opts.paths = {kSamples};
  std::ostringstream out, err;
  EXPECT_EQ(RunSimulate(opts, out, err), 1) << err.str();
  std::string s = out.str();
  EXPECT_NE(s.find("pod default/train: allocated"), std::string::npos) << s;
  EXPECT_NE(s.find("part/big -> gpu.example.com/"), std::string::npos) << s;
  EXPECT_NE(s.find("pod default/big-job: NOT ALLOCATED"), std::string::npos) << s;
  EXPECT_NE(s.find("after class selectors"), std::string::npos) << s;
  // The pre-allocated gpu-0 on gpu-node-0 is never handed out again.
  EXPECT_EQ(s.find("gpu-node-0/gpu-0\n"), std::string::npos) << s;
  EXPECT_NE(s.find("3 allocated, 1 not allocated"), std::string::npos) << s;
}

TEST(SimulateTest, AllAllocatedExitsZero) {
  Options opts;
  opts.paths = {kSamples + "/00-nodes.yaml", kSamples + "/10-classes.yaml",
                kSamples + "/20-slices.yaml"};
  std::string tmp = ::testing::TempDir() + "/pod.yaml";
  std::ofstream(tmp)
      << "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: one}\n"
         "spec:\n  devices:\n    requests:\n    - name: g\n      exactly: "
         "{deviceClassName: gpu}\n";
  opts.paths.push_back(tmp);
  opts.json = true;
  std::ostringstream out, err;
  EXPECT_EQ(RunSimulate(opts, out, err), 0) << err.str() << out.str();
  EXPECT_NE(out.str().find("\"allocated\":1"), std::string::npos) << out.str();
}

TEST(SimulateTest, PodAntiAffinityFiltersNodesLikeTheController) {
  // Issue #13: occupant on gpu-node-0 by nodeName; the GPU pod must avoid it.
  Options opts;
  opts.paths = {kSamples + "/00-nodes.yaml", kSamples + "/10-classes.yaml",
                kSamples + "/20-slices.yaml"};
  std::string tmp = ::testing::TempDir() + "/wedge.yaml";
  std::ofstream(tmp) << R"(apiVersion: v1
kind: Pod
metadata: {name: occupant, namespace: wedge, labels: {app: occupant}}
spec: {nodeName: gpu-node-0, containers: [{name: c, image: i}]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: one, namespace: wedge}
spec: {devices: {requests: [{name: g, exactly: {deviceClassName: gpu}}]}}
---
apiVersion: v1
kind: Pod
metadata: {name: gpu, namespace: wedge}
spec:
  affinity:
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector: {matchLabels: {app: occupant}}
        topologyKey: kubernetes.io/hostname
  resourceClaims: [{name: g, resourceClaimName: one}]
  containers: [{name: c, image: i}]
)";
  opts.paths.push_back(tmp);
  std::ostringstream out, err;
  RunSimulate(opts, out, err);
  EXPECT_NE(out.str().find("pod wedge/gpu: allocated on gpu-node-1"), std::string::npos)
      << err.str() << out.str();
  Options ex = opts;
  ex.claim = "wedge/one";
  ex.node = "gpu-node-0";
  std::ostringstream eout, eerr;
  EXPECT_EQ(RunExplain(ex, eout, eerr), 1) << eerr.str() << eout.str();
  EXPECT_NE(eout.str().find("gpu-node-0: InterPodAffinity: pod anti-affinity with wedge/occupant"),
            std::string::npos)
      << eout.str();
}

TEST(SimulateTest, InputErrorsExitTwo) {
  Options opts;
  opts.paths = {"/nonexistent/path"};
  std::ostringstream out, err;
  EXPECT_EQ(RunSimulate(opts, out, err), 2);
  std::string tmp = ::testing::TempDir() + "/bad.yaml";
  std::ofstream(tmp) << "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {resourceClaims: "
                        "[{name: x}]}\n";
  opts.paths = {tmp};
  EXPECT_EQ(RunSimulate(opts, out, err), 2);
}

TEST(SimulateTest, V1beta1ManifestsAreConvertedToV1) {
  // NVIDIA's quickstart still ships v1beta1 templates with the flat request fields.
  Options opts;
  opts.paths = {std::string(DRACO_SOURCE_DIR) + "/e2e/samples/simulate-v1beta1"};
  std::ostringstream out, err;
  EXPECT_EQ(RunSimulate(opts, out, err), 0) << err.str() << out.str();
  std::string s = out.str();
  EXPECT_NE(s.find("pod gpu-test1/pod1: allocated"), std::string::npos) << s;
  EXPECT_NE(s.find("pod gpu-test1/pod2: allocated"), std::string::npos) << s;
  EXPECT_NE(s.find("node-a/gpu-0"), std::string::npos) << s;
  EXPECT_NE(s.find("node-a/gpu-1"), std::string::npos) << s;
  EXPECT_NE(s.find("2 allocated, 0 not allocated"), std::string::npos) << s;
}

TEST(SimulateTest, UnknownApiVersionExitsTwoNamingIt) {
  std::string tmp = ::testing::TempDir() + "/alpha.yaml";
  std::ofstream(tmp) << "apiVersion: resource.k8s.io/v1alpha3\nkind: DeviceClass\n"
                        "metadata: {name: gpu}\n";
  Options opts;
  opts.paths = {tmp};
  std::ostringstream out, err;
  EXPECT_EQ(RunSimulate(opts, out, err), 2);
  EXPECT_NE(err.str().find("resource.k8s.io/v1alpha3"), std::string::npos) << err.str();
}

TEST(SimulateTest, ExplainReadsV1beta1ClaimsAsV1) {
  // A v1beta1 claim with the flat request fields (count 3 of a class with two GPUs): explain sees
  // it as the API server stores it, an `exactly` request of 3, not an unknown request type.
  std::filesystem::path dir = ::testing::TempDir() + "/explain-v1beta1";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "claim.yaml") << R"(apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaim
metadata: {namespace: gpu-test1, name: three-gpus}
spec:
  devices:
    requests:
    - name: gpus
      deviceClassName: gpu.nvidia.com
      allocationMode: ExactCount
      count: 3
)";
  Options opts;
  opts.paths = {std::string(DRACO_SOURCE_DIR) + "/e2e/samples/simulate-v1beta1", dir.string()};
  opts.claim = "gpu-test1/three-gpus";
  std::ostringstream out, err;
  EXPECT_EQ(RunExplain(opts, out, err), 1) << err.str() << out.str();
  EXPECT_NE(out.str().find("needs 3"), std::string::npos) << out.str();
  EXPECT_EQ(out.str().find("unknown request type"), std::string::npos) << out.str();

  std::ofstream(dir / "claim.yaml") << "apiVersion: resource.k8s.io/v2\nkind: ResourceClaim\n"
                                       "metadata: {namespace: gpu-test1, name: three-gpus}\n";
  std::ostringstream out2, err2;
  EXPECT_EQ(RunExplain(opts, out2, err2), 2) << out2.str();
  EXPECT_NE(err2.str().find("resource.k8s.io/v2"), std::string::npos) << err2.str();
}

TEST(SimulateTest, FeatureGatesFollowTheKubernetesVersion) {
  // The sample GPUs are partitionable (shared counters): kube-scheduler 1.35 has
  // DRAPartitionableDevices off by default, so devices that consume counters are not allocated.
  Options opts;
  std::ostringstream out, err;
  opts.paths = {kSamples};
  opts.kubernetes_minor = 35;
  EXPECT_EQ(RunSimulate(opts, out, err), 1) << err.str();
  EXPECT_NE(out.str().find("0 allocated"), std::string::npos) << out.str();
  // Turning the gate on gives 1.37's answer.
  opts.feature_gates = "DRAPartitionableDevices=true";
  std::ostringstream out2;
  EXPECT_EQ(RunSimulate(opts, out2, err), 1) << err.str();
  EXPECT_NE(out2.str().find("3 allocated, 1 not allocated"), std::string::npos) << out2.str();
  opts.feature_gates = "DRAPrioritizedList=maybe";
  std::ostringstream out3, err3;
  EXPECT_EQ(RunSimulate(opts, out3, err3), 2);
  EXPECT_NE(err3.str().find("--feature-gates"), std::string::npos) << err3.str();
}

TEST(SimulateTest, ExplainNamesTheFunnel) {
  Options opts;
  opts.paths = {kSamples};
  opts.claim = "too-big";
  std::ostringstream out, err;
  EXPECT_EQ(RunExplain(opts, out, err), 1) << err.str();
  EXPECT_NE(out.str().find("needs 4"), std::string::npos) << out.str();
  opts.json = true;
  std::ostringstream jout;
  EXPECT_EQ(RunExplain(opts, jout, err), 1);
  EXPECT_NE(jout.str().find("\"funnel\""), std::string::npos) << jout.str();
}

const std::string kPolicy = std::string(DRACO_SOURCE_DIR) + "/e2e/samples/simulate-policy";

std::string SimulatePolicy(const std::string& policy_dir, int want_exit) {
  Options opts;
  opts.paths = {kPolicy + "/base"};
  if (!policy_dir.empty()) opts.paths.push_back(kPolicy + "/" + policy_dir);
  std::ostringstream out, err;
  EXPECT_EQ(RunSimulate(opts, out, err), want_exit) << err.str() << out.str();
  return out.str();
}

TEST(SimulatePolicyTest, WithoutPolicyEverythingGoesFirstFitToNode0) {
  std::string s = SimulatePolicy("", 0);
  EXPECT_NE(s.find("claim team-b/a: allocated on node-0"), std::string::npos) << s;
  EXPECT_NE(s.find("claim team-b/c: allocated on node-0"), std::string::npos) << s;
  EXPECT_NE(s.find("claim team-a/extra: allocated on node-0"), std::string::npos) << s;
}

TEST(SimulatePolicyTest, BinPackFillsTheUsedNodeFirst) {
  std::string s = SimulatePolicy("binpack", 0);
  EXPECT_NE(s.find("team-b/a\n    gpu -> gpu.example.com/node-1/gpu-1"), std::string::npos) << s;
  EXPECT_NE(s.find("team-b/c\n    gpu -> gpu.example.com/node-1/gpu-3"), std::string::npos) << s;
  EXPECT_NE(s.find("claim team-a/extra: allocated on node-0"), std::string::npos) << s;
}

TEST(SimulatePolicyTest, SpreadAlternatesToTheLeastUsedNode) {
  std::string s = SimulatePolicy("spread", 0);
  EXPECT_NE(s.find("claim team-b/a: allocated on node-0"), std::string::npos) << s;
  EXPECT_NE(s.find("claim team-b/b: allocated on node-0"), std::string::npos) << s;
  EXPECT_NE(s.find("claim team-b/c: allocated on node-1"), std::string::npos) << s;
}

TEST(SimulatePolicyTest, LimitsRejectAndExplain) {
  std::string s = SimulatePolicy("limit", 1);
  EXPECT_NE(s.find("claim team-b/b: allocated"), std::string::npos) << s;
  EXPECT_NE(s.find("claim team-b/c: NOT ALLOCATED (unsatisfiable: AllocationPolicy gpu-quota: "
                   "namespace team-b maxDevices limit 2"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("within namespace limits  -- AllocationPolicy gpu-quota: namespace team-b "
                   "maxDevices 2, used 2, requested 1"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("maxCapacity[memory] limit 100Gi (namespace entry \"*\"), used 80Gi, "
                   "requested 80Gi"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("2 allocated, 2 not allocated"), std::string::npos) << s;
}

TEST(SimulatePolicyTest, BadPolicyIsAnInputError) {
  auto dir = std::filesystem::temp_directory_path() / "draco-sim-bad-policy";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "p.yaml") << "apiVersion: draco.dev/v1alpha1\nkind: AllocationPolicy\n"
                                   "metadata: {name: p}\nspec:\n  deviceClassSelector: "
                                   "{names: [gpu]}\n  strategy: Random\n";
  Options opts;
  opts.paths = {kPolicy + "/base", dir.string()};
  std::ostringstream out, err;
  EXPECT_EQ(RunSimulate(opts, out, err), 2);
  EXPECT_NE(err.str().find("unknown strategy"), std::string::npos) << err.str();
  std::filesystem::remove_all(dir);
}

// KEP-5004: a pod asking example.com/gpu gets the special claim kube-scheduler would create, and
// two such pods never share a GPU (issue #14: simulate used to call them "allocated" and hand
// the same device to the next pod).
TEST(SimulateTest, ExtendedResourcePodsGetDistinctDevices) {
  std::string tmp = ::testing::TempDir() + "/ext.yaml";
  std::ofstream(tmp) << R"(apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu}
spec:
  selectors: [{cel: {expression: 'device.driver == "gpu.example.com"'}}]
  extendedResourceName: example.com/gpu
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n0}
spec:
  driver: gpu.example.com
  nodeName: n0
  pool: {name: n0, resourceSliceCount: 1}
  devices: [{name: gpu-0}, {name: gpu-1}]
---
apiVersion: v1
kind: Pod
metadata: {name: a}
spec:
  containers: [{name: c, image: i, resources: {limits: {example.com/gpu: 1}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: b}
spec:
  containers: [{name: c, image: i, resources: {limits: {"deviceclass.resource.kubernetes.io/gpu": 1}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: c}
spec:
  containers: [{name: c, image: i, resources: {limits: {example.com/gpu: 1}}}]
)";
  Options opts;
  opts.paths = {tmp};
  std::ostringstream out, err;
  EXPECT_EQ(RunSimulate(opts, out, err), 1) << err.str() << out.str();  // 2 GPUs, 3 pods
  std::string s = out.str();
  EXPECT_NE(s.find("pod default/a: allocated"), std::string::npos) << s;
  EXPECT_NE(s.find("claim default/a-extended-resources\n"
                   "    container-0-request-0 -> gpu.example.com/n0/gpu-0"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("claim default/b-extended-resources\n"
                   "    container-0-request-0 -> gpu.example.com/n0/gpu-1"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("pod default/c: NOT ALLOCATED"), std::string::npos) << s;

  // A pod dumped from a live cluster names the claim kube-scheduler made: that one is used.
  std::ofstream(tmp, std::ios::app) << R"(---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: d-extended-resources-x1y2z, namespace: default}
spec:
  devices:
    requests:
    - {name: container-0-request-0, exactly: {deviceClassName: gpu}}
status:
  allocation:
    devices:
      results: [{request: container-0-request-0, driver: gpu.example.com, pool: n0, device: gpu-0}]
---
apiVersion: v1
kind: Pod
metadata: {name: d}
spec:
  containers: [{name: c, image: i, resources: {limits: {example.com/gpu: 1}}}]
status:
  extendedResourceClaimStatus:
    resourceClaimName: d-extended-resources-x1y2z
    requestMappings: [{containerName: c, resourceName: example.com/gpu, requestName: container-0-request-0}]
)";
  std::ostringstream out2, err2;
  EXPECT_EQ(RunSimulate(opts, out2, err2), 1) << err2.str();
  s = out2.str();
  EXPECT_NE(s.find("pod default/d: allocated (all claims already allocated)"), std::string::npos)
      << s;
  // gpu-0 is taken by d's claim: only a (first) gets a device now, gpu-1.
  EXPECT_NE(s.find("claim default/a-extended-resources\n"
                   "    container-0-request-0 -> gpu.example.com/n0/gpu-1"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("pod default/b: NOT ALLOCATED"), std::string::npos) << s;
  EXPECT_NE(s.find("pod default/c: NOT ALLOCATED"), std::string::npos) << s;
}

// Issue #17: workloads expand into their pods; unknown kinds are listed.
TEST(SimulateTest, WorkloadsExpandIntoPodsAndUnknownKindsAreListed) {
  Options opts;
  opts.paths = {std::string(DRACO_SOURCE_DIR) + "/e2e/samples/simulate-workloads"};
  std::ostringstream out, err;
  EXPECT_EQ(RunSimulate(opts, out, err), 0) << err.str() << out.str();
  std::string s = out.str();
  EXPECT_NE(s.find("workload Deployment gpu-test4/inference: 2 pods"), std::string::npos) << s;
  EXPECT_NE(s.find("workload StatefulSet gpu-test4/db: 1 pods"), std::string::npos) << s;
  EXPECT_NE(s.find("workload Job gpu-test4/train: 2 pods"), std::string::npos) << s;
  EXPECT_NE(s.find("workload JobSet gpu-test4/sweep: 2 pods"), std::string::npos) << s;
  EXPECT_NE(s.find("workload LeaderWorkerSet gpu-test4/serve: 2 pods"), std::string::npos) << s;
  EXPECT_NE(s.find("pod gpu-test4/db-0: allocated on node-"), std::string::npos) << s;
  EXPECT_NE(s.find("pod gpu-test4/serve-0-1: allocated on node-"), std::string::npos) << s;
  EXPECT_NE(s.find("claim gpu-test4/sweep-worker-1-0-"), std::string::npos) << s;
  EXPECT_NE(s.find("ignored: 2 objects of unknown kinds: Service/db, ConfigMap/settings"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("9 allocated, 0 not allocated"), std::string::npos) << s;
}

TEST(SimulateTest, OnlyUnknownKindsIsAnInputError) {
  std::string tmp = ::testing::TempDir() + "/unknown.yaml";
  std::ofstream(tmp) << "apiVersion: v1\nkind: Service\nmetadata: {name: foo}\n---\n"
                        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bar}\n";
  Options opts;
  opts.paths = {tmp};
  std::ostringstream out, err;
  EXPECT_EQ(RunSimulate(opts, out, err), 2);
  EXPECT_NE(err.str().find("ignored: 2 objects of unknown kinds: Service/foo, ConfigMap/bar"),
            std::string::npos)
      << err.str();
}

TEST(SimulateTest, ExplainFindsTheClaimOfAWorkloadPod) {
  Options opts;
  opts.paths = {std::string(DRACO_SOURCE_DIR) + "/e2e/samples/simulate-workloads"};
  opts.claim = "gpu-test4/db-0-gpu";
  std::ostringstream out, err;
  EXPECT_EQ(RunExplain(opts, out, err), 0) << err.str() << out.str();
  EXPECT_NE(out.str().find("pod gpu-test4/db-0"), std::string::npos) << out.str();
  EXPECT_NE(err.str().find("ignored: 2 objects"), std::string::npos) << err.str();
}

}  // namespace
}  // namespace draco::simulate

namespace draco::simulate {
namespace {

// `draco explain pod/NAME` (and a bare NAME that is a pod): a pod with no claims says so instead
// of "claim not found"; a pod with a claim shows what it would get after the pods before it.
TEST(SimulateTest, ExplainPodShowsItsClaimsOrThatItHasNone) {
  std::string tmp = ::testing::TempDir() + "/pods.yaml";
  std::ofstream(tmp) << "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\n"
                        "spec: {containers: [{name: c, image: x}]}\n---\n"
                        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\n"
                        "metadata: {name: one, namespace: ml}\n"
                        "spec:\n  devices:\n    requests:\n    - name: g\n      exactly: "
                        "{deviceClassName: gpu}\n---\n"
                        "apiVersion: v1\nkind: Pod\nmetadata: {name: trainer, namespace: ml}\n"
                        "spec:\n  containers: [{name: c, image: x}]\n"
                        "  resourceClaims: [{name: g, resourceClaimName: one}]\n";
  Options opts;
  opts.paths = {kSamples + "/00-nodes.yaml", kSamples + "/10-classes.yaml",
                kSamples + "/20-slices.yaml", tmp};
  opts.claim = "web";
  std::ostringstream out, err;
  EXPECT_EQ(RunExplain(opts, out, err), 0) << err.str();
  EXPECT_NE(out.str().find("pod default/web: Pending, not on a node yet\n  no resource claims"),
            std::string::npos)
      << out.str();
  opts.claim = "pod/ml/trainer";
  std::ostringstream out2, err2;
  EXPECT_EQ(RunExplain(opts, out2, err2), 0) << err2.str();
  EXPECT_NE(out2.str().find("claim ml/one: PENDING"), std::string::npos) << out2.str();
  EXPECT_NE(out2.str().find("would be allocated now on 2 node(s): gpu-node-0 gpu-node-1"),
            std::string::npos)
      << out2.str();
  opts.claim = "pod/ml/nobody";
  std::ostringstream out3, err3;
  EXPECT_EQ(RunExplain(opts, out3, err3), 2);
  EXPECT_NE(err3.str().find("pod ml/nobody not found"), std::string::npos) << err3.str();
}

}  // namespace
}  // namespace draco::simulate

namespace draco::simulate {
namespace {

// User-written DRA objects get upstream's API validation: an invalid one is an input error that
// names the file, document and field, as the API server would refuse it.
TEST(SimulateTest, InvalidClaimIsAnInputErrorNamingTheField) {
  std::string tmp = ::testing::TempDir() + "/invalid.yaml";
  std::ofstream(tmp) << "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\n"
                        "metadata: {name: bad}\nspec:\n  devices:\n    requests:\n"
                        "    - name: Bad_Name\n      exactly: {deviceClassName: gpu}\n";
  Options opts;
  opts.paths = {kSamples + "/10-classes.yaml", tmp};
  std::ostringstream out, err;
  EXPECT_EQ(RunSimulate(opts, out, err), 2);
  EXPECT_NE(err.str().find("invalid.yaml: document 1 (ResourceClaim)"), std::string::npos)
      << err.str();
  EXPECT_NE(err.str().find("spec.devices.requests[0].name"), std::string::npos) << err.str();
}

}  // namespace
}  // namespace draco::simulate
