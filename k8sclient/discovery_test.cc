#include "k8sclient/discovery.h"

#include <gtest/gtest.h>

#include "k8sclient/testing/fake_discovery_client.h"

namespace draco::k8s {
namespace {

using testing::FakeDiscoveryClient;

// What a Kubernetes 1.34 API server answers (trimmed): resource.k8s.io serves v1 without
// devicetaintrules (alpha, v1alpha3 only when enabled); MutatingAdmissionPolicy is not served.
FakeDiscoveryClient Server134() {
  FakeDiscoveryClient c;
  c.paths["/version"] = R"({"major":"1","minor":"34+","gitVersion":"v1.34.4"})";
  c.paths["/apis"] = R"({"kind":"APIGroupList","groups":[
    {"name":"resource.k8s.io","versions":[{"groupVersion":"resource.k8s.io/v1","version":"v1"},
      {"groupVersion":"resource.k8s.io/v1beta2","version":"v1beta2"},
      {"groupVersion":"resource.k8s.io/v1beta1","version":"v1beta1"}],
     "preferredVersion":{"groupVersion":"resource.k8s.io/v1","version":"v1"}},
    {"name":"admissionregistration.k8s.io","versions":[
      {"groupVersion":"admissionregistration.k8s.io/v1","version":"v1"}],
     "preferredVersion":{"groupVersion":"admissionregistration.k8s.io/v1","version":"v1"}}]})";
  c.paths["/apis/resource.k8s.io/v1"] = R"({"kind":"APIResourceList","resources":[
    {"name":"deviceclasses"},{"name":"resourceclaims"},{"name":"resourceclaims/status"},
    {"name":"resourceclaimtemplates"},{"name":"resourceslices"}]})";
  c.paths["/apis/admissionregistration.k8s.io/v1"] = R"({"resources":[
    {"name":"mutatingwebhookconfigurations"},{"name":"validatingadmissionpolicies"}]})";
  return c;
}

TEST(DiscoveryTest, VersionAndServedResources) {
  FakeDiscoveryClient c = Server134();
  Discovery d(c);
  StatusOr<ServerVersion> v = d.Version();
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->major, 1);
  EXPECT_EQ(v->minor, 34);
  EXPECT_EQ(v->git_version, "v1.34.4");
  EXPECT_EQ(*d.GroupVersions("resource.k8s.io"),
            (std::vector<std::string>{"v1", "v1beta2", "v1beta1"}));
  EXPECT_TRUE(d.GroupVersions("nothing.example.com")->empty());
  EXPECT_TRUE(*d.Serves({"resource.k8s.io", "v1", "resourceclaims"}));
  EXPECT_TRUE(*d.Serves({"resource.k8s.io", "v1", "resourceclaims/status"}));
  EXPECT_FALSE(*d.Serves({"resource.k8s.io", "v1", "devicetaintrules"}));
  EXPECT_FALSE(*d.Serves({"resource.k8s.io", "v1alpha3", "devicetaintrules"}));
  auto map = d.FirstServed("admissionregistration.k8s.io", "mutatingadmissionpolicies",
                           {"v1", "v1beta1", "v1alpha1"});
  ASSERT_TRUE(map.ok());
  EXPECT_FALSE(map->has_value());
  auto slices = d.FirstServed("resource.k8s.io", "resourceslices", {"v1", "v1beta2"});
  EXPECT_EQ(slices->value_or(""), "v1");
  // Each document is fetched once.
  EXPECT_EQ(c.gets["/apis"], 1);
  EXPECT_EQ(c.gets["/apis/resource.k8s.io/v1"], 1);
  EXPECT_TRUE(*d.Serves({"", "v1", "pods"}) == false);  // /api/v1 not in this fake
}

TEST(DiscoveryTest, ErrorsAreReportedNotGuessed) {
  FakeDiscoveryClient c;
  Discovery d(c);
  EXPECT_FALSE(d.Version().ok());
  EXPECT_FALSE(d.GroupVersions("resource.k8s.io").ok());
  EXPECT_FALSE(ParseServerVersion("{").ok());
  EXPECT_FALSE(ParseServerVersion(R"({"major":"one","minor":"x"})").ok());
  EXPECT_FALSE(ParseApiGroupList("[]").ok());
  EXPECT_TRUE(ParseApiResourceList(R"({"resources":"not a list"})")->empty());
}

}  // namespace
}  // namespace draco::k8s
