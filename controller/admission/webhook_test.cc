#include "controller/admission/webhook.h"

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
  EXPECT_EQ(*ParseDurationFlag("90s"), std::chrono::seconds(90));
  EXPECT_EQ(*ParseDurationFlag("8760h"), hours(8760));
}

}  // namespace
}  // namespace draco::admission
