#include "controller/server/secure_metrics.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>
#include <prometheus/counter.h>
#include <prometheus/registry.h>

#include "controller/server/metrics_flags.h"
#include "controller/server/testing_review_api.h"

namespace draco::server {
namespace {

using std::chrono::hours;
using testing::FakeReviewApi;

StatusOr<admission::HttpReply> Get(const SecureMetricsServer& s, const std::string& path,
                                   const std::string& token) {
  return admission::TlsRequest("127.0.0.1", s.port(), s.CertificatePem(), "127.0.0.1", "GET", path,
                               "", 5000,
                               token.empty() ? "" : "Authorization: Bearer " + token + "\r\n");
}

SecureMetricsOptions Opts(const std::string& cert_dir = "") {
  SecureMetricsOptions o;
  o.bind_address = "127.0.0.1:0";
  o.cert_dir = cert_dir;
  return o;
}

class SecureMetricsTest : public ::testing::Test {
 protected:
  SecureMetricsTest() {
    api_.users["allowed"] = {"system:serviceaccount:mon:prometheus", "u1", {}, {}};
    api_.users["denied"] = {"system:serviceaccount:mon:other", "u2", {}, {}};
    api_.allowed.insert("system:serviceaccount:mon:prometheus");
    prometheus::BuildCounter().Name("draco_test_total").Help("t").Register(*registry_).Add({});
  }
  std::vector<Route> Routes() { return {MetricsRoute({registry_})}; }

  FakeClock clock_;
  FakeReviewApi api_;
  std::shared_ptr<prometheus::Registry> registry_ = std::make_shared<prometheus::Registry>();
};

TEST_F(SecureMetricsTest, SelfSignedTlsWithAuthenticationAndAuthorization) {
  auto s = SecureMetricsServer::Start(Opts(), Routes(), api_, clock_);
  ASSERT_TRUE(s.ok()) << s.status();
  auto none = Get(**s, "/metrics", "");
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_EQ(none->code, 401);
  EXPECT_EQ(Get(**s, "/metrics", "forged")->code, 401);
  auto denied = Get(**s, "/metrics", "denied");
  EXPECT_EQ(denied->code, 403);
  EXPECT_NE(denied->body.find("Authorization denied for user system:serviceaccount:mon:other"),
            std::string::npos);
  auto ok = Get(**s, "/metrics", "allowed");
  EXPECT_EQ(ok->code, 200);
  EXPECT_NE(ok->body.find("draco_test_total 0"), std::string::npos) << ok->body;
  EXPECT_EQ(ok->content_type, "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(Get(**s, "/healthz", "allowed")->code, 404);
  // Served for localhost too (the certificate's DNS name).
  auto by_name = admission::TlsRequest("127.0.0.1", (*s)->port(), (*s)->CertificatePem(),
                                       "localhost", "GET", "/metrics");
  ASSERT_TRUE(by_name.ok()) << by_name.status();
  api_.fail_access_reviews = true;
  auto failed = Get(**s, "/metrics", "allowed");  // the allowed decision is cached
  EXPECT_EQ(failed->code, 200);
  EXPECT_EQ(Get(**s, "/metrics", "denied")->code, 403) << "denials are cached for 30 s too";
  clock_.Step(std::chrono::seconds(31));
  EXPECT_EQ(Get(**s, "/metrics", "denied")->code, 500);
}

class CertDirTest : public SecureMetricsTest {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("draco-metrics-certs-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  struct Issued {
    std::string ca;
    std::string leaf;
  };
  Issued Write(const std::string& cn) {
    auto now = std::chrono::system_clock::now();
    auto ca = admission::GenerateCa(cn, hours(24), now);
    auto leaf = admission::IssueServingCert(*ca, {"127.0.0.1"}, hours(24), now);
    std::ofstream(dir_ / "tls.key.tmp") << leaf->key_pem;
    std::ofstream(dir_ / "tls.crt.tmp") << leaf->cert_pem;
    std::filesystem::rename(dir_ / "tls.key.tmp", dir_ / "tls.key");
    std::filesystem::rename(dir_ / "tls.crt.tmp", dir_ / "tls.crt");
    return {ca->cert_pem, leaf->cert_pem};
  }
  std::filesystem::path dir_;
};

TEST_F(CertDirTest, ServesTheDirectorysPairAndReloadsIt) {
  Issued first = Write("first-ca");
  SecureMetricsOptions opts = Opts(dir_.string());
  auto s = SecureMetricsServer::Start(opts, Routes(), api_, clock_);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)->CertificatePem(), first.leaf);
  auto r = admission::TlsRequest("127.0.0.1", (*s)->port(), first.ca, "127.0.0.1", "GET",
                                 "/metrics", "", 5000, "Authorization: Bearer allowed\r\n");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->code, 200);
  Issued second = Write("second-ca");
  for (int i = 0; i < 100 && (*s)->CertificatePem() != second.leaf; ++i) {
    clock_.Step(opts.reload_interval);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ((*s)->CertificatePem(), second.leaf);
  r = admission::TlsRequest("127.0.0.1", (*s)->port(), second.ca, "127.0.0.1", "GET", "/metrics",
                            "", 5000, "Authorization: Bearer allowed\r\n");
  ASSERT_TRUE(r.ok()) << r.status();
  // A broken pair is not installed; the served one stays.
  std::ofstream(dir_ / "tls.key") << "not a key";
  clock_.Step(opts.reload_interval);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ((*s)->CertificatePem(), second.leaf);
}

TEST_F(CertDirTest, MissingPairIsAStartError) {
  auto s = SecureMetricsServer::Start(Opts(dir_.string()), Routes(), api_, clock_);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("tls.crt"), std::string::npos) << s.status();
}

TEST(MetricsServingFlagsTest, ParseAndValidate) {
  MetricsServingFlags f;
  EXPECT_TRUE(IsMetricsServingFlag("metrics-secure"));
  EXPECT_TRUE(IsMetricsServingBoolFlag("metrics-secure"));
  EXPECT_FALSE(IsMetricsServingBoolFlag("metrics-cert-dir"));
  EXPECT_FALSE(IsMetricsServingFlag("metrics-bind-address"));
  ASSERT_TRUE(SetMetricsServingFlag("metrics-secure", "true", f).ok());
  EXPECT_TRUE(f.secure);
  EXPECT_FALSE(SetMetricsServingFlag("metrics-secure", "yes", f).ok());
  EXPECT_FALSE(SetMetricsServingFlag("metrics-cert-dir", "", f).ok());
  ASSERT_TRUE(SetMetricsServingFlag("metrics-cert-dir", "/certs", f).ok());
  EXPECT_EQ(f.cert_dir, "/certs");
  EXPECT_FALSE(ValidateMetricsServing(f, ":8080", ":8080").ok());
  EXPECT_TRUE(ValidateMetricsServing(f, ":8443", ":8081").ok());
  EXPECT_TRUE(ValidateMetricsServing(f, "0", "0").ok());
  f.secure = false;
  EXPECT_TRUE(ValidateMetricsServing(f, ":8080", ":8080").ok());
}

}  // namespace
}  // namespace draco::server
