// The generated protobuf schema against a real API server (label: integration): every object the
// server lists, gets and watches in protobuf, transcoded, must equal the JSON the same server sends
// for the same resourceVersion. The objects created here set the fields whose JSON rules differ
// (inline structs, omitempty and pointers, times, quantities, int-or-string, raw extensions, byte
// maps, repeated and map fields of messages).
#include <atomic>
#include <chrono>
#include <random>
#include <thread>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "controller/run/proto_schema.h"
#include "k8sclient/api_error.h"
#include "k8sclient/config.h"
#include "k8sclient/rest_client_impl.h"
#include "k8sclient/testing/e2e_env.h"

namespace draco::run {
namespace {

using k8s::GroupVersionResource;

const GroupVersionResource kClaims{"resource.k8s.io", "v1", "resourceclaims"};
const GroupVersionResource kTemplates{"resource.k8s.io", "v1", "resourceclaimtemplates"};
const GroupVersionResource kSlices{"resource.k8s.io", "v1", "resourceslices"};
const GroupVersionResource kClasses{"resource.k8s.io", "v1", "deviceclasses"};
const GroupVersionResource kSecrets{"", "v1", "secrets"};
const GroupVersionResource kEvents{"", "v1", "events"};

std::string Compact(const rapidjson::Value& v) { return k8s::ToJson(v); }

class ProtoSchemaIntegrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto env = k8s::testing::LoadE2eEnv();
    if (!env) GTEST_SKIP() << "no control plane: " << k8s::testing::E2eDir() << "/env is missing";
    auto cfg = k8s::LoadKubeconfig((*env)["KUBECONFIG"], "draco-e2e");
    ASSERT_TRUE(cfg.ok()) << cfg.status();
    cfg->qps = 200;
    cfg->burst = 400;
    auto json = k8s::NewRestClient(*cfg);
    ASSERT_TRUE(json.ok()) << json.status();
    json_ = std::move(json).value();
    schema_ = KubeProtoSchema();
    ASSERT_NE(schema_, nullptr);
    cfg->protobuf = schema_;
    cfg->observer = [this](const k8s::RestConfig::RequestEvent& e) {
      if (e.protobuf) protobuf_responses_.fetch_add(1);
    };
    auto proto = k8s::NewRestClient(*cfg);
    ASSERT_TRUE(proto.ok()) << proto.status();
    proto_ = std::move(proto).value();
    std::random_device rd;
    suffix_ = std::to_string(rd() % 1000000);
    ns_ = "proto-it-" + suffix_;
    ASSERT_TRUE(
        json_->Create(k8s::kNamespaces, "", R"({"metadata":{"name":")" + ns_ + R"("}})").ok());
  }
  void TearDown() override {
    if (!json_) return;
    (void)json_->Delete(k8s::kNamespaces, "", ns_);
    for (const auto& [gvr, name] : cluster_scoped_) (void)json_->Delete(gvr, "", name);
  }

  void CreateOrDie(const GroupVersionResource& gvr, bool namespaced, const std::string& body,
                   const std::string& name) {
    auto r = json_->Create(gvr, namespaced ? ns_ : "", body);
    ASSERT_TRUE(r.ok()) << gvr.resource << ": " << r.status();
    if (!namespaced) cluster_scoped_.emplace_back(gvr, name);
  }

  // Lists `gvr` both ways and compares every object both lists hold at the same resourceVersion.
  // Returns how many were compared.
  int CompareList(const GroupVersionResource& gvr, const std::string& ns) {
    auto a = json_->List(gvr, ns, {});
    auto b = proto_->List(gvr, ns, {});
    ++proto_lists_;
    EXPECT_TRUE(a.ok()) << a.status();
    EXPECT_TRUE(b.ok()) << b.status();
    if (!a.ok() || !b.ok()) return 0;
    std::map<std::string, const k8s::Object*> by_uid;
    for (const auto& o : a->items) by_uid[o->uid()] = o.get();
    int compared = 0;
    for (const auto& o : b->items) {
      auto it = by_uid.find(o->uid());
      if (it == by_uid.end() || it->second->resource_version() != o->resource_version()) continue;
      EXPECT_EQ(it->second->doc(), o->doc())
          << gvr.resource << " " << o->Key() << "\njson:  " << Compact(it->second->doc())
          << "\nproto: " << Compact(o->doc());
      ++compared;
    }
    return compared;
  }

  std::atomic<int> protobuf_responses_{0};  // of proto_ (the observer)
  int proto_lists_ = 0;                     // Lists made by CompareList
  std::unique_ptr<k8s::RestClient> json_, proto_;
  std::shared_ptr<const k8s::ProtoSchema> schema_;
  std::string suffix_, ns_;
  std::vector<std::pair<GroupVersionResource, std::string>> cluster_scoped_;
};

constexpr const char* kPod = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"rich",
 "labels":{"app":"x"},"annotations":{"a":"b"}},
 "spec":{"schedulingGates":[{"name":"draco.dev/allocation"}],
  "containers":[{"name":"c","image":"busybox","command":["sh","-c"],"args":["sleep 1"],
   "ports":[{"containerPort":8080,"protocol":"TCP","name":"http"}],
   "env":[{"name":"A","value":"1"},{"name":"B","valueFrom":{"fieldRef":{"fieldPath":"metadata.name"}}}],
   "resources":{"requests":{"cpu":"100m","memory":"64Mi"},"limits":{"memory":"128Mi"},
    "claims":[{"name":"gpu"}]},
   "livenessProbe":{"httpGet":{"path":"/","port":"http"},"initialDelaySeconds":3},
   "readinessProbe":{"tcpSocket":{"port":8080},"periodSeconds":0},
   "securityContext":{"runAsUser":0,"privileged":false,"capabilities":{"add":["NET_ADMIN"]}},
   "volumeMounts":[{"name":"v","mountPath":"/v","readOnly":true}]}],
  "volumes":[{"name":"v","emptyDir":{"sizeLimit":"1Gi"}},{"name":"cm","configMap":{"name":"x","defaultMode":420}}],
  "resourceClaims":[{"name":"gpu","resourceClaimTemplateName":"tmpl"}],
  "affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[
   {"matchExpressions":[{"key":"k","operator":"In","values":["a","b"]}]}]},
   "preferredDuringSchedulingIgnoredDuringExecution":[{"weight":5,"preference":{"matchFields":[
   {"key":"metadata.name","operator":"NotIn","values":["n"]}]}}]}},
  "tolerations":[{"key":"t","operator":"Exists","effect":"NoExecute","tolerationSeconds":30}],
  "topologySpreadConstraints":[{"maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule",
   "labelSelector":{"matchLabels":{"app":"x"}}}],
  "nodeSelector":{"disk":"ssd"},"priority":0,"terminationGracePeriodSeconds":0,
  "hostNetwork":false}})";

constexpr const char* kClaim = R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim",
 "metadata":{"name":"c1"},"spec":{"devices":{"requests":[{"name":"r","exactly":{
  "deviceClassName":"cls","allocationMode":"ExactCount","count":2,
  "selectors":[{"cel":{"expression":"device.attributes[\"x.dev\"].model == \"a\""}}],
  "capacity":{"requests":{"memory":"1Gi"}}}},
  {"name":"any","firstAvailable":[{"name":"s1","deviceClassName":"cls","allocationMode":"All"}]}],
  "constraints":[{"requests":["r"],"matchAttribute":"x.dev/numa"}],
  "config":[{"requests":["r"],"opaque":{"driver":"x.dev","parameters":{"kind":"Cfg","n":[1,2.5,"s",null,true]}}}]}}})";

constexpr const char* kSlice = R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice",
 "metadata":{"name":"s-SUFFIX"},"spec":{"driver":"x.dev","nodeName":"node-SUFFIX",
  "pool":{"name":"p","generation":3,"resourceSliceCount":1},
  "devices":[{"name":"d0","attributes":{"model":{"string":"a"},"numa":{"int":0},"ok":{"bool":false},
   "ver":{"version":"1.2.3"}},"capacity":{"memory":{"value":"80Gi"}},
   "taints":[{"key":"k","value":"v","effect":"NoSchedule"}]},{"name":"d1"}]}})";

constexpr const char* kClass = R"({"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass",
 "metadata":{"name":"cls-SUFFIX"},"spec":{"selectors":[{"cel":{"expression":"true"}}],
  "config":[{"opaque":{"driver":"x.dev","parameters":{"a":1}}}]}})";

std::string WithSuffix(std::string s, const std::string& suffix) {
  for (size_t at; (at = s.find("SUFFIX")) != std::string::npos;) s.replace(at, 6, suffix);
  return s;
}

TEST_F(ProtoSchemaIntegrationTest, ListedObjectsEqualTheServersJson) {
  CreateOrDie(k8s::kPods, true, kPod, "rich");
  CreateOrDie(kClaims, true, kClaim, "c1");
  CreateOrDie(
      kTemplates, true,
      R"({"metadata":{"name":"tmpl"},"spec":{"metadata":{"labels":{"a":"b"}},)"
      R"("spec":{"devices":{"requests":[{"name":"r","exactly":{"deviceClassName":"cls"}}]}}}})",
      "tmpl");
  CreateOrDie(kSecrets, true,
              R"({"metadata":{"name":"s"},"data":{"k":"AAEC/w=="},"type":"Opaque"})", "s");
  CreateOrDie(kSlices, false, WithSuffix(kSlice, suffix_), "s-" + suffix_);
  CreateOrDie(kClasses, false, WithSuffix(kClass, suffix_), "cls-" + suffix_);
  int total = 0;
  for (const auto& gvr : {k8s::kPods, kClaims, kTemplates, kSecrets, k8s::kConfigMaps}) {
    // Controllers of the cluster may still be changing the new objects (the pod's claim from
    // its template, its status): compare once both lists hold the same version.
    int n = 0;
    for (int attempt = 0; attempt < 50 && n == 0; ++attempt) {
      if (attempt > 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
      n = CompareList(gvr, ns_);
    }
    EXPECT_GT(n, 0) << gvr.resource;
    total += n;
  }
  // Cluster-wide, whatever the cluster holds (nodes, leases with micro times, events, ...).
  for (const auto& gvr : {kSlices, kClasses, k8s::kNodes, k8s::kNamespaces, k8s::kLeases, kEvents,
                          kClaims, k8s::kPods}) {
    total += CompareList(gvr, "");
  }
  // Every list above was read in protobuf (else this compared JSON with JSON).
  EXPECT_EQ(protobuf_responses_.load(), proto_lists_);
  std::cout << "compared " << total << " objects\n";
}

// draco run's schema drops metadata.managedFields: the objects equal the server's JSON without it.
TEST_F(ProtoSchemaIntegrationTest, DroppingManagedFieldsChangesNothingElse) {
  CreateOrDie(k8s::kPods, true, kPod, "rich");
  CreateOrDie(kClaims, true, kClaim, "c1");
  auto cfg = k8s::LoadKubeconfig((*k8s::testing::LoadE2eEnv())["KUBECONFIG"], "draco-e2e");
  ASSERT_TRUE(cfg.ok()) << cfg.status();
  cfg->protobuf = KubeProtoSchema(/*drop_managed_fields=*/true);
  ASSERT_NE(cfg->protobuf, nullptr);
  auto dropping = k8s::NewRestClient(*cfg);
  ASSERT_TRUE(dropping.ok()) << dropping.status();
  int compared = 0;
  for (const auto& gvr : {k8s::kPods, kClaims}) {
    auto a = json_->List(gvr, ns_, {});
    auto b = (*dropping)->List(gvr, ns_, {});
    ASSERT_TRUE(a.ok() && b.ok());
    for (const auto& o : b->items) {
      EXPECT_FALSE(o->doc()["metadata"].HasMember("managedFields")) << o->Key();
      for (const auto& j : a->items) {
        if (j->uid() != o->uid() || j->resource_version() != o->resource_version()) continue;
        rapidjson::Document want;
        want.CopyFrom(j->doc(), want.GetAllocator());
        ASSERT_TRUE(want["metadata"].HasMember("managedFields")) << "nothing to drop";
        want["metadata"].RemoveMember("managedFields");
        EXPECT_EQ(want, o->doc()) << Compact(want) << "\n" << Compact(o->doc());
        ++compared;
      }
    }
  }
  EXPECT_EQ(compared, 2);
}

TEST_F(ProtoSchemaIntegrationTest, GetWatchAndErrorsEqualTheServersJson) {
  CreateOrDie(kClaims, true, kClaim, "c1");
  auto a = json_->Get(kClaims, ns_, "c1");
  auto b = proto_->Get(kClaims, ns_, "c1");
  ASSERT_TRUE(a.ok() && b.ok());
  rapidjson::Document da, db;
  da.Parse(a->c_str());
  db.Parse(b->c_str());
  EXPECT_EQ(da, db) << *a << "\n" << *b;

  // A missing object: the protobuf Status says NotFound like the JSON one.
  auto missing = proto_->Get(kClaims, ns_, "nope");
  EXPECT_TRUE(k8s::IsNotFound(missing.status())) << missing.status();

  auto list = json_->List(kClaims, ns_, {});
  ASSERT_TRUE(list.ok());
  k8s::ListOptions lo;
  lo.resource_version = list->resource_version;
  lo.timeout_seconds = 30;
  auto wa = json_->Watch(kClaims, ns_, lo);
  auto wb = proto_->Watch(kClaims, ns_, lo);
  ASSERT_TRUE(wa.ok() && wb.ok());
  ASSERT_TRUE(json_
                  ->Patch(kClaims, ns_, "c1", k8s::PatchType::kMergePatch,
                          R"({"metadata":{"labels":{"changed":"yes"}}})")
                  .ok());
  ASSERT_TRUE(json_->Delete(kClaims, ns_, "c1").ok());
  EXPECT_EQ(protobuf_responses_.load(), 3);  // the GETs and the watch
  for (int i = 0; i < 2; ++i) {
    auto ea = (*wa)->Next();
    auto eb = (*wb)->Next();
    ASSERT_TRUE(ea.ok() && eb.ok() && *ea && *eb);
    EXPECT_EQ((*ea)->type, (*eb)->type);
    EXPECT_EQ((*ea)->object->doc(), (*eb)->object->doc()) << Compact((*ea)->object->doc()) << "\n"
                                                          << Compact((*eb)->object->doc());
  }
}

TEST_F(ProtoSchemaIntegrationTest, WriteAnswersEqualTheServersJson) {
  auto same_as_live = [&](const StatusOr<std::string>& answer, const GroupVersionResource& gvr,
                          const std::string& name) {
    ASSERT_TRUE(answer.ok()) << answer.status();
    auto live = json_->Get(gvr, ns_, name);
    ASSERT_TRUE(live.ok()) << live.status();
    rapidjson::Document a, l;
    a.Parse(answer->c_str());
    l.Parse(live->c_str());
    EXPECT_EQ(a, l) << "answer " << *answer << "\nlive   " << *live;
  };
  same_as_live(proto_->Create(kClaims, ns_, kClaim), kClaims, "c1");
  same_as_live(proto_->Patch(kClaims, ns_, "c1", k8s::PatchType::kMergePatch,
                             R"({"metadata":{"finalizers":["draco.dev/it"]}})"),
               kClaims, "c1");
  same_as_live(proto_->Create(k8s::kPods, ns_, kPod), k8s::kPods, "rich");
  auto pod = json_->Get(k8s::kPods, ns_, "rich");
  ASSERT_TRUE(pod.ok());
  same_as_live(proto_->Update(k8s::kPods, ns_, "rich", *pod), k8s::kPods, "rich");
  // Deleting an object a finalizer holds answers the object; then the finalizer goes.
  same_as_live(proto_->Delete(kClaims, ns_, "c1"), kClaims, "c1");
  auto gone = proto_->Patch(kClaims, ns_, "c1", k8s::PatchType::kMergePatch,
                            R"({"metadata":{"finalizers":null}})");
  ASSERT_TRUE(gone.ok()) << gone.status();
  EXPECT_TRUE(k8s::IsNotFound(json_->Get(kClaims, ns_, "c1").status()));
  // An answer that is an error is a protobuf Status.
  ASSERT_TRUE(proto_->Create(kClaims, ns_, R"({"metadata":{"name":"x"},"spec":{}})").ok());
  auto again = proto_->Create(kClaims, ns_, R"({"metadata":{"name":"x"},"spec":{}})");
  EXPECT_TRUE(k8s::IsAlreadyExists(again.status())) << again.status();
  EXPECT_EQ(protobuf_responses_.load(), 8);
}

TEST_F(ProtoSchemaIntegrationTest, AnswersTheSchemaDoesNotCoverFallBackToJson) {
  // A schema that lacks a field every object has (as an older schema lacks a newer server's).
  std::string text(KubeProtoSchemaText());
  const std::string field = " 8,creationTimestamp,t,oz";
  ASSERT_NE(text.find(field), std::string::npos);
  text.erase(text.find(field), field.size());
  auto old = k8s::ProtoSchema::Parse(text);
  ASSERT_TRUE(old.ok()) << old.status();
  auto cfg = k8s::LoadKubeconfig(k8s::testing::E2eDir() + "/kubeconfig", "draco-e2e");
  ASSERT_TRUE(cfg.ok());
  cfg->protobuf = *old;
  int protobuf = 0;
  cfg->observer = [&](const k8s::RestConfig::RequestEvent& e) { protobuf += e.protobuf ? 1 : 0; };
  auto client = k8s::NewRestClient(*cfg);
  ASSERT_TRUE(client.ok());
  // The write is made once: its answer is not understood, so the object is read back as JSON.
  auto created = (*client)->Create(kClaims, ns_, kClaim);
  ASSERT_TRUE(created.ok()) << created.status();
  auto live = json_->Get(kClaims, ns_, "c1");
  ASSERT_TRUE(live.ok());
  rapidjson::Document a, l;
  a.Parse(created->c_str());
  l.Parse(live->c_str());
  EXPECT_EQ(a, l);
  EXPECT_EQ(protobuf, 1);
  // From then on the group/version is read as JSON; others still in protobuf until they fail.
  auto list = (*client)->List(kClaims, ns_, {});
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(list->items.size(), 1u);
  EXPECT_EQ(protobuf, 1);
  auto pods = (*client)->List(k8s::kPods, ns_, {});
  ASSERT_TRUE(pods.ok()) << pods.status();  // an empty list has no object to fail on
  EXPECT_EQ(protobuf, 2);
}

}  // namespace
}  // namespace draco::run
