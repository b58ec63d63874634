#include "k8sclient/tls_trust.h"

#include <array>
#include <cstdio>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <openssl/x509.h>

namespace draco::k8s {
namespace {

// Two self-signed certificates (P-256, valid for 100 years), made for this test only.
constexpr const char* kCertA = R"(-----BEGIN CERTIFICATE-----
MIIBmjCCAT+gAwIBAgIUcdlYhboYzUP1oRS9eMHjBpKUp+QwCgYIKoZIzj0EAwIw
ITEfMB0GA1UEAwwWZHJhY28tdGxzLXRydXN0LXRlc3QtYTAgFw0yNjEyMDYxODI2
NThaGA8yMTI2MTExMjE4MjY1OFowITEfMB0GA1UEAwwWZHJhY28tdGxzLXRydXN0
LXRlc3QtYTBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABN/0UAhcIXUPaYrEagTe
kD96mESYLrs0EQQQw0BcDHjbeiSHArqJ8RgLpKPwQ5ISTlkX4IJnQ/P5gZeoSxf+
CJqjUzBRMB0GA1UdDgQWBBRhqsmW3vw1uTwvy9Cmpbw0Wjwc0jAfBgNVHSMEGDAW
gBRhqsmW3vw1uTwvy9Cmpbw0Wjwc0jAPBgNVHRMBAf8EBTADAQH/MAoGCCqGSM49
BAMCA0kAMEYCIQCVdonfi8lCDSW5G/vS/t80uFEM1xZNKEvur6xXsPJLoAIhAPj8
C80/Ol/iIEpJPLaZCeALg28zbsizmphVch1Hh3+G
-----END CERTIFICATE-----
)";
constexpr const char* kCertB = R"(-----BEGIN CERTIFICATE-----
MIIBmTCCAT+gAwIBAgIULO3xU5sDZ3Fg6lsMgi0WZ5FPgP4wCgYIKoZIzj0EAwIw
ITEfMB0GA1UEAwwWZHJhY28tdGxzLXRydXN0LXRlc3QtYjAgFw0yNjEyMDYxODI2
NThaGA8yMTI2MTExMjE4MjY1OFowITEfMB0GA1UEAwwWZHJhY28tdGxzLXRydXN0
LXRlc3QtYjBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABPXrD38E5KyavVY5EfGZ
KGr1+rSOcwLpIItUi/vFPN5N5iNuSo+NLNpCBmzq4TTkZZvsWsl6lUCQZI6DiluR
rPqjUzBRMB0GA1UdDgQWBBRAjLioVbxU0UlfXJFWfgnbmKlXkjAfBgNVHSMEGDAW
gBRAjLioVbxU0UlfXJFWfgnbmKlXkjAPBgNVHRMBAf8EBTADAQH/MAoGCCqGSM49
BAMCA0gAMEUCIQDCDhXAZeBgllQMLoTJGTOZDZAvghIXtZI1QWVweCyjegIgJdT6
8+EjeqqWPwiFku8jOas+f/Rd9hRHzLi6RH1PQ/Y=
-----END CERTIFICATE-----
)";

std::set<std::string> Subjects(X509_STORE* store) {
  std::set<std::string> out;
  STACK_OF(X509_OBJECT)* objs = X509_STORE_get0_objects(store);
  for (int i = 0; i < sk_X509_OBJECT_num(objs); ++i) {
    X509* cert = X509_OBJECT_get0_X509(sk_X509_OBJECT_value(objs, i));
    if (cert == nullptr) continue;
    std::array<char, 256> buf{};
    X509_NAME_oneline(X509_get_subject_name(cert), buf.data(), static_cast<int>(buf.size()));
    out.insert(buf.data());
  }
  return out;
}

TEST(TlsTrustTest, ConfiguredCaIsTheOnlyTrust) {
  SystemTrust system;
  system.file = "/nonexistent";  // never read when a CA is configured
  auto store = TrustStoreFor(std::string(kCertA) + kCertB, system);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_EQ(Subjects(store->get()),
            (std::set<std::string>{"/CN=draco-tls-trust-test-a", "/CN=draco-tls-trust-test-b"}));
}

TEST(TlsTrustTest, CaWithoutCertificateFails) {
  auto store = TrustStoreFor("not a certificate", SystemTrust{});
  EXPECT_FALSE(store.ok());
}

TEST(TlsTrustTest, NoCaLoadsTheRecordedSystemBundle) {
  // What UseOwnTrustStores recorded is loaded, whatever SSL_CERT_FILE says now.
  const std::string path = ::testing::TempDir() + "/tls_trust_bundle.pem";
  std::ofstream(path) << kCertB;
  SystemTrust system;
  system.file = path;
  system.dir = "/nonexistent-dir";
  auto store = TrustStoreFor("", system);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_EQ(Subjects(store->get()), std::set<std::string>{"/CN=draco-tls-trust-test-b"});
  std::remove(path.c_str());
}

TEST(TlsTrustTest, MissingSystemBundleGivesAnEmptyStore) {
  SystemTrust system;
  system.file = "/nonexistent/bundle.pem";
  auto store = TrustStoreFor("", system);
  ASSERT_TRUE(store.ok());
  EXPECT_TRUE(Subjects(store->get()).empty());
}

TEST(TlsTrustTest, ChildEnvironmentGetsTheOriginalBundleBack) {
  const std::vector<std::string> env{"PATH=/bin", "SSL_CERT_FILE=/dev/null", "HOME=/root"};
  SystemTrust set_before;
  set_before.redirected = true;
  set_before.env_file = "/etc/my-bundle.pem";
  EXPECT_EQ(
      RestoreTrustEnvironment(env, set_before),
      (std::vector<std::string>{"PATH=/bin", "HOME=/root", "SSL_CERT_FILE=/etc/my-bundle.pem"}));
  SystemTrust unset_before;
  unset_before.redirected = true;
  EXPECT_EQ(RestoreTrustEnvironment(env, unset_before),
            (std::vector<std::string>{"PATH=/bin", "HOME=/root"}));
  SystemTrust untouched;  // UseOwnTrustStores not used: the environment is the user's
  EXPECT_EQ(RestoreTrustEnvironment(env, untouched), env);
}

TEST(TlsTrustTest, SystemTrustNamesOpenSslLocations) {
  // Without UseOwnTrustStores (never called in tests) the recorded trust is the live one.
  const SystemTrust& t = GetSystemTrust();
  EXPECT_FALSE(t.redirected);
  EXPECT_FALSE(t.file.empty());
  EXPECT_FALSE(t.dir.empty());
}

}  // namespace
}  // namespace draco::k8s
