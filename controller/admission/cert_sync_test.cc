#include "controller/admission/cert_sync.h"

#include <map>
#include <memory>
#include <string>

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/pointer.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "controller/admission/testing_fake_api.h"
#include "k8sclient/api_error.h"
#include "k8sclient/config.h"

namespace draco::admission {
namespace {

using std::chrono::hours;
using testing::FakeApi;

CertSyncOptions Options() {
  CertSyncOptions o;
  o.secret_namespace = "draco";
  o.secret_name = "draco-webhook-tls";
  o.webhook_config_name = "draco-gate";
  o.hosts = {"draco-webhook.draco.svc", "127.0.0.1"};
  o.validity = hours(30);
  return o;
}

int CertCount(const std::string& bundle) {
  int n = 0;
  for (size_t p = 0; (p = bundle.find("BEGIN CERTIFICATE", p)) != std::string::npos; ++p) ++n;
  return n;
}

class CertSyncTest : public ::testing::Test {
 protected:
  // Late 2026, so the certificates have realistic dates.
  FakeClock clock_{Clock::TimePoint(hours(24 * 365 * 57))};
  FakeApi api_;
};

TEST_F(CertSyncTest, CreatesTheSecretAndSetsTheCaBundleOfEveryWebhook) {
  api_.AddWebhookConfig(2);
  CertSync sync(api_, clock_, Options());
  auto pki = sync.Sync();
  ASSERT_TRUE(pki.ok()) << pki.status().ToString();
  EXPECT_EQ(CertCount(pki->ca_bundle), 1);
  EXPECT_TRUE(CertMatches(pki->serving.cert_pem, pki->ca_bundle, Options().hosts));
  EXPECT_EQ(api_.CaBundles(), (std::vector<std::string>{pki->ca_bundle, pki->ca_bundle}));
  ASSERT_TRUE(api_.objects.count("secrets/draco/draco-webhook-tls"));

  // A second pass and a second replica change nothing and serve the same pair.
  int writes = api_.writes;
  CertSync replica(api_, clock_, Options());
  auto again = sync.Sync();
  auto other = replica.Sync();
  ASSERT_TRUE(again.ok() && other.ok());
  EXPECT_EQ(again->serving.cert_pem, pki->serving.cert_pem);
  EXPECT_EQ(other->serving.cert_pem, pki->serving.cert_pem);
  EXPECT_EQ(other->ca_bundle, pki->ca_bundle);
  EXPECT_EQ(api_.writes, writes);
}

TEST_F(CertSyncTest, RotatesTheCaKeepingTheOldOneTrustedUntilItExpires) {
  api_.AddWebhookConfig(1);
  CertSync sync(api_, clock_, Options());
  auto first = sync.Sync();
  ASSERT_TRUE(first.ok());
  clock_.Step(hours(15));  // 16 h of a 31 h lifetime: not due yet
  auto same = sync.Sync();
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(same->ca_bundle, first->ca_bundle);

  clock_.Step(hours(6));  // 22 h: in the last third
  auto rotated = sync.Sync();
  ASSERT_TRUE(rotated.ok()) << rotated.status().ToString();
  EXPECT_EQ(CertCount(rotated->ca_bundle), 2);
  EXPECT_EQ(rotated->ca_bundle.substr(rotated->ca_bundle.size() - first->ca_bundle.size()),
            first->ca_bundle)
      << "the old CA stays in the bundle";
  EXPECT_NE(rotated->serving.cert_pem, first->serving.cert_pem);
  EXPECT_TRUE(
      CertMatches(rotated->serving.cert_pem, FirstCert(rotated->ca_bundle), Options().hosts));
  EXPECT_FALSE(CertMatches(rotated->serving.cert_pem, first->ca_bundle, Options().hosts));
  EXPECT_EQ(api_.CaBundles(), std::vector<std::string>{rotated->ca_bundle});

  clock_.Step(hours(10));  // the first CA has expired
  auto pruned = sync.Sync();
  ASSERT_TRUE(pruned.ok());
  EXPECT_EQ(CertCount(pruned->ca_bundle), 1);
  EXPECT_EQ(pruned->ca_bundle, FirstCert(rotated->ca_bundle));
  EXPECT_EQ(api_.CaBundles(), std::vector<std::string>{pruned->ca_bundle});
}

TEST_F(CertSyncTest, ReissuesTheServingCertificateWhenTheHostsChange) {
  api_.AddWebhookConfig(1);
  auto first = CertSync(api_, clock_, Options()).Sync();
  ASSERT_TRUE(first.ok());
  CertSyncOptions o = Options();
  o.hosts.push_back("10.1.2.3");
  auto second = CertSync(api_, clock_, o).Sync();
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->ca_bundle, first->ca_bundle) << "same CA";
  EXPECT_TRUE(CertMatches(second->serving.cert_pem, second->ca_bundle, o.hosts));
}

TEST_F(CertSyncTest, RepairsAnUnusableSecret) {
  api_.AddWebhookConfig(1);
  rapidjson::Document d;
  d.Parse(
      R"({"metadata":{"name":"draco-webhook-tls","namespace":"draco"},"data":{"ca.crt":"Zm9v"}})");
  api_.Store("secrets/draco/draco-webhook-tls", d);
  auto pki = CertSync(api_, clock_, Options()).Sync();
  ASSERT_TRUE(pki.ok()) << pki.status().ToString();
  EXPECT_TRUE(CertMatches(pki->serving.cert_pem, pki->ca_bundle, Options().hosts));
}

TEST_F(CertSyncTest, ErrorsAreReportedAndTheNextPassRecovers) {
  CertSync sync(api_, clock_, Options());
  auto missing = sync.Sync();
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("MutatingWebhookConfiguration draco-gate"),
            std::string::npos)
      << missing.status().ToString();
  api_.AddWebhookConfig(1);
  auto pki = sync.Sync();
  ASSERT_TRUE(pki.ok()) << pki.status().ToString();
  EXPECT_EQ(api_.CaBundles(), std::vector<std::string>{pki->ca_bundle});

  CertSyncOptions none = Options();
  none.hosts.clear();
  EXPECT_FALSE(CertSync(api_, clock_, none).Sync().ok());
}

}  // namespace
}  // namespace draco::admission
