#include "controller/run/server_profile.h"

#include <map>

#include <gtest/gtest.h>

#include "k8sclient/testing/fake_discovery_client.h"

namespace draco::run {
namespace {

// Discovery documents of a 1.34 and a 1.37 server (trimmed to what draco reads).
using FakeServer = k8s::testing::FakeDiscoveryClient;

FakeServer Server(int minor, bool taint_rules, const char* map_version) {
  FakeServer s;
  s.paths["/version"] = R"({"major":"1","minor":")" + std::to_string(minor) +
                        R"(","gitVersion":"v1.)" + std::to_string(minor) + R"(.0"})";
  std::string adm = map_version ? std::string(R"({"version":")") + map_version + "\"}," : "";
  s.paths["/apis"] = R"({"groups":[{"name":"resource.k8s.io","versions":[{"version":"v1"}]},)"
                     R"({"name":"admissionregistration.k8s.io","versions":[)" +
                     adm + R"({"version":"v1"}]}]})";
  s.paths["/apis/resource.k8s.io/v1"] =
      std::string(R"({"resources":[{"name":"resourceclaims"},{"name":"resourceslices"})") +
      (taint_rules ? R"(,{"name":"devicetaintrules"})" : "") + "]}";
  s.paths["/apis/admissionregistration.k8s.io/v1"] =
      map_version && std::string(map_version) == "v1"
          ? R"({"resources":[{"name":"mutatingadmissionpolicies"}]})"
          : R"({"resources":[{"name":"mutatingwebhookconfigurations"}]})";
  if (map_version && std::string(map_version) == "v1beta1") {
    s.paths["/apis/admissionregistration.k8s.io/v1beta1"] =
        R"({"resources":[{"name":"mutatingadmissionpolicies"}]})";
  }
  return s;
}

TEST(ServerProfileTest, Kubernetes134) {
  FakeServer s = Server(34, false, nullptr);
  k8s::Discovery d(s);
  auto p = DiscoverServer(d, "");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->version.minor, 34);
  EXPECT_FALSE(p->device_taint_rules);
  EXPECT_EQ(p->mutating_admission_policy_version, "");
  EXPECT_FALSE(p->features.partitionable_devices);
  EXPECT_FALSE(p->features.consumable_capacity);
  EXPECT_TRUE(p->features.prioritized_list);
  EXPECT_NE(p->Summary().find("MutatingAdmissionPolicy not served"), std::string::npos);
}

TEST(ServerProfileTest, Kubernetes135WithBetaPolicyAndGates) {
  FakeServer s = Server(35, false, "v1beta1");
  k8s::Discovery d(s);
  auto p = DiscoverServer(d, "DRAPartitionableDevices=true");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->mutating_admission_policy_version, "v1beta1");
  EXPECT_TRUE(p->features.partitionable_devices);
}

TEST(ServerProfileTest, Kubernetes137) {
  FakeServer s = Server(37, true, "v1");
  k8s::Discovery d(s);
  auto p = DiscoverServer(d, "");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_TRUE(p->device_taint_rules);
  EXPECT_EQ(p->mutating_admission_policy_version, "v1");
  EXPECT_TRUE(p->features.device_taint_rules);
  // A gate locked in 1.37 cannot be turned off.
  k8s::Discovery d2(s);
  EXPECT_FALSE(DiscoverServer(d2, "DRAPrioritizedList=false").ok());
}

TEST(ServerProfileTest, PodGroupsAreDiscovered) {
  FakeServer s = Server(37, true, "v1");
  k8s::Discovery d(s);
  auto p = DiscoverServer(d, "DRAWorkloadResourceClaims=true");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_FALSE(p->pod_groups);
  EXPECT_TRUE(p->features.workload_resource_claims);
  EXPECT_NE(p->Summary().find("PodGroups not served"), std::string::npos) << p->Summary();

  s.paths["/apis"] = R"({"groups":[{"name":"resource.k8s.io","versions":[{"version":"v1"}]},)"
                     R"({"name":"scheduling.k8s.io","versions":[{"version":"v1"},)"
                     R"({"version":"v1beta1"}]}]})";
  s.paths["/apis/scheduling.k8s.io/v1beta1"] =
      R"({"resources":[{"name":"podgroups"},{"name":"podgroups/status"}]})";
  k8s::Discovery d2(s);
  p = DiscoverServer(d2, "");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_TRUE(p->pod_groups);
  EXPECT_FALSE(p->features.workload_resource_claims);  // beta, off by default in 1.37
  EXPECT_NE(p->Summary().find("PodGroups served"), std::string::npos) << p->Summary();
}

TEST(ServerProfileTest, ServerWithoutDraV1IsRefused) {
  FakeServer s = Server(33, false, nullptr);
  s.paths["/apis/resource.k8s.io/v1"] = R"({"resources":[]})";
  k8s::Discovery d(s);
  auto p = DiscoverServer(d, "");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("1.34 or newer"), std::string::npos) << p.status();
}

}  // namespace
}  // namespace draco::run
