#include "controller/api/extended_resource.h"

#include <gtest/gtest.h>

#include "controller/api/codec.h"

namespace draco::api {
namespace {

Pod MustPod(const std::string& json) {
  StatusOr<Pod> p = Decode<Pod>(json);
  EXPECT_TRUE(p.ok()) << p.status();
  return p.ok() ? *p : Pod{};
}

DeviceClass Class(std::string name, std::optional<std::string> ern, std::string created = "") {
  DeviceClass c;
  c.metadata.name = std::move(name);
  c.metadata.creation_timestamp = std::move(created);
  c.spec.extended_resource_name = std::move(ern);
  return c;
}

std::vector<std::string> Strings(const std::vector<ContainerExtendedResourceRequest>& ms) {
  std::vector<std::string> out;
  for (const auto& m : ms)
    out.push_back(m.container_name + "/" + m.resource_name + "/" + m.request_name);
  return out;
}

TEST(ExtendedResourceTest, NamesAndClassMapping) {
  EXPECT_TRUE(IsDraExtendedResourceName("example.com/gpu"));
  EXPECT_TRUE(IsDraExtendedResourceName("deviceclass.resource.kubernetes.io/gpu"));
  EXPECT_FALSE(IsDraExtendedResourceName("cpu"));
  EXPECT_FALSE(IsDraExtendedResourceName("kubernetes.io/foo"));
  EXPECT_FALSE(IsDraExtendedResourceName("requests.example.com/gpu"));

  DeviceClass old_gpu = Class("gpu-old", "example.com/gpu", "2026-01-01T00:00:00Z");
  DeviceClass new_gpu = Class("gpu-new", "example.com/gpu", "2026-02-01T00:00:00Z");
  DeviceClass tie = Class("a-gpu", "example.com/tie", "2026-01-01T00:00:00Z");
  DeviceClass tie2 = Class("b-gpu", "example.com/tie", "2026-01-01T00:00:00Z");
  DeviceClass plain = Class("nic", std::nullopt);
  ExtendedResourceClasses m = MapExtendedResourceClasses({&new_gpu, &old_gpu, &tie2, &tie, &plain});
  EXPECT_EQ(m.at("example.com/gpu"), "gpu-new");  // the newer class wins
  EXPECT_EQ(m.at("example.com/tie"), "a-gpu");    // same age: lower name
  EXPECT_EQ(m.at("deviceclass.resource.kubernetes.io/nic"), "nic");
  EXPECT_EQ(m.at("deviceclass.resource.kubernetes.io/gpu-old"), "gpu-old");
  EXPECT_EQ(m.count("example.com/nic"), 0u);
}

TEST(ExtendedResourceTest, LimitsOnlyContainerRequestsOneDevice) {
  Pod p =
      MustPod(R"({"metadata":{"name":"classic","namespace":"ns","uid":"u1"},"spec":{"containers":[)"
              R"({"name":"main","resources":{"limits":{"example.com/gpu":"2","cpu":"1"}}}]}})");
  ExtendedResourceClasses classes = {{"example.com/gpu", "gpu"}};
  EXPECT_EQ(PodExtendedResources(p, classes), std::vector<std::string>{"example.com/gpu"});
  auto plan = PlanExtendedResources(p, classes, nullptr);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->requests.size(), 1u);
  // Requests default from limits: sorted names cpu, example.com/gpu -> index 1.
  EXPECT_EQ(plan->requests[0].name, "container-0-request-1");
  EXPECT_EQ(plan->requests[0].exactly->device_class_name, "gpu");
  EXPECT_EQ(plan->requests[0].exactly->allocation_mode, "ExactCount");
  EXPECT_EQ(plan->requests[0].exactly->count, 2);
  EXPECT_EQ(Strings(plan->mappings),
            std::vector<std::string>{"main/example.com/gpu/container-0-request-1"});

  ResourceClaim c = NewExtendedResourceClaim(p, plan->requests);
  EXPECT_TRUE(IsExtendedResourceClaim(c));
  EXPECT_EQ(c.metadata.generate_name, "classic-extended-resources-");
  ASSERT_EQ(c.metadata.owner_references.size(), 1u);
  EXPECT_EQ(c.metadata.owner_references[0].uid, "u1");
  EXPECT_EQ(c.metadata.owner_references[0].controller, std::optional<bool>(true));
  std::string json = Encode(c);
  EXPECT_NE(json.find(R"("resource.kubernetes.io/extended-resource-claim":"true")"),
            std::string::npos)
      << json;
}

TEST(ExtendedResourceTest, InitContainerReusesLongLivedDevices) {
  Pod p = MustPod(
      R"({"metadata":{"name":"p"},"spec":{"initContainers":[)"
      R"({"name":"init0","resources":{"requests":{"example.com/gpu":"2"}}},)"
      R"({"name":"side1","restartPolicy":"Always","resources":{"requests":{"example.com/gpu":"1"}}}],)"
      R"("containers":[{"name":"c2","resources":{"requests":{"cpu":"1","example.com/gpu":"1"}}},)"
      R"({"name":"c3"}]}})");
  auto plan = PlanExtendedResources(p, {{"example.com/gpu", "gpu"}}, nullptr);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->requests.size(), 2u);
  EXPECT_EQ(plan->requests[0].name, "container-1-request-0");
  EXPECT_EQ(plan->requests[1].name, "container-2-request-1");
  EXPECT_EQ(Strings(plan->mappings),
            (std::vector<std::string>{"side1/example.com/gpu/container-1-request-0",
                                      "c2/example.com/gpu/container-2-request-1",
                                      "init0/example.com/gpu/container-1-request-0",
                                      "init0/example.com/gpu/container-2-request-1"}));
}

TEST(ExtendedResourceTest, InitContainersShareTheLargestRequest) {
  Pod p =
      MustPod(R"({"metadata":{"name":"p"},"spec":{"initContainers":[)"
              R"({"name":"init0","resources":{"requests":{"example.com/gpu":"3"}}},)"
              R"({"name":"init1","resources":{"requests":{"example.com/gpu":"5"}}}],)"
              R"("containers":[{"name":"c2","resources":{"requests":{"example.com/gpu":"1"}}}]}})");
  auto plan = PlanExtendedResources(p, {{"example.com/gpu", "gpu"}}, nullptr);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->requests.size(), 2u);
  EXPECT_EQ(plan->requests[0].name, "container-1-request-0");
  EXPECT_EQ(plan->requests[0].exactly->count, 4);  // 5 minus the 1 reused from c2
  EXPECT_EQ(plan->requests[1].name, "container-2-request-0");
  EXPECT_EQ(plan->requests[1].exactly->count, 1);
  EXPECT_EQ(Strings(plan->mappings),
            (std::vector<std::string>{"c2/example.com/gpu/container-2-request-0",
                                      "init0/example.com/gpu/container-2-request-0",
                                      "init0/example.com/gpu/container-1-request-0",
                                      "init1/example.com/gpu/container-2-request-0",
                                      "init1/example.com/gpu/container-1-request-0"}));
}

TEST(ExtendedResourceTest, NodeDevicePluginAndUnknownResources) {
  Pod p = MustPod(
      R"({"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","resources":{"requests":)"
      R"({"example.com/gpu":"1","example.com/fpga":"1"}}}]}})");
  ExtendedResourceClasses classes = {{"example.com/gpu", "gpu"}};
  ResourceList node = {{"example.com/gpu", Quantity::FromInt64(4)}};
  // gpu from the device plugin, fpga neither offered nor served.
  auto plan = PlanExtendedResources(p, classes, &node);
  EXPECT_FALSE(plan.ok());
  EXPECT_NE(plan.status().message().find("example.com/fpga"), std::string::npos);
  node["example.com/fpga"] = Quantity::FromInt64(1);
  plan = PlanExtendedResources(p, classes, &node);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(plan->empty());
  node["example.com/gpu"] = Quantity::FromInt64(0);  // advertised, none left for the plugin
  plan = PlanExtendedResources(p, classes, &node);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->requests.size(), 1u);
  EXPECT_EQ(plan->requests[0].name, "container-0-request-1");  // fpga < gpu
}

TEST(ExtendedResourceTest, PodStatusRoundTrip) {
  Pod p = MustPod(
      R"({"metadata":{"name":"p"},"status":{"phase":"Running","extendedResourceClaimStatus":)"
      R"({"requestMappings":[{"containerName":"c","resourceName":"example.com/gpu",)"
      R"("requestName":"container-0-request-0"}],"resourceClaimName":"p-extended-resources-abcde"}}})");
  EXPECT_EQ(ExtendedResourceClaimName(p), "p-extended-resources-abcde");
  ASSERT_EQ(p.status.extended_resource_claim_status->request_mappings.size(), 1u);
  EXPECT_EQ(p.status.extended_resource_claim_status->request_mappings[0].request_name,
            "container-0-request-0");
  std::string out = Encode(p);
  EXPECT_NE(out.find(R"("resourceClaimName":"p-extended-resources-abcde")"), std::string::npos)
      << out;
  EXPECT_EQ(ExtendedResourceClaimName(Pod{}), "");
}

}  // namespace
}  // namespace draco::api
