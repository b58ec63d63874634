// Integration tests of RestClientImpl against the local control plane (label: integration).
#include <atomic>
#include <chrono>
#include <random>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "k8sclient/api_error.h"
#include "k8sclient/config.h"
#include "k8sclient/rest_client_impl.h"
#include "k8sclient/testing/e2e_env.h"

namespace draco::k8s {
namespace {

class RestClientIntegrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto env = testing::LoadE2eEnv();
    if (!env) GTEST_SKIP() << "no control plane: " << testing::E2eDir() << "/env is missing";
    env_ = *env;
    auto cfg = LoadKubeconfig(env_["KUBECONFIG"], "draco-e2e");
    ASSERT_TRUE(cfg.ok()) << cfg.status();
    cfg->qps = 200;
    cfg->burst = 400;
    config_ = *cfg;
    auto c = NewRestClient(config_);
    ASSERT_TRUE(c.ok()) << c.status();
    client_ = std::move(c).value();
    std::random_device rd;
    ns_ = "k8sclient-it-" + std::to_string(rd() % 1000000);
    auto created = client_->Create(kNamespaces, "", R"({"metadata":{"name":")" + ns_ + R"("}})");
    ASSERT_TRUE(created.ok()) << created.status();
  }
  void TearDown() override {
    if (client_ && !ns_.empty()) (void)client_->Delete(kNamespaces, "", ns_);
  }

  std::string ConfigMap(const std::string& name, const std::string& value,
                        const std::string& rv = "") {
    std::string meta = R"("name":")" + name + "\"";
    if (!rv.empty()) meta += R"(,"resourceVersion":")" + rv + "\"";
    return R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{)" + meta + R"(},"data":{"k":")" +
           value + "\"}}";
  }

  std::map<std::string, std::string> env_;
  RestConfig config_;
  std::unique_ptr<RestClient> client_;
  std::string ns_;
};

TEST_F(RestClientIntegrationTest, TokenAuthOverTlsWithServerCa) {
  auto got = client_->Get(kNamespaces, "", "default");
  ASSERT_TRUE(got.ok()) << got.status();
  auto obj = Object::Parse(*got);
  ASSERT_TRUE(obj.ok());
  EXPECT_EQ((*obj)->name(), "default");
}

TEST_F(RestClientIntegrationTest, ClientCertificateAuth) {
  auto cfg = LoadKubeconfig(env_["KUBECONFIG"], "draco-e2e-cert");
  ASSERT_TRUE(cfg.ok()) << cfg.status();
  EXPECT_TRUE(cfg->bearer_token.empty());
  ASSERT_FALSE(cfg->client_cert_pem.empty());
  auto c = NewRestClient(*cfg);
  ASSERT_TRUE(c.ok()) << c.status();
  auto list = (*c)->List(kNamespaces, "");
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_GE(list->items.size(), 1u);
}

TEST_F(RestClientIntegrationTest, WrongCaIsRejected) {
  RestConfig cfg = config_;
  // The client certificate is not the CA that signed the serving certificate.
  auto other = ReadFileToString(env_["DRACO_CLIENT_CERT"]);
  ASSERT_TRUE(other.ok());
  cfg.ca_pem = *other;
  cfg.max_retries = 0;
  auto c = NewRestClient(cfg);
  ASSERT_TRUE(c.ok()) << c.status();
  auto got = (*c)->Get(kNamespaces, "", "default");
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kUnavailable) << got.status();
}

TEST_F(RestClientIntegrationTest, BadTokenIsUnauthorized) {
  RestConfig cfg = config_;
  cfg.bearer_token = "not-a-token";
  auto c = NewRestClient(cfg);
  ASSERT_TRUE(c.ok());
  auto got = (*c)->Get(kNamespaces, "", "default");
  EXPECT_TRUE(IsUnauthorized(got.status())) << got.status();
}

TEST_F(RestClientIntegrationTest, CrudConflictAndTypedErrors) {
  auto created = client_->Create(kConfigMaps, ns_, ConfigMap("cm", "1"));
  ASSERT_TRUE(created.ok()) << created.status();
  auto obj = Object::Parse(*created);
  ASSERT_TRUE(obj.ok());
  const std::string rv1 = (*obj)->resource_version();

  auto again = client_->Create(kConfigMaps, ns_, ConfigMap("cm", "1"));
  EXPECT_TRUE(IsAlreadyExists(again.status())) << again.status();

  auto updated = client_->Update(kConfigMaps, ns_, "cm", ConfigMap("cm", "2", rv1));
  ASSERT_TRUE(updated.ok()) << updated.status();

  // Stale resourceVersion -> 409 Conflict.
  auto stale = client_->Update(kConfigMaps, ns_, "cm", ConfigMap("cm", "3", rv1));
  EXPECT_TRUE(IsConflict(stale.status())) << stale.status();
  EXPECT_FALSE(IsAlreadyExists(stale.status()));

  auto missing = client_->Get(kConfigMaps, ns_, "nope");
  EXPECT_TRUE(IsNotFound(missing.status())) << missing.status();
  auto err = ApiError::FromStatus(missing.status());
  ASSERT_TRUE(err.has_value());
  EXPECT_EQ(err->http_code, 404);
  EXPECT_EQ(err->details_name, "nope");
  EXPECT_EQ(err->details_kind, "configmaps");

  auto invalid = client_->Create(kConfigMaps, ns_, ConfigMap("Bad_Name", "1"));
  EXPECT_TRUE(IsInvalid(invalid.status())) << invalid.status();
  auto causes = Causes(invalid.status());
  ASSERT_FALSE(causes.empty());
  EXPECT_EQ(causes[0].field, "metadata.name");

  auto merged =
      client_->Patch(kConfigMaps, ns_, "cm", PatchType::kMergePatch, R"({"data":{"m":"merged"}})");
  ASSERT_TRUE(merged.ok()) << merged.status();
  auto patched = client_->Patch(kConfigMaps, ns_, "cm", PatchType::kJsonPatch,
                                R"([{"op":"replace","path":"/data/k","value":"jp"}])");
  ASSERT_TRUE(patched.ok()) << patched.status();
  auto pobj = Object::Parse(*patched);
  ASSERT_TRUE(pobj.ok());
  EXPECT_STREQ((*pobj)->doc()["data"]["k"].GetString(), "jp");
  EXPECT_STREQ((*pobj)->doc()["data"]["m"].GetString(), "merged");

  DeleteOptions wrong_uid;
  wrong_uid.precondition_uid = "00000000-0000-0000-0000-000000000000";
  auto del = client_->Delete(kConfigMaps, ns_, "cm", wrong_uid);
  EXPECT_TRUE(IsConflict(del.status())) << del.status();
  DeleteOptions right;
  right.precondition_uid = (*pobj)->uid();
  right.propagation_policy = "Background";
  right.grace_period_seconds = 0;
  auto del2 = client_->Delete(kConfigMaps, ns_, "cm", right);
  EXPECT_TRUE(del2.ok()) << del2.status();
  EXPECT_TRUE(IsNotFound(client_->Get(kConfigMaps, ns_, "cm").status()));
}

TEST_F(RestClientIntegrationTest, ServerSideApplyWithFieldManagers) {
  PatchOptions a;
  a.field_manager = "manager-a";
  auto applied = client_->Patch(kConfigMaps, ns_, "ssa", PatchType::kApply,
                                R"({"apiVersion":"v1","kind":"ConfigMap",)"
                                R"("metadata":{"name":"ssa"},"data":{"owned":"a"}})",
                                a);
  ASSERT_TRUE(applied.ok()) << applied.status();
  PatchOptions b;
  b.field_manager = "manager-b";
  const std::string takeover = R"({"apiVersion":"v1","kind":"ConfigMap",)"
                               R"("metadata":{"name":"ssa"},"data":{"owned":"b"}})";
  auto conflict = client_->Patch(kConfigMaps, ns_, "ssa", PatchType::kApply, takeover, b);
  EXPECT_TRUE(IsConflict(conflict.status())) << conflict.status();
  b.force = true;
  auto forced = client_->Patch(kConfigMaps, ns_, "ssa", PatchType::kApply, takeover, b);
  ASSERT_TRUE(forced.ok()) << forced.status();
  auto obj = Object::Parse(*forced);
  ASSERT_TRUE(obj.ok());
  EXPECT_STREQ((*obj)->doc()["data"]["owned"].GetString(), "b");
  EXPECT_NE(forced->find("manager-b"), std::string::npos);
  PatchOptions none;
  auto no_manager = client_->Patch(kConfigMaps, ns_, "ssa", PatchType::kApply, takeover, none);
  EXPECT_EQ(no_manager.status().code(), StatusCode::kInvalidArgument);
}

TEST_F(RestClientIntegrationTest, WatchSeesChangesInOrder) {
  auto list = client_->List(kConfigMaps, ns_);
  ASSERT_TRUE(list.ok()) << list.status();
  ListOptions wo;
  wo.resource_version = list->resource_version;
  wo.allow_watch_bookmarks = true;
  // Only this object: kube-controller-manager publishes kube-root-ca.crt into a new namespace
  // at its own pace, which may land inside the watch window.
  wo.field_selector = "metadata.name=w";
  wo.timeout_seconds = 30;
  auto w = client_->Watch(kConfigMaps, ns_, wo);
  ASSERT_TRUE(w.ok()) << w.status();
  ASSERT_TRUE(client_->Create(kConfigMaps, ns_, ConfigMap("w", "1")).ok());
  ASSERT_TRUE(
      client_->Patch(kConfigMaps, ns_, "w", PatchType::kMergePatch, R"({"data":{"k":"2"}})").ok());
  ASSERT_TRUE(client_->Delete(kConfigMaps, ns_, "w").ok());
  std::vector<WatchEvent::Type> types;
  while (types.size() < 3) {
    auto ev = (*w)->Next();
    ASSERT_TRUE(ev.ok()) << ev.status();
    ASSERT_TRUE(ev->has_value());
    if ((*ev)->type == WatchEvent::Type::kBookmark) continue;
    EXPECT_EQ((*ev)->object->name(), "w");
    types.push_back((*ev)->type);
  }
  EXPECT_EQ(types,
            (std::vector<WatchEvent::Type>{WatchEvent::Type::kAdded, WatchEvent::Type::kModified,
                                           WatchEvent::Type::kDeleted}));
  // Stop() from another thread unblocks a pending Next().
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    (*w)->Stop();
  });
  auto end = (*w)->Next();
  stopper.join();
  ASSERT_TRUE(end.ok()) << end.status();
  EXPECT_FALSE(end->has_value());
}

TEST_F(RestClientIntegrationTest, PaginatesOverFiveThousandConfigMaps) {
  constexpr int kCount = 5000;
  constexpr int kThreads = 16;
  std::atomic<int> next{0};
  std::atomic<int> failures{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < kThreads; ++t) {
    workers.emplace_back([&] {
      for (int i = next++; i < kCount; i = next++) {
        auto r = client_->Create(kConfigMaps, ns_, ConfigMap("cm-" + std::to_string(i), "v"));
        if (!r.ok()) ++failures;
      }
    });
  }
  for (auto& w : workers) w.join();
  ASSERT_EQ(failures.load(), 0);

  ListOptions o;
  o.limit = 500;
  int pages = 0;
  std::set<std::string> names;
  std::string rv;
  while (true) {
    auto page = client_->List(kConfigMaps, ns_, o);
    ASSERT_TRUE(page.ok()) << page.status();
    ++pages;
    if (rv.empty()) rv = page->resource_version;
    EXPECT_LE(page->items.size(), 500u);
    for (const auto& item : page->items) names.insert(item->name());
    if (page->continue_token.empty()) break;
    o.continue_token = page->continue_token;
  }
  // kube-root-ca.crt is created in every namespace as well.
  EXPECT_GE(names.size(), static_cast<size_t>(kCount));
  EXPECT_GE(pages, kCount / 500);
  auto all = ListAll(*client_, kConfigMaps, ns_, {}, 500);
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(all->items.size(), names.size());
}

}  // namespace
}  // namespace draco::k8s
