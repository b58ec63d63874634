#include "controller/admission/webhook.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "controller/admission/testing_fake_api.h"
#include "controller/admission/webhook_flags.h"

namespace draco::admission {
namespace {

using std::chrono::hours;

const char kReview[] =
    R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u-1",)"
    R"("kind":{"group":"","version":"v1","kind":"Pod"},"operation":"CREATE","namespace":"ml",)"
    R"("object":{"metadata":{"name":"p"},"spec":{"containers":[{"name":"c"}],)"
    R"("resourceClaims":[{"name":"g","resourceClaimName":"c"}]}}}})";

WebhookOptions Options() {
  WebhookOptions o;
  o.bind_address = "127.0.0.1:0";
  o.certs.secret_namespace = "draco";
  o.certs.secret_name = "draco-webhook-tls";
  o.certs.webhook_config_name = "draco-gate";
  o.certs.hosts = {"draco-webhook.draco.svc", "127.0.0.1"};
  return o;
}

// Up to 15 s: a failed certificate sync is retried after 5 s, so a 5 s window raced it.
bool Eventually(const std::function<bool()>& f) {
  for (int i = 0; i < 600; ++i) {
    if (f()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  return false;
}

TEST(WebhookTest, ServesTheGateOnceTheCertificateIsSyncedAndTrusted) {
  testing::FakeApi api;
  auto w = Webhook::Start(api, RealClock::Get(), Options());
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  // No MutatingWebhookConfiguration yet: the sync fails and the webhook is not ready.
  ASSERT_TRUE(Eventually([&] {
    return (*w)->Ready().message().find("draco-gate") != std::string::npos;
  })) << (*w)->Ready().ToString();
  api.AddWebhookConfig(1);
  ASSERT_TRUE(Eventually([&] { return (*w)->Ready().ok(); })) << (*w)->Ready().ToString();

  std::string bundle = api.CaBundles().at(0);
  auto r = TlsRequest("127.0.0.1", (*w)->port(), bundle, "draco-webhook.draco.svc", "POST",
                      "/mutate", kReview);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->code, 200);
  rapidjson::Document d;
  d.Parse(r->body.c_str());
  ASSERT_FALSE(d.HasParseError()) << r->body;
  EXPECT_STREQ(d["response"]["uid"].GetString(), "u-1");
  EXPECT_STREQ(d["response"]["patchType"].GetString(), "JSONPatch");

  auto bad = TlsRequest("127.0.0.1", (*w)->port(), bundle, "127.0.0.1", "POST", "/mutate", "{}");
  ASSERT_TRUE(bad.ok());
  EXPECT_EQ(bad->code, 400);
  auto get = TlsRequest("127.0.0.1", (*w)->port(), bundle, "127.0.0.1", "GET", "/mutate");
  ASSERT_TRUE(get.ok());
  EXPECT_EQ(get->code, 405);
  auto other = TlsRequest("127.0.0.1", (*w)->port(), bundle, "127.0.0.1", "POST", "/x", "{}");
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(other->code, 404);
}

// A re-apply of the chart (Argo CD, Flux, helm template | kubectl apply) replaces the
// configuration with one that has no caBundle; the watch restores it long before the next resync.
TEST(WebhookTest, RestoresABlankedCaBundleAtOnce) {
  testing::FakeApi api;
  api.AddWebhookConfig(2);
  WebhookOptions o = Options();
  o.resync = hours(1);  // only the watch can bring the bundle back within the test
  auto w = Webhook::Start(api, RealClock::Get(), o);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_TRUE(Eventually([&] { return (*w)->Ready().ok(); })) << (*w)->Ready().ToString();
  const std::string bundle = api.CaBundles().at(0);
  ASSERT_FALSE(bundle.empty());

  for (int sync = 0; sync < 2; ++sync) {
    api.Replace(testing::FakeApi::Key(kMutatingWebhookConfigurations, "", "draco-gate"),
                R"({"metadata":{"name":"draco-gate"},"webhooks":[)"
                R"({"name":"h0.draco.dev","clientConfig":{"service":{"name":"s"}}},)"
                R"({"name":"h1.draco.dev","clientConfig":{"service":{"name":"s"}}}]})");
    ASSERT_EQ(api.CaBundles(), (std::vector<std::string>{"", ""}));
    auto blanked = std::chrono::steady_clock::now();
    ASSERT_TRUE(Eventually([&] {
      return api.CaBundles() == std::vector<std::string>{bundle, bundle};
    })) << "sync "
        << sync << ": the caBundle stayed blank";
    EXPECT_LT(std::chrono::steady_clock::now() - blanked, std::chrono::seconds(5));
  }
  int writes = api.writes;
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  EXPECT_EQ(api.writes, writes) << "draco's own patch must not make it patch again";
  EXPECT_TRUE((*w)->Ready().ok());
}

// cert-manager mode: the certificate comes from files; draco writes nothing, watches nothing,
// and picks up a renewal (new files) at the next resync.
TEST(WebhookTest, ServesAMountedCertificateAndWritesNothing) {
  testing::FakeApi api;
  api.AddWebhookConfig(1);
  char tmpl[] = "/tmp/draco-webhook-certs-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  auto write_pki = [&](const std::string& name) {
    auto now = std::chrono::system_clock::now();
    auto ca = GenerateCa(name, hours(24), now);
    EXPECT_TRUE(ca.ok());
    auto serving = IssueServingCert(*ca, Options().certs.hosts, hours(24), now);
    EXPECT_TRUE(serving.ok());
    for (auto [file, text] :
         {std::pair{"tls.crt", serving->cert_pem}, std::pair{"tls.key", serving->key_pem},
          std::pair{"ca.crt", ca->cert_pem}}) {
      std::ofstream(dir + "/" + file) << text;
    }
    return ca->cert_pem;
  };
  WebhookOptions o = Options();
  o.certs.webhook_config_name.clear();
  o.cert_dir = dir;
  o.resync = std::chrono::seconds(1);
  auto w = Webhook::Start(api, RealClock::Get(), o);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  // No files yet: not ready, and the reason names the file.
  ASSERT_TRUE(Eventually([&] {
    return (*w)->Ready().message().find("tls.crt") != std::string::npos;
  })) << (*w)->Ready().ToString();
  std::string ca1 = write_pki("issuer-1");
  ASSERT_TRUE(Eventually([&] { return (*w)->Ready().ok(); })) << (*w)->Ready().ToString();
  auto r = TlsRequest("127.0.0.1", (*w)->port(), ca1, "draco-webhook.draco.svc", "POST", "/mutate",
                      kReview);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->code, 200);

  std::string ca2 = write_pki("issuer-2");  // renewed, with a new CA
  ASSERT_TRUE(Eventually([&] {
    auto again = TlsRequest("127.0.0.1", (*w)->port(), ca2, "draco-webhook.draco.svc", "GET",
                            "/healthz", "");
    return again.ok() && again->code == 200;
  })) << "the renewed certificate was not installed";
  EXPECT_EQ(api.CaBundles(), (std::vector<std::string>{""}));
  EXPECT_EQ(api.writes, 1) << "only the test's own configuration";
  EXPECT_EQ(api.watches, 0);
  w->reset();
  std::filesystem::remove_all(dir);
}

TEST(WebhookFlagsTest, ParsesAndValidates) {
  WebhookFlags f;
  EXPECT_TRUE(IsWebhookFlag("webhook-cert-hosts"));
  EXPECT_FALSE(IsWebhookFlag("webhook-port"));
  ASSERT_TRUE(SetWebhookFlag("webhook-bind-address", "10.0.0.7:9443", f).ok());
  ASSERT_TRUE(SetWebhookFlag("webhook-cert-secret", "ns/s", f).ok());
  ASSERT_TRUE(SetWebhookFlag("webhook-config-name", "gate", f).ok());
  ASSERT_TRUE(SetWebhookFlag("webhook-cert-validity", "30m", f).ok());
  EXPECT_EQ(f.cert_validity, std::chrono::minutes(30));
  EXPECT_FALSE(ToWebhookOptions(f, "x").ok()) << "hosts are required";
  ASSERT_TRUE(SetWebhookFlag("webhook-cert-hosts", "a.ns.svc,,10.0.0.7", f).ok());
  auto o = ToWebhookOptions(f, "x");
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(o->certs.secret_namespace, "ns");
  EXPECT_EQ(o->certs.secret_name, "s");
  EXPECT_EQ(o->certs.hosts, (std::vector<std::string>{"a.ns.svc", "10.0.0.7"}));
  EXPECT_EQ(o->resync, std::chrono::seconds(60)) << "at most a minute";
  ASSERT_TRUE(SetWebhookFlag("webhook-cert-validity", "3m", f).ok());
  EXPECT_EQ(ToWebhookOptions(f, "x")->resync, std::chrono::seconds(30))
      << "a sixth of a short lifetime, well inside the rotation window";
  ASSERT_TRUE(SetWebhookFlag("webhook-cert-secret", "plain", f).ok());
  EXPECT_EQ(ToWebhookOptions(f, "lease-ns")->certs.secret_namespace, "lease-ns");

  EXPECT_FALSE(SetWebhookFlag("webhook-cert-validity", "2m", f).ok());
  EXPECT_FALSE(SetWebhookFlag("webhook-cert-validity", "10d", f).ok());
  EXPECT_FALSE(SetWebhookFlag("webhook-cert-validity", "h", f).ok());
  EXPECT_FALSE(SetWebhookFlag("webhook-cert-secret", "ns/", f).ok());

  // A mounted certificate (cert-manager) excludes draco keeping the caBundle.
  EXPECT_TRUE(IsWebhookFlag("webhook-cert-dir"));
  ASSERT_TRUE(SetWebhookFlag("webhook-cert-dir", "/etc/draco/webhook-tls", f).ok());
  EXPECT_FALSE(ToWebhookOptions(f, "x").ok()) << "--webhook-config-name is set too";
  f.config_name.clear();
  ASSERT_TRUE(ToWebhookOptions(f, "x").ok());
  EXPECT_EQ(ToWebhookOptions(f, "x")->cert_dir, "/etc/draco/webhook-tls");
  EXPECT_FALSE(SetWebhookFlag("webhook-cert-dir", "", f).ok());
  EXPECT_EQ(*ParseDurationFlag("90s"), std::chrono::seconds(90));
  EXPECT_EQ(*ParseDurationFlag("8760h"), hours(8760));
}

}  // namespace
}  // namespace draco::admission
