// SharedInformer against the local control plane (label: integration), including a watch that
// survives an API-server restart (e2e/cluster/restart-apiserver.sh).
#include <chrono>
#include <cstdlib>
#include <random>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "k8sclient/api_error.h"
#include "k8sclient/cache/shared_informer.h"
#include "k8sclient/config.h"
#include "k8sclient/rest_client_impl.h"
#include "k8sclient/testing/e2e_env.h"

#ifndef DRACO_SOURCE_DIR
#define DRACO_SOURCE_DIR "."
#endif

namespace draco::k8s::cache {
namespace {

class Names {
 public:
  void Add(const std::string& n) {
    std::lock_guard<std::mutex> l(mu_);
    names_.insert(n);
    ++events_;
  }
  bool Has(const std::string& n) const {
    std::lock_guard<std::mutex> l(mu_);
    return names_.count(n) != 0;
  }

 private:
  mutable std::mutex mu_;
  std::set<std::string> names_;
  int events_ = 0;
};

template <typename Pred>
bool WaitReal(Pred pred, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return pred();
}

class InformerIntegrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto env = k8s::testing::LoadE2eEnv();
    if (!env) GTEST_SKIP() << "no control plane: " << k8s::testing::E2eDir() << "/env missing";
    auto cfg = LoadKubeconfig((*env)["KUBECONFIG"], "draco-e2e");
    ASSERT_TRUE(cfg.ok()) << cfg.status();
    auto c = NewRestClient(*cfg);
    ASSERT_TRUE(c.ok()) << c.status();
    client_ = std::move(c).value();
    ns_ = "k8sclient-inf-" + std::to_string(std::random_device{}() % 1000000);
    ASSERT_TRUE(client_->Create(kNamespaces, "", R"({"metadata":{"name":")" + ns_ + R"("}})").ok());
  }
  void TearDown() override {
    if (client_) (void)client_->Delete(kNamespaces, "", ns_);
  }
  Status CreateConfigMap(const std::string& name) {
    return client_
        ->Create(kConfigMaps, ns_, R"({"metadata":{"name":")" + name + R"("},"data":{"a":"b"}})")
        .status();
  }

  std::unique_ptr<RestClient> client_;
  std::string ns_;
};

TEST_F(InformerIntegrationTest, CachesAndFollowsConfigMaps) {
  ASSERT_TRUE(CreateConfigMap("pre").ok());
  ListWatch lw(*client_, kConfigMaps, ns_);
  SharedInformerOptions options;
  options.name = "configmaps";
  SharedInformer inf(lw, options);
  Names names;
  ResourceEventHandler h;
  h.on_add = [&](const ObjectPtr& o, bool) { names.Add("add:" + o->name()); };
  h.on_update = [&](const ObjectPtr&, const ObjectPtr& o) { names.Add("update:" + o->name()); };
  h.on_delete = [&](const DeletedObject& d) { names.Add("delete:" + d.key); };
  const int id = inf.AddEventHandler(h);
  inf.Start();
  ASSERT_TRUE(inf.WaitForCacheSync(std::chrono::seconds(30)));
  // Handlers run asynchronously after the cache is filled.
  ASSERT_TRUE(WaitReal([&] { return inf.HandlerHasSynced(id); }, std::chrono::seconds(30)));
  // The first LIST uses resourceVersion "0", which the watch cache may answer slightly stale (e.g.
  // right after a burst of writes); then "pre" arrives as a watch event instead.
  EXPECT_TRUE(WaitReal([&] { return names.Has("add:pre"); }, std::chrono::seconds(30)));
  ASSERT_TRUE(CreateConfigMap("live").ok());
  ASSERT_TRUE(
      client_->Patch(kConfigMaps, ns_, "live", PatchType::kMergePatch, R"({"data":{"a":"c"}})")
          .ok());
  ASSERT_TRUE(client_->Delete(kConfigMaps, ns_, "pre").ok());
  EXPECT_TRUE(
      WaitReal([&] { return names.Has("delete:" + ns_ + "/pre"); }, std::chrono::seconds(30)));
  EXPECT_TRUE(names.Has("add:live"));
  EXPECT_TRUE(names.Has("update:live"));
  EXPECT_EQ(inf.GetIndexer().GetByKey(ns_ + "/pre"), nullptr);
  auto live = inf.GetIndexer().GetByKey(ns_ + "/live");
  ASSERT_NE(live, nullptr);
  EXPECT_STREQ(live->doc()["data"]["a"].GetString(), "c");
  inf.Stop();
}

TEST_F(InformerIntegrationTest, WatchSurvivesApiServerRestart) {
  if (std::getenv("DRACO_SKIP_APISERVER_RESTART") != nullptr) {
    GTEST_SKIP() << "DRACO_SKIP_APISERVER_RESTART is set";
  }
  ListWatch lw(*client_, kConfigMaps, ns_);
  SharedInformerOptions options;
  options.name = "configmaps-restart";
  SharedInformer inf(lw, options);
  Names names;
  ResourceEventHandler h;
  h.on_add = [&](const ObjectPtr& o, bool) { names.Add(o->name()); };
  inf.AddEventHandler(h);
  inf.Start();
  ASSERT_TRUE(inf.WaitForCacheSync(std::chrono::seconds(30)));
  ASSERT_TRUE(CreateConfigMap("before").ok());
  ASSERT_TRUE(WaitReal([&] { return names.Has("before"); }, std::chrono::seconds(30)));

  const std::string script = std::string(DRACO_SOURCE_DIR) + "/e2e/cluster/restart-apiserver.sh";
  ASSERT_EQ(std::system(("bash " + script + " >/dev/null 2>&1").c_str()), 0) << script;

  // The server is back (the script waits for readiness); writes may still need a retry.
  Status created;
  WaitReal(
      [&] {
        created = CreateConfigMap("after");
        return created.ok() || IsAlreadyExists(created);
      },
      std::chrono::seconds(60));
  ASSERT_TRUE(created.ok() || IsAlreadyExists(created)) << created;
  // The reflector re-watches (after at most ~30s of backoff) and must see the new object.
  EXPECT_TRUE(WaitReal([&] { return names.Has("after"); }, std::chrono::seconds(90)));
  EXPECT_NE(inf.GetIndexer().GetByKey(ns_ + "/before"), nullptr);
  inf.Stop();
}

}  // namespace
}  // namespace draco::k8s::cache
