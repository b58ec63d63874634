#include "controller/simulate/workloads.h"

#include <set>

#include <gtest/gtest.h>

namespace draco::simulate {
namespace {

// Expands the JSON manifest `json` and returns the pods parsed back.
std::vector<rapidjson::Document> Expand(const std::string& json) {
  rapidjson::Document doc;
  doc.Parse(json.c_str());
  EXPECT_FALSE(doc.HasParseError()) << json;
  auto pods = ExpandWorkload(doc);
  EXPECT_TRUE(pods.ok()) << pods.status().message();
  std::vector<rapidjson::Document> out;
  if (!pods.ok()) return out;
  for (const auto& p : *pods) {
    out.emplace_back();
    out.back().Parse(p.c_str());
  }
  return out;
}

std::string Name(const rapidjson::Document& pod) { return pod["metadata"]["name"].GetString(); }

const char* kTemplate =
    R"({"metadata":{"labels":{"app":"x"}},"spec":{"containers":[{"name":"c","image":"i"}],)"
    R"("resourceClaims":[{"name":"gpu","resourceClaimTemplateName":"single-gpu"}]}})";

TEST(WorkloadsTest, DeploymentReplicasWithReplicaSetStyleNames) {
  auto pods = Expand(std::string(R"({"apiVersion":"apps/v1","kind":"Deployment",)") +
                     R"("metadata":{"name":"web","namespace":"ns"},"spec":{"replicas":3,)" +
                     R"("template":)" + kTemplate + "}}");
  ASSERT_EQ(pods.size(), 3u);
  std::set<std::string> names;
  for (const auto& p : pods) {
    std::string n = Name(p);
    names.insert(n);
    // web-<10 chars>-<5 chars>, with the template's labels and spec, in the namespace.
    ASSERT_EQ(n.size(), std::string("web-").size() + 10 + 1 + 5) << n;
    EXPECT_EQ(n.substr(0, 4), "web-");
    EXPECT_EQ(n.substr(0, 15), Name(pods[0]).substr(0, 15));  // one ReplicaSet
    EXPECT_EQ(std::string(p["metadata"]["namespace"].GetString()), "ns");
    EXPECT_EQ(std::string(p["metadata"]["labels"]["app"].GetString()), "x");
    EXPECT_EQ(std::string(p["metadata"]["labels"]["pod-template-hash"].GetString()),
              n.substr(4, 10));
    EXPECT_EQ(std::string(p["spec"]["resourceClaims"][0]["resourceClaimTemplateName"].GetString()),
              "single-gpu");
    EXPECT_EQ(std::string(p["kind"].GetString()), "Pod");
  }
  EXPECT_EQ(names.size(), 3u);  // distinct
  // Deterministic.
  auto again = Expand(std::string(R"({"apiVersion":"apps/v1","kind":"Deployment",)") +
                      R"("metadata":{"name":"web","namespace":"ns"},"spec":{"replicas":3,)" +
                      R"("template":)" + kTemplate + "}}");
  EXPECT_EQ(Name(again[2]), Name(pods[2]));
}

TEST(WorkloadsTest, DefaultsToOneReplicaAndDefaultNamespace) {
  auto pods = Expand(std::string(R"({"apiVersion":"apps/v1","kind":"ReplicaSet",)") +
                     R"("metadata":{"name":"rs"},"spec":{"template":)" + kTemplate + "}}");
  ASSERT_EQ(pods.size(), 1u);
  EXPECT_EQ(Name(pods[0]).substr(0, 3), "rs-");
  EXPECT_EQ(Name(pods[0]).size(), 3u + 5u);
  EXPECT_EQ(std::string(pods[0]["metadata"]["namespace"].GetString()), "default");
}

TEST(WorkloadsTest, StatefulSetOrdinals) {
  auto pods = Expand(std::string(R"({"apiVersion":"apps/v1","kind":"StatefulSet",)") +
                     R"("metadata":{"name":"db"},"spec":{"replicas":2,"ordinals":{"start":5},)" +
                     R"("template":)" + kTemplate + "}}");
  ASSERT_EQ(pods.size(), 2u);
  EXPECT_EQ(Name(pods[0]), "db-5");
  EXPECT_EQ(Name(pods[1]), "db-6");
}

TEST(WorkloadsTest, JobParallelismCappedByCompletionsAndSuspend) {
  auto job = [](const std::string& extra) {
    return Expand(std::string(R"({"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"t"},)") +
                  R"("spec":{)" + extra + R"("template":)" + kTemplate + "}}");
  };
  EXPECT_EQ(job("").size(), 1u);
  EXPECT_EQ(job(R"("parallelism":4,)").size(), 4u);
  EXPECT_EQ(job(R"("parallelism":4,"completions":2,)").size(), 2u);
  EXPECT_EQ(job(R"("parallelism":4,"suspend":true,)").size(), 0u);
  auto indexed = job(R"("parallelism":2,"completionMode":"Indexed",)");
  ASSERT_EQ(indexed.size(), 2u);
  EXPECT_EQ(Name(indexed[1]).substr(0, 4), "t-1-");
  EXPECT_EQ(std::string(indexed[1]["metadata"]["labels"]["batch.kubernetes.io/"
                                                         "job-completion-index"]
                            .GetString()),
            "1");
}

TEST(WorkloadsTest, JobSetReplicatedJobsTimesParallelism) {
  auto pods = Expand(std::string(R"({"apiVersion":"jobset.x-k8s.io/v1alpha2","kind":"JobSet",)") +
                     R"("metadata":{"name":"js"},"spec":{"replicatedJobs":[)" +
                     R"({"name":"a","replicas":2,"template":{"spec":{"parallelism":3,"template":)" +
                     kTemplate + R"(}}},{"name":"b","template":{"spec":{"template":)" + kTemplate +
                     "}}}]}}");
  ASSERT_EQ(pods.size(), 7u);
  EXPECT_EQ(Name(pods[0]).substr(0, 9), "js-a-0-0-");
  EXPECT_EQ(Name(pods[5]).substr(0, 9), "js-a-1-2-");
  EXPECT_EQ(Name(pods[6]).substr(0, 9), "js-b-0-0-");
}

TEST(WorkloadsTest, LeaderWorkerSetGroupsOfLeaderAndWorkers) {
  auto pods = Expand(
      std::string(R"({"apiVersion":"leaderworkerset.x-k8s.io/v1","kind":"LeaderWorkerSet",)") +
      R"("metadata":{"name":"lws"},"spec":{"replicas":2,"leaderWorkerTemplate":{"size":3,)" +
      R"("leaderTemplate":{"spec":{"containers":[{"name":"l","image":"i"}]}},)" +
      R"("workerTemplate":)" + kTemplate + "}}}");
  ASSERT_EQ(pods.size(), 6u);
  EXPECT_EQ(Name(pods[0]), "lws-0");
  EXPECT_FALSE(pods[0]["spec"].HasMember("resourceClaims"));  // the leader template
  EXPECT_EQ(Name(pods[1]), "lws-0-1");
  EXPECT_EQ(Name(pods[2]), "lws-0-2");
  EXPECT_TRUE(pods[2]["spec"].HasMember("resourceClaims"));
  EXPECT_EQ(Name(pods[3]), "lws-1");
}

std::string Str(const rapidjson::Value& pod, const char* field, const char* key) {
  const auto& md = pod["metadata"];
  if (!md.HasMember(field) || !md[field].HasMember(key)) return "<none>";
  return md[field][key].GetString();
}

TEST(WorkloadsTest, JobSetPodsCarryTheJobSetLabelsAndTheGroupSize) {
  // 2 Jobs x 2 pods: global-replicas is 2 (Jobs), the group minimum 4 (pods).
  auto pods = Expand(std::string(R"({"apiVersion":"jobset.x-k8s.io/v1alpha2","kind":"JobSet",)") +
                     R"("metadata":{"name":"pt"},"spec":{"replicatedJobs":[)" +
                     R"({"name":"w","replicas":2,"template":{"spec":{"parallelism":2,)" +
                     R"("template":)" + kTemplate + "}}}]}}");
  ASSERT_EQ(pods.size(), 4u);
  for (const auto& p : pods) {
    EXPECT_EQ(Str(p, "labels", "jobset.sigs.k8s.io/jobset-name"), "pt");
    EXPECT_EQ(Str(p, "labels", "jobset.sigs.k8s.io/global-replicas"), "2");
    EXPECT_EQ(Str(p, "annotations", "jobset.sigs.k8s.io/global-replicas"), "2");
    EXPECT_EQ(Str(p, "labels", "jobset.sigs.k8s.io/replicatedjob-name"), "w");
    EXPECT_EQ(Str(p, "annotations", "draco.dev/group-min-members"), "4");
    EXPECT_EQ(Str(p, "labels", "app"), "x");  // the template's own
  }
  EXPECT_EQ(Str(pods[3], "labels", "jobset.sigs.k8s.io/job-index"), "1");
  // The template's own minimum (label or annotation) wins.
  for (const char* field : {"labels", "annotations"}) {
    std::string tmpl = std::string(R"({"metadata":{")") + field +
                       R"(":{"draco.dev/group-min-members":"3"}},)" +
                       R"("spec":{"containers":[{"name":"c","image":"i"}]}})";
    auto own = Expand(std::string(R"({"apiVersion":"jobset.x-k8s.io/v1alpha2","kind":"JobSet",)") +
                      R"("metadata":{"name":"pt"},"spec":{"replicatedJobs":[)" +
                      R"({"name":"w","replicas":2,"template":{"spec":{"parallelism":2,)" +
                      R"("template":)" + tmpl + "}}}]}}");
    ASSERT_EQ(own.size(), 4u);
    EXPECT_EQ(Str(own[0], field, "draco.dev/group-min-members"), "3") << field;
    if (std::string(field) == "labels") {
      EXPECT_EQ(Str(own[0], "annotations", "draco.dev/group-min-members"), "<none>");
    }
  }
}

TEST(WorkloadsTest, LeaderWorkerSetPodsCarryTheGroupKeyAndSize) {
  auto pods = Expand(
      std::string(R"({"apiVersion":"leaderworkerset.x-k8s.io/v1","kind":"LeaderWorkerSet",)") +
      R"("metadata":{"name":"lws"},"spec":{"replicas":2,"leaderWorkerTemplate":{"size":3,)" +
      R"("workerTemplate":)" + kTemplate + "}}}");
  ASSERT_EQ(pods.size(), 6u);
  const std::string key0 = Str(pods[0], "labels", "leaderworkerset.sigs.k8s.io/group-key");
  const std::string key1 = Str(pods[3], "labels", "leaderworkerset.sigs.k8s.io/group-key");
  EXPECT_NE(key0, "<none>");
  EXPECT_NE(key0, key1);
  for (size_t i = 0; i < pods.size(); ++i) {
    EXPECT_EQ(Str(pods[i], "labels", "leaderworkerset.sigs.k8s.io/group-key"), i < 3 ? key0 : key1);
    EXPECT_EQ(Str(pods[i], "labels", "leaderworkerset.sigs.k8s.io/name"), "lws");
    EXPECT_EQ(Str(pods[i], "labels", "leaderworkerset.sigs.k8s.io/group-index"), i < 3 ? "0" : "1");
    EXPECT_EQ(Str(pods[i], "labels", "leaderworkerset.sigs.k8s.io/worker-index"),
              std::to_string(i % 3));
    EXPECT_EQ(Str(pods[i], "annotations", "leaderworkerset.sigs.k8s.io/size"), "3");
  }
}

TEST(WorkloadsTest, KnownKindsAndErrors) {
  EXPECT_TRUE(IsWorkloadKind("apps/v1", "Deployment"));
  EXPECT_TRUE(IsWorkloadKind("batch/v1", "Job"));
  EXPECT_FALSE(IsWorkloadKind("v1", "Service"));
  EXPECT_FALSE(IsWorkloadKind("batch/v1", "CronJob"));
  rapidjson::Document doc;
  doc.Parse(R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},)"
            R"("spec":{"replicas":-1,"template":{"spec":{}}}})");
  auto bad = ExpandWorkload(doc);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("replicas must be a non-negative integer"),
            std::string::npos)
      << bad.status().message();
  doc.Parse(R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{}})");
  bad = ExpandWorkload(doc);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("template.spec is missing"), std::string::npos);
}

}  // namespace
}  // namespace draco::simulate
