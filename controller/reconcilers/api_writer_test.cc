#include "controller/reconcilers/api_writer.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "controller/api/codec.h"
#include "controller/reconcilers/claim_util.h"
#include "k8sclient/api_error.h"

namespace draco::reconcilers {
namespace {

api::Pod GatedPod() {
  api::Pod p;
  p.metadata.name = "p";
  p.metadata.namespace_ = "ns";
  p.metadata.resource_version = "7";
  api::PodSchedulingGate other;
  other.name = "example.com/other";
  api::PodSchedulingGate ours;
  ours.name = std::string(kSchedulingGate);
  p.spec.scheduling_gates = {other, ours};
  return p;
}

api::NodeSelectorTerm Term(const std::string& key, bool with_field) {
  api::NodeSelectorTerm t;
  api::NodeSelectorRequirement r;
  r.key = key;
  r.operator_ = "Exists";
  t.match_expressions.push_back(r);
  if (with_field) {
    api::NodeSelectorRequirement f;
    f.key = "metadata.name";
    f.operator_ = "NotIn";
    f.values = {"bad-node"};
    t.match_fields.push_back(f);
  }
  return t;
}

rapidjson::Document Ops(const std::optional<std::string>& patch) {
  rapidjson::Document d;
  EXPECT_TRUE(patch.has_value());
  if (patch) d.Parse(patch->c_str());
  EXPECT_TRUE(d.IsArray()) << patch.value_or("");
  return d;
}

std::string Op(const rapidjson::Value& op) {
  return std::string(op["op"].GetString()) + " " + op["path"].GetString();
}

// The single pinned requirement inside an added value (a requirement or a one-element list).
void ExpectPin(const rapidjson::Value& v, const char* node) {
  const rapidjson::Value& r = v.IsArray() ? v[0] : v;
  ASSERT_TRUE(r.IsObject());
  EXPECT_STREQ(r["key"].GetString(), "metadata.name");
  EXPECT_STREQ(r["operator"].GetString(), "In");
  ASSERT_EQ(r["values"].Size(), 1u);
  EXPECT_STREQ(r["values"][0].GetString(), node);
}

const rapidjson::Value& RequiredIn(const rapidjson::Value& node_affinity) {
  return node_affinity["requiredDuringSchedulingIgnoredDuringExecution"];
}

TEST(GateRemovalPatchTest, NoGateNoPatch) {
  api::Pod p = GatedPod();
  p.spec.scheduling_gates.pop_back();
  EXPECT_FALSE(GateRemovalPatch(p, kSchedulingGate, "node-3").has_value());
}

TEST(GateRemovalPatchTest, WithoutPinTestsAndRemovesTheGateOnly) {
  auto d = Ops(GateRemovalPatch(GatedPod(), kSchedulingGate, ""));
  ASSERT_EQ(d.Size(), 2u);
  EXPECT_EQ(Op(d[0]), "test /spec/schedulingGates/1/name");
  EXPECT_STREQ(d[0]["value"].GetString(), "draco.dev/allocation");
  EXPECT_EQ(Op(d[1]), "remove /spec/schedulingGates/1");
}

TEST(GateRemovalPatchTest, PinCreatesTheAffinityWhenThePodHasNone) {
  auto d = Ops(GateRemovalPatch(GatedPod(), kSchedulingGate, "node-3"));
  ASSERT_EQ(d.Size(), 4u);
  EXPECT_EQ(Op(d[0]), "test /metadata/resourceVersion");
  EXPECT_STREQ(d[0]["value"].GetString(), "7");
  EXPECT_EQ(Op(d[1]), "test /spec/schedulingGates/1/name");
  EXPECT_EQ(Op(d[2]), "remove /spec/schedulingGates/1");
  EXPECT_EQ(Op(d[3]), "add /spec/affinity");
  const auto& terms = RequiredIn(d[3]["value"]["nodeAffinity"])["nodeSelectorTerms"];
  ASSERT_EQ(terms.Size(), 1u);
  EXPECT_FALSE(terms[0].HasMember("matchExpressions"));
  ExpectPin(terms[0]["matchFields"], "node-3");
}

TEST(GateRemovalPatchTest, PinAddsNodeAffinityNextToPodAffinity) {
  api::Pod p = GatedPod();
  p.spec.affinity.emplace();  // e.g. only podAntiAffinity, kept as unknown fields
  auto d = Ops(GateRemovalPatch(p, kSchedulingGate, "n"));
  ASSERT_EQ(d.Size(), 4u);
  EXPECT_EQ(Op(d[3]), "add /spec/affinity/nodeAffinity");
  ExpectPin(RequiredIn(d[3]["value"])["nodeSelectorTerms"][0]["matchFields"], "n");
}

TEST(GateRemovalPatchTest, PinAddsRequiredNextToPreferredTerms) {
  api::Pod p = GatedPod();
  p.spec.affinity.emplace().node_affinity.emplace();  // preferred terms only
  auto d = Ops(GateRemovalPatch(p, kSchedulingGate, "n"));
  ASSERT_EQ(d.Size(), 4u);
  EXPECT_EQ(Op(d[3]),
            "add /spec/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution");
  ExpectPin(d[3]["value"]["nodeSelectorTerms"][0]["matchFields"], "n");
}

TEST(GateRemovalPatchTest, PinIsAndedIntoEveryExistingTerm) {
  api::Pod p = GatedPod();
  auto& req = p.spec.affinity.emplace()
                  .node_affinity.emplace()
                  .required_during_scheduling_ignored_during_execution.emplace();
  req.node_selector_terms = {Term("gpu", /*with_field=*/true), Term("zone", false)};
  auto d = Ops(GateRemovalPatch(p, kSchedulingGate, "node-9"));
  ASSERT_EQ(d.Size(), 5u);
  const std::string terms =
      "/spec/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/"
      "nodeSelectorTerms/";
  // Appended after the term's own field requirement; a new list where the term had none.
  EXPECT_EQ(Op(d[3]), "add " + terms + "0/matchFields/-");
  ASSERT_TRUE(d[3]["value"].IsObject());
  ExpectPin(d[3]["value"], "node-9");
  EXPECT_EQ(Op(d[4]), "add " + terms + "1/matchFields");
  ASSERT_TRUE(d[4]["value"].IsArray());
  ExpectPin(d[4]["value"], "node-9");
}

TEST(GateRemovalPatchTest, NoPinIntoARequiredAffinityWithoutTerms) {
  api::Pod p = GatedPod();
  p.spec.affinity.emplace()
      .node_affinity.emplace()
      .required_during_scheduling_ignored_during_execution.emplace();
  auto d = Ops(GateRemovalPatch(p, kSchedulingGate, "n"));
  ASSERT_EQ(d.Size(), 2u);
  EXPECT_EQ(Op(d[1]), "remove /spec/schedulingGates/1");
}

TEST(SelectsOnlyNodeTest, OnlyASingleNameRequirementForThatNode) {
  api::NodeSelector s;
  api::NodeSelectorTerm t;
  api::NodeSelectorRequirement r;
  r.key = "metadata.name";
  r.operator_ = "In";
  r.values = {"a"};
  t.match_fields.push_back(r);
  s.node_selector_terms.push_back(t);
  EXPECT_TRUE(SelectsOnlyNode(s, "a"));
  EXPECT_FALSE(SelectsOnlyNode(s, "b"));
  EXPECT_FALSE(SelectsOnlyNode(std::nullopt, "a"));
  auto two_values = s;
  two_values.node_selector_terms[0].match_fields[0].values.push_back("b");
  EXPECT_FALSE(SelectsOnlyNode(two_values, "a"));
  auto two_terms = s;
  two_terms.node_selector_terms.push_back(t);
  EXPECT_FALSE(SelectsOnlyNode(two_terms, "a"));
  auto not_in = s;
  not_in.node_selector_terms[0].match_fields[0].operator_ = "NotIn";
  EXPECT_FALSE(SelectsOnlyNode(not_in, "a"));
  auto with_label = s;
  with_label.node_selector_terms[0].match_expressions.push_back(
      Term("zone", false).match_expressions[0]);
  EXPECT_FALSE(SelectsOnlyNode(with_label, "a"));
}

// Pod PATCHes answer from a script; GET returns `live`.
class PodPatchClient : public k8s::RestClient {
 public:
  std::vector<Status> patch_results;  // in order; OK = the patched pod
  std::vector<std::string> patches;
  int gets = 0;
  api::Pod live;
  k8s::PatchType last_type = k8s::PatchType::kMergePatch;
  std::string last_manager, last_subresource;

  StatusOr<std::string> Patch(const k8s::GroupVersionResource&, std::string_view, std::string_view,
                              k8s::PatchType type, std::string_view body,
                              const k8s::PatchOptions& opts,
                              std::string_view subresource) override {
    patches.emplace_back(body);
    last_type = type;
    last_manager = opts.field_manager;
    last_subresource = subresource;
    Status st =
        patches.size() <= patch_results.size() ? patch_results[patches.size() - 1] : OkStatus();
    if (!st.ok()) return st;
    api::Pod done = live;
    done.spec.scheduling_gates.clear();
    return api::Encode(done);
  }
  StatusOr<std::string> Get(const k8s::GroupVersionResource&, std::string_view, std::string_view,
                            const k8s::GetOptions&) override {
    ++gets;
    return api::Encode(live);
  }
  StatusOr<k8s::ObjectList> List(const k8s::GroupVersionResource&, std::string_view,
                                 const k8s::ListOptions&) override {
    return UnimplementedError("list");
  }
  StatusOr<std::unique_ptr<k8s::Watcher>> Watch(const k8s::GroupVersionResource&, std::string_view,
                                                const k8s::ListOptions&) override {
    return UnimplementedError("watch");
  }
  StatusOr<std::string> Create(const k8s::GroupVersionResource&, std::string_view, std::string_view,
                               const k8s::CreateOptions&) override {
    return UnimplementedError("create");
  }
  StatusOr<std::string> Update(const k8s::GroupVersionResource&, std::string_view, std::string_view,
                               std::string_view, const k8s::UpdateOptions&) override {
    return UnimplementedError("update");
  }
  StatusOr<std::string> UpdateStatus(const k8s::GroupVersionResource&, std::string_view,
                                     std::string_view, std::string_view,
                                     const k8s::UpdateOptions&) override {
    return UnimplementedError("update status");
  }
  StatusOr<std::string> Delete(const k8s::GroupVersionResource&, std::string_view, std::string_view,
                               const k8s::DeleteOptions&) override {
    return UnimplementedError("delete");
  }
};

api::Pod LivePod() {
  api::Pod p = GatedPod();
  p.metadata.uid = "uid-p";
  return p;
}

// A connection failure says nothing about the pin: the error goes back to be retried as it is,
// and the pin is not dropped as if the API server had refused it.
TEST(RemoveSchedulingGateTest, TransportFailureIsReturnedNotTakenForARefusal) {
  for (const Status& failure :
       {UnavailableError("PATCH /api/v1/namespaces/ns/pods/p: Connection reset by peer"),
        DeadlineExceededError("PATCH /api/v1/namespaces/ns/pods/p: request timed out"),
        k8s::ApiError{503, "ServiceUnavailable", "unavailable", {}, 1, "", "", ""}.ToStatus()}) {
    PodPatchClient client;
    client.live = LivePod();
    client.patch_results = {failure};
    RestApiWriter writer(client);
    auto r = writer.RemoveSchedulingGate(client.live, kSchedulingGate, "node-3");
    ASSERT_FALSE(r.ok()) << failure.ToString();
    EXPECT_TRUE(k8s::IsRetryable(r.status())) << r.status().ToString();
    EXPECT_EQ(client.patches.size(), 1u);
    EXPECT_EQ(client.gets, 0);
  }
}

TEST(PodClaimStatusesPatchTest, TestsTheUidThenSetsTheWholeList) {
  api::PodResourceClaimStatus a, b;
  a.name = "gpu";
  a.resource_claim_name = "p-gpu-x";
  b.name = "none";  // recorded without a claim (nothing needed)
  const std::vector<api::PodResourceClaimStatus> statuses{a, b};
  auto d = Ops(PodStatusPatch(LivePod(), &statuses, ""));
  ASSERT_EQ(d.Size(), 2u);
  EXPECT_EQ(Op(d[0]), "test /metadata/uid");
  EXPECT_STREQ(d[0]["value"].GetString(), "uid-p");
  EXPECT_EQ(Op(d[1]), "add /status/resourceClaimStatuses");
  const rapidjson::Value& v = d[1]["value"];
  ASSERT_EQ(v.Size(), 2u);
  EXPECT_STREQ(v[0]["name"].GetString(), "gpu");
  EXPECT_STREQ(v[0]["resourceClaimName"].GetString(), "p-gpu-x");
  EXPECT_STREQ(v[1]["name"].GetString(), "none");
  EXPECT_FALSE(v[1].HasMember("resourceClaimName"));
}

// The status write is a JSON patch of pods/status by draco's field manager, not an apply.
TEST(ApplyPodClaimStatusesTest, SendsTheJsonPatchToTheStatusSubresource) {
  PodPatchClient client;
  client.live = LivePod();
  RestApiWriter writer(client);
  api::PodResourceClaimStatus a;
  a.name = "gpu";
  a.resource_claim_name = "p-gpu-x";
  ASSERT_TRUE(writer.ApplyPodClaimStatuses(client.live, {a}).ok());
  ASSERT_EQ(client.patches.size(), 1u);
  const std::vector<api::PodResourceClaimStatus> statuses{a};
  EXPECT_EQ(client.patches[0], PodStatusPatch(client.live, &statuses, ""));
  EXPECT_EQ(client.last_type, k8s::PatchType::kJsonPatch);
  EXPECT_EQ(client.last_subresource, "status");
  EXPECT_EQ(client.last_manager, kFieldManager);
}

// NominatePod: the nominated node alone, or with the statuses, in one patch of pods/status.
TEST(NominatePodTest, SetsTheNominatedNodeWithOrWithoutTheStatuses) {
  api::PodResourceClaimStatus a;
  a.name = "gpu";
  a.resource_claim_name = "p-gpu-x";
  std::vector<api::PodResourceClaimStatus> statuses{a};
  auto both = Ops(PodStatusPatch(LivePod(), &statuses, "node-3"));
  ASSERT_EQ(both.Size(), 3u);
  EXPECT_EQ(Op(both[0]), "test /metadata/uid");
  EXPECT_EQ(Op(both[1]), "add /status/resourceClaimStatuses");
  EXPECT_EQ(Op(both[2]), "add /status/nominatedNodeName");
  EXPECT_STREQ(both[2]["value"].GetString(), "node-3");
  auto node_only = Ops(PodStatusPatch(LivePod(), nullptr, "node-3"));
  ASSERT_EQ(node_only.Size(), 2u);
  EXPECT_EQ(Op(node_only[1]), "add /status/nominatedNodeName");

  PodPatchClient client;
  client.live = LivePod();
  RestApiWriter writer(client);
  ASSERT_TRUE(writer.NominatePod(client.live, &statuses, "node-3").ok());
  ASSERT_EQ(client.patches.size(), 1u);
  EXPECT_EQ(client.patches[0], PodStatusPatch(client.live, &statuses, "node-3"));
  EXPECT_EQ(client.last_type, k8s::PatchType::kJsonPatch);
  EXPECT_EQ(client.last_subresource, "status");
}

TEST(RemoveSchedulingGateTest, RefusedPinIsDroppedWhenThePodHasNotChanged) {
  PodPatchClient client;
  client.live = LivePod();
  client.patch_results = {
      k8s::ApiError{422, "Invalid", "spec: Forbidden", {}, 0, "", "", ""}.ToStatus()};
  RestApiWriter writer(client);
  auto r = writer.RemoveSchedulingGate(client.live, kSchedulingGate, "node-3");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(client.patches.size(), 2u);
  EXPECT_NE(client.patches[0].find("node-3"), std::string::npos);
  EXPECT_EQ(client.patches[1].find("node-3"), std::string::npos);  // the gate without the pin
  EXPECT_EQ(client.gets, 1);
}

}  // namespace
}  // namespace draco::reconcilers
