#include "controller/api/version_convert.h"

#include <variant>

#include <gtest/gtest.h>

#include "controller/api/codec.h"

namespace draco::api {
namespace {

// NVIDIA's quickstart style: a v1beta1 template whose request has the flat v1beta1 fields.
constexpr const char* kV1beta1Template = R"(
apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaimTemplate
metadata: {name: single-gpu, namespace: gpu-test1}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        deviceClassName: gpu.nvidia.com
        selectors:
        - cel: {expression: "device.attributes['gpu.nvidia.com'].productName == 'A100'"}
        allocationMode: ExactCount
        count: 2
      - name: any
        firstAvailable:
        - {name: big, deviceClassName: gpu.nvidia.com, count: 1}
      constraints:
      - {requests: [gpu], matchAttribute: gpu.nvidia.com/uuid}
)";

TEST(VersionConvertTest, V1beta1RequestFieldsMoveIntoExactly) {
  StatusOr<std::vector<Manifest>> m = DecodeManifests(kV1beta1Template);
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_EQ(m->size(), 1u);
  EXPECT_EQ((*m)[0].api_version, "resource.k8s.io/v1");
  const auto& t = std::get<ResourceClaimTemplate>((*m)[0].object);
  ASSERT_EQ(t.spec.spec.devices.requests.size(), 2u);
  const DeviceRequest& gpu = t.spec.spec.devices.requests[0];
  ASSERT_TRUE(gpu.exactly.has_value());
  EXPECT_EQ(gpu.exactly->device_class_name, "gpu.nvidia.com");
  EXPECT_EQ(gpu.exactly->allocation_mode, "ExactCount");
  EXPECT_EQ(gpu.exactly->count, 2);
  ASSERT_EQ(gpu.exactly->selectors.size(), 1u);
  EXPECT_TRUE(gpu.first_available.empty());
  EXPECT_TRUE(gpu.unknown.empty());
  const DeviceRequest& any = t.spec.spec.devices.requests[1];
  EXPECT_FALSE(any.exactly.has_value());
  ASSERT_EQ(any.first_available.size(), 1u);
  EXPECT_EQ(any.first_available[0].device_class_name, "gpu.nvidia.com");
  EXPECT_EQ(t.spec.spec.devices.constraints.size(), 1u);
  EXPECT_NE((*m)[0].raw_json.find(R"("exactly":{"deviceClassName":"gpu.nvidia.com")"),
            std::string::npos)
      << (*m)[0].raw_json;
}

TEST(VersionConvertTest, V1beta1SliceBasicIsFlattened) {
  StatusOr<std::vector<Manifest>> m = DecodeManifests(R"(
apiVersion: resource.k8s.io/v1beta1
kind: ResourceSlice
metadata: {name: node-1-gpu}
spec:
  driver: gpu.example.com
  nodeName: node-1
  allNodes: false
  pool: {name: node-1, generation: 1, resourceSliceCount: 1}
  devices:
  - name: gpu-0
    basic:
      attributes: {model: {string: a100}}
      capacity: {memory: {value: 40Gi}}
)");
  ASSERT_TRUE(m.ok()) << m.status();
  const auto& s = std::get<ResourceSlice>((*m)[0].object);
  EXPECT_EQ(s.spec.node_name, "node-1");
  EXPECT_FALSE(s.spec.all_nodes.has_value());
  ASSERT_EQ(s.spec.devices.size(), 1u);
  EXPECT_EQ(s.spec.devices[0].attributes.count("model"), 1u);
  EXPECT_EQ(s.spec.devices[0].capacity.count("memory"), 1u);
  EXPECT_TRUE(s.spec.devices[0].unknown.empty());
}

TEST(VersionConvertTest, V1beta1EmptyNodeNameIsDropped) {
  StatusOr<std::vector<Manifest>> m = DecodeManifests(
      "apiVersion: resource.k8s.io/v1beta1\nkind: ResourceSlice\nmetadata: {name: s}\n"
      "spec: {driver: d, nodeName: '', allNodes: true, pool: {name: p, generation: 1, "
      "resourceSliceCount: 1}, devices: [{name: a}]}\n");
  ASSERT_TRUE(m.ok()) << m.status();
  const auto& s = std::get<ResourceSlice>((*m)[0].object);
  EXPECT_FALSE(s.spec.node_name.has_value());
  EXPECT_EQ(s.spec.all_nodes, true);
}

TEST(VersionConvertTest, V1beta2HasTheV1Shape) {
  StatusOr<std::vector<Manifest>> m = DecodeManifests(
      "apiVersion: resource.k8s.io/v1beta2\nkind: ResourceClaim\nmetadata: {name: c}\n"
      "spec: {devices: {requests: [{name: a, exactly: {deviceClassName: gpu}}]}}\n");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ((*m)[0].api_version, "resource.k8s.io/v1");
  const auto& c = std::get<ResourceClaim>((*m)[0].object);
  ASSERT_TRUE(c.spec.devices.requests[0].exactly.has_value());
  EXPECT_EQ(c.spec.devices.requests[0].exactly->device_class_name, "gpu");
}

TEST(VersionConvertTest, UnknownVersionsAreRejectedByName) {
  StatusOr<std::vector<Manifest>> m = DecodeManifests(
      "apiVersion: v1\nkind: Node\nmetadata: {name: node-a}\n---\n"
      "apiVersion: resource.k8s.io/v1alpha3\nkind: ResourceClaim\nmetadata: {name: c}\n");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(),
            "document 2: apiVersion \"resource.k8s.io/v1alpha3\" of ResourceClaim is not "
            "supported: draco reads resource.k8s.io/v1, v1beta2 and v1beta1");
  EXPECT_FALSE(DecodeManifests("apiVersion: draco.dev/v2\nkind: AllocationPolicy\n").ok());
  EXPECT_FALSE(DecodeManifests("apiVersion: v2\nkind: Pod\n").ok());
  // Other groups are not draco's to judge: callers ignore them.
  EXPECT_TRUE(DecodeManifests("apiVersion: apps/v1\nkind: Deployment\n").ok());
}

TEST(VersionConvertTest, ConvertLeavesV1AndOtherGroupsAlone) {
  rapidjson::Document d;
  d.Parse(R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim",)"
          R"("spec":{"devices":{"requests":[{"name":"a","deviceClassName":"x"}]}}})");
  ASSERT_TRUE(ConvertResourceToV1(d, d.GetAllocator()).ok());
  // A v1 object keeps its (invalid) flat field: v1 decoding reports it, not the converter.
  EXPECT_TRUE(d["spec"]["devices"]["requests"][0].HasMember("deviceClassName"));
  EXPECT_FALSE(d["spec"]["devices"]["requests"][0].HasMember("exactly"));
}

}  // namespace
}  // namespace draco::api
