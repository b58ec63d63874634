#include "controller/admission/certs.h"

#include <gtest/gtest.h>

namespace draco::admission {
namespace {

using std::chrono::hours;

const WallTime kNow = std::chrono::system_clock::from_time_t(1798000000);  // Dec 2026
const std::vector<std::string> kHosts = {"draco-webhook.draco.svc", "127.0.0.1"};

TEST(CertsTest, CaSignsAServingCertificateForTheHosts) {
  auto ca = GenerateCa("test-ca", hours(24 * 30), kNow);
  ASSERT_TRUE(ca.ok()) << ca.status().ToString();
  EXPECT_TRUE(IsUsableCa(*ca));
  auto serving = IssueServingCert(*ca, kHosts, hours(24 * 7), kNow);
  ASSERT_TRUE(serving.ok()) << serving.status().ToString();
  EXPECT_FALSE(IsUsableCa(*serving)) << "a serving certificate is not a CA";
  EXPECT_TRUE(CertMatches(serving->cert_pem, ca->cert_pem, kHosts));
  EXPECT_TRUE(CertMatches(serving->cert_pem, ca->cert_pem, {"127.0.0.1"}));
  EXPECT_FALSE(CertMatches(serving->cert_pem, ca->cert_pem, {"other.draco.svc"}));
  EXPECT_FALSE(CertMatches(serving->cert_pem, ca->cert_pem, {"10.0.0.1"}));
  auto other = GenerateCa("other-ca", hours(24), kNow);
  ASSERT_TRUE(other.ok());
  EXPECT_FALSE(CertMatches(serving->cert_pem, other->cert_pem, kHosts));
  EXPECT_FALSE(IsUsableCa({ca->cert_pem, other->key_pem})) << "key of another CA";

  auto v = CertValidity(serving->cert_pem);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->not_after, kNow + hours(24 * 7));
  EXPECT_EQ(v->not_before, kNow - hours(1));
}

TEST(CertsTest, ServingCertificateNeverOutlivesItsCa) {
  auto ca = GenerateCa("ca", hours(10), kNow);
  ASSERT_TRUE(ca.ok());
  auto serving = IssueServingCert(*ca, kHosts, hours(1000), kNow);
  ASSERT_TRUE(serving.ok());
  EXPECT_EQ(CertValidity(serving->cert_pem)->not_after, kNow + hours(10));
}

TEST(CertsTest, RotationIsDueInTheLastThirdOfTheLifetime) {
  auto ca = GenerateCa("ca", hours(29), kNow);  // lifetime 30 h with the hour of skew
  ASSERT_TRUE(ca.ok());
  EXPECT_FALSE(NeedsRotation(ca->cert_pem, kNow));
  EXPECT_FALSE(NeedsRotation(ca->cert_pem, kNow + hours(18)));
  EXPECT_TRUE(NeedsRotation(ca->cert_pem, kNow + hours(19)));
  EXPECT_TRUE(NeedsRotation(ca->cert_pem, kNow + hours(40)));
  EXPECT_TRUE(NeedsRotation("garbage", kNow));
}

TEST(CertsTest, DropExpiredKeepsOnlyValidCertificatesInOrder) {
  auto young = GenerateCa("young", hours(100), kNow);
  auto old = GenerateCa("old", hours(10), kNow);
  ASSERT_TRUE(young.ok() && old.ok());
  std::string bundle = young->cert_pem + old->cert_pem;
  EXPECT_EQ(DropExpired(bundle, kNow), bundle);
  EXPECT_EQ(DropExpired(bundle, kNow + hours(11)), young->cert_pem);
  EXPECT_EQ(DropExpired(bundle, kNow + hours(101)), "");
  EXPECT_EQ(FirstCert(bundle), young->cert_pem);
  EXPECT_EQ(FirstCert("none"), "");
}

TEST(CertsTest, BadInputIsAnError) {
  EXPECT_FALSE(IssueServingCert({"x", "y"}, kHosts, hours(1), kNow).ok());
  auto ca = GenerateCa("ca", hours(1), kNow);
  ASSERT_TRUE(ca.ok());
  EXPECT_FALSE(IssueServingCert(*ca, {}, hours(1), kNow).ok());
  EXPECT_FALSE(CertValidity("nope").ok());
  EXPECT_EQ(Base64Encode("draco"), "ZHJhY28=");
  EXPECT_EQ(Base64Encode(""), "");
}

}  // namespace
}  // namespace draco::admission
