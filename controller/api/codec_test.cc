#include "controller/api/codec.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>

namespace draco::api {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Pretty(const std::string& json) {
  rapidjson::Document doc;
  doc.Parse(json.c_str());
  rapidjson::StringBuffer buf;
  rapidjson::PrettyWriter<rapidjson::StringBuffer> w(buf);
  w.SetIndent(' ', 2);
  doc.Accept(w);
  return std::string(buf.GetString()) + "\n";
}

// Decodes tests/golden/api/<name>.input.{yaml,json}, encodes it, and compares the pretty-printed
// JSON with <name>.golden.json (UPDATE_GOLDEN=1 rewrites it). Also checks that the golden decodes
// to the same object and re-encodes byte-identically.
template <class T>
void GoldenRoundTrip(const std::string& name, const std::string& ext = "yaml") {
  SCOPED_TRACE(name);
  const std::string dir = std::string(DRACO_SOURCE_DIR) + "/tests/golden/api/";
  std::string input = ReadFile(dir + name + ".input." + ext);
  ASSERT_FALSE(input.empty());
  StatusOr<T> obj = DecodeYaml<T>(input);
  ASSERT_TRUE(obj.ok()) << obj.status();
  std::string encoded = Pretty(Encode(*obj));
  const std::string golden_path = dir + name + ".golden.json";
  if (std::getenv("UPDATE_GOLDEN") != nullptr) {
    std::ofstream(golden_path) << encoded;
  }
  std::string golden = ReadFile(golden_path);
  EXPECT_EQ(encoded, golden) << "run with UPDATE_GOLDEN=1 to accept";
  StatusOr<T> again = Decode<T>(golden);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(*again == *obj);
  EXPECT_EQ(Pretty(Encode(*again)), golden);
}

TEST(CodecGoldenTest, DeviceClass) { GoldenRoundTrip<DeviceClass>("deviceclass"); }
TEST(CodecGoldenTest, ResourceClaim) { GoldenRoundTrip<ResourceClaim>("resourceclaim"); }
TEST(CodecGoldenTest, ResourceClaimTemplate) {
  GoldenRoundTrip<ResourceClaimTemplate>("resourceclaimtemplate");
}
TEST(CodecGoldenTest, ResourceSlice) { GoldenRoundTrip<ResourceSlice>("resourceslice"); }
TEST(CodecGoldenTest, ResourceSliceCountersJson) {
  GoldenRoundTrip<ResourceSlice>("resourceslice-counters", "json");
}
TEST(CodecGoldenTest, DeviceTaintRule) { GoldenRoundTrip<DeviceTaintRule>("devicetaintrule"); }
TEST(CodecGoldenTest, Pod) { GoldenRoundTrip<Pod>("pod"); }
TEST(CodecGoldenTest, Node) { GoldenRoundTrip<Node>("node"); }

TEST(CodecTest, DecodesTypedFields) {
  StatusOr<ResourceClaim> c = DecodeYaml<ResourceClaim>(
      ReadFile(std::string(DRACO_SOURCE_DIR) + "/tests/golden/api/resourceclaim.input.yaml"));
  ASSERT_TRUE(c.ok()) << c.status();
  const DeviceRequest& gpu = c->spec.devices.requests[0];
  ASSERT_TRUE(gpu.exactly.has_value());
  EXPECT_EQ(gpu.exactly->count, 2);
  EXPECT_EQ(gpu.exactly->admin_access, false);
  EXPECT_EQ(gpu.exactly->capacity->requests.at("memory").ToString(), "10Gi");
  EXPECT_EQ(gpu.exactly->tolerations[1].toleration_seconds, 300);
  EXPECT_EQ(c->spec.devices.requests[1].first_available[0].allocation_mode, "All");
  EXPECT_EQ(c->spec.devices.constraints[0].match_attribute, "example.com/numa");
  EXPECT_EQ(c->spec.devices.config[0].opaque->parameters.json, R"({"b":2})");
  const AllocationResult& alloc = *c->status.allocation;
  EXPECT_EQ(alloc.devices.results[0].share_id, "4e1d7f52-0000-4000-8000-0000000000aa");
  EXPECT_EQ(alloc.devices.results[0].consumed_capacity.at("cores").ToString(), "0");
  EXPECT_EQ(alloc.node_selector->node_selector_terms[0].match_fields[0].values[0], "node-1");
  EXPECT_EQ(c->status.devices[0].network_data->ips[0], "10.0.0.5/24");
  EXPECT_EQ(c->metadata.deletion_timestamp, "2026-07-02T00:00:00Z");
  EXPECT_EQ(c->metadata.owner_references[0].controller, true);
}

TEST(CodecTest, ErrorsNameTheFieldPath) {
  const struct {
    std::string json;
    std::string message;
  } cases[] = {
      {R"({"spec":{"devices":{"requests":[{"name":"a","exactly":{"count":"2"}}]}}})",
       "spec.devices.requests[0].exactly.count: expected integer"},
      {R"({"spec":{"devices":{"requests":[{"name":"a","exactly":{"count":1.5}}]}}})",
       "spec.devices.requests[0].exactly.count: expected integer"},
      {R"({"spec":{"devices":{"requests":{}}}})", "spec.devices.requests: expected array"},
      {R"({"metadata":{"labels":{"a":1}}})", "metadata.labels.a: expected string"},
      {R"({"spec":{"devices":{"requests":[{"exactly":{"capacity":{"requests":{"m":"1mi"}}}}]}}})",
       "spec.devices.requests[0].exactly.capacity.requests.m: unable to parse quantity's suffix"},
      {R"({"spec":{"devices":{"requests":[{"exactly":{"adminAccess":"yes"}}]}}})",
       "spec.devices.requests[0].exactly.adminAccess: expected boolean"},
      {R"([])", "expected object"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.json);
    StatusOr<ResourceClaim> r = Decode<ResourceClaim>(c.json);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().message(), c.message);
  }
  EXPECT_FALSE(Decode<ResourceClaim>("{").ok());
  EXPECT_FALSE(Decode<ResourceClaim>("{} x").ok());
}

TEST(CodecTest, NullIsAbsentAndQuantityAcceptsNumbers) {
  StatusOr<ResourceSlice> s = Decode<ResourceSlice>(
      R"({"spec":{"nodeName":null,"devices":[{"name":"d","capacity":{"m":{"value":2.5}},)"
      R"("attributes":{"x":{"int":null,"string":"s"}}}]}})");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_FALSE(s->spec.node_name.has_value());
  EXPECT_EQ(s->spec.devices[0].capacity.at("m").value.ToString(), "2500m");
  EXPECT_FALSE(s->spec.devices[0].attributes.at("x").int_value.has_value());
  EXPECT_EQ(s->spec.devices[0].attributes.at("x").string_value, "s");
}

TEST(CodecTest, UnknownFieldsSurviveModifyAndEncode) {
  std::string in =
      R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"c",)"
      R"("managedFields":[{"manager":"x"}]},"spec":{"devices":{"requests":[{"name":"r",)"
      R"("exactly":{"deviceClassName":"c","newKnob":{"deep":[1,2,{"z":null}]}}}]}},"extra":true})";
  StatusOr<ResourceClaim> c = Decode<ResourceClaim>(in);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->metadata.unknown.members.size(), 1u);
  c->status.reserved_for.push_back({"", "pods", "p", "u", {}});
  std::string out = Encode(*c);
  EXPECT_NE(out.find(R"("managedFields":[{"manager":"x"}])"), std::string::npos) << out;
  EXPECT_NE(out.find(R"("newKnob":{"deep":[1,2,{"z":null}]})"), std::string::npos) << out;
  EXPECT_NE(out.find(R"("extra":true)"), std::string::npos) << out;
  EXPECT_NE(out.find(R"("reservedFor":[{"resource":"pods","name":"p","uid":"u"}])"),
            std::string::npos)
      << out;
  StatusOr<ResourceClaim> back = Decode<ResourceClaim>(out);
  ASSERT_TRUE(back.ok());
  EXPECT_TRUE(*back == *c);
}

TEST(CodecTest, DecodeSkippingManagedFieldsDropsOnlyTheRootMetadatasManagedFields) {
  // managedFields at the root's metadata is dropped (whatever its value, wherever in metadata);
  // the same name anywhere else (a label, a nested object's metadata) is data and stays.
  std::string in =
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","managedFields":[{"manager":)"
      R"("kcm","fieldsV1":{"f:status":{"f:x":{}}},"time":"t"},{"manager":"s","n":[1,[2],{}]}],)"
      R"("labels":{"managedFields":"kept"},"uid":"u"},"spec":{"containers":[{"name":"c",)"
      R"("image":"i"}],"extra":{"metadata":{"managedFields":[1]}}},"status":{"phase":"Pending"}})";
  StatusOr<Pod> full = Decode<Pod>(in);
  StatusOr<Pod> lean = DecodeSkippingManagedFields<Pod>(in);
  ASSERT_TRUE(full.ok()) << full.status();
  ASSERT_TRUE(lean.ok()) << lean.status();
  ASSERT_EQ(full->metadata.unknown.members.size(), 1u);
  EXPECT_EQ(full->metadata.unknown.members[0].first, "managedFields");
  EXPECT_TRUE(lean->metadata.unknown.empty());
  Pod expect = *full;
  expect.metadata.unknown.members.clear();
  EXPECT_TRUE(*lean == expect);
  EXPECT_EQ(lean->metadata.labels.at("managedFields"), "kept");
  EXPECT_EQ(lean->metadata.uid, "u");
  EXPECT_NE(Encode(*lean).find(R"("extra":{"metadata":{"managedFields":[1]}})"), std::string::npos);
  // Scalar and null values, and the member as the last one of metadata.
  for (std::string v : {"null", "7", "\"x\"", "{}"}) {
    auto p = DecodeSkippingManagedFields<Pod>(R"({"metadata":{"name":"p","managedFields":)" + v +
                                              R"(},"status":{"phase":"Running"}})");
    ASSERT_TRUE(p.ok()) << v << ": " << p.status();
    EXPECT_EQ(p->metadata.name, "p") << v;
    EXPECT_TRUE(p->metadata.unknown.empty()) << v;
    EXPECT_EQ(p->status.phase, "Running") << v;
  }
  // Errors are Decode's.
  for (std::string bad : {R"({"metadata":{"managedFields":[}})", "[1]", R"({"metadata":7})"}) {
    auto a = Decode<Pod>(bad);
    auto b = DecodeSkippingManagedFields<Pod>(bad);
    ASSERT_FALSE(b.ok()) << bad;
    EXPECT_EQ(a.status().ToString(), b.status().ToString()) << bad;
  }
}

TEST(CodecTest, PodOverheadPodResourcesAndSidecarRestartPolicyRoundTrip) {
  std::string in =
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"initContainers":[)"
      R"({"name":"side","image":"i","resources":{"requests":{"cpu":"250m"}},)"
      R"("restartPolicy":"Always","restartPolicyRules":[{"action":"Restart"}]},)"
      R"({"name":"setup","image":"i"}],"containers":[{"name":"c","image":"i"}],)"
      R"("overhead":{"cpu":"100m","memory":"64Mi"},)"
      R"("resources":{"requests":{"cpu":"2","memory":"1Gi"},"limits":{"cpu":"3"},"future":1},)"
      R"("runtimeClassName":"kata"}})";
  StatusOr<Pod> p = Decode<Pod>(in);
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->spec.init_containers.size(), 2u);
  EXPECT_EQ(p->spec.init_containers[0].restart_policy, std::optional<std::string>("Always"));
  EXPECT_EQ(p->spec.init_containers[0].unknown.members.size(), 1u);  // restartPolicyRules
  EXPECT_FALSE(p->spec.init_containers[1].restart_policy.has_value());
  EXPECT_FALSE(p->spec.containers[0].restart_policy.has_value());
  EXPECT_EQ(p->spec.overhead.at("cpu").ToString(), "100m");
  EXPECT_EQ(p->spec.overhead.at("memory").ToString(), "64Mi");
  ASSERT_TRUE(p->spec.resources.has_value());
  EXPECT_EQ(p->spec.resources->requests.at("cpu").ToString(), "2");
  EXPECT_EQ(p->spec.resources->requests.at("memory").ToString(), "1Gi");
  EXPECT_EQ(p->spec.resources->limits.at("cpu").ToString(), "3");
  EXPECT_EQ(p->spec.resources->unknown.members.size(), 1u);  // future
  ASSERT_EQ(p->spec.unknown.members.size(), 1u);             // runtimeClassName
  EXPECT_EQ(p->spec.unknown.members[0].first, "runtimeClassName");

  std::string out = Encode(*p);
  EXPECT_NE(out.find(R"("restartPolicy":"Always")"), std::string::npos) << out;
  EXPECT_NE(out.find(R"("restartPolicyRules":[{"action":"Restart"}])"), std::string::npos) << out;
  EXPECT_NE(out.find(R"("overhead":{"cpu":"100m","memory":"64Mi"})"), std::string::npos) << out;
  EXPECT_NE(out.find(R"("resources":{"limits":{"cpu":"3"},"requests":{"cpu":"2","memory":"1Gi"},)"
                     R"("future":1})"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find(R"("runtimeClassName":"kata")"), std::string::npos) << out;
  StatusOr<Pod> back = Decode<Pod>(out);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(*back == *p);
  EXPECT_EQ(Encode(*back), out);

  // Absent stays absent; an explicitly empty pod-level resources object survives.
  StatusOr<Pod> plain = Decode<Pod>(R"({"spec":{"containers":[{"name":"c"}]}})");
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_FALSE(plain->spec.resources.has_value());
  EXPECT_TRUE(plain->spec.overhead.empty());
  EXPECT_EQ(Encode(plain->spec), R"({"containers":[{"name":"c"}]})");
  StatusOr<Pod> empty = Decode<Pod>(R"({"spec":{"resources":{}}})");
  ASSERT_TRUE(empty.ok()) << empty.status();
  ASSERT_TRUE(empty->spec.resources.has_value());
  EXPECT_EQ(Encode(empty->spec), R"({"resources":{}})");
}

TEST(CodecTest, OptionalZeroValuesAreWritten) {
  ExactDeviceRequest r;
  r.count = 0;
  r.admin_access = false;
  EXPECT_EQ(Encode(r), R"({"count":0,"adminAccess":false})");
  DeviceAttribute a;
  a.ints = std::vector<int64_t>{};
  EXPECT_EQ(Encode(a), R"({"ints":[]})");
}

TEST(CodecTest, YamlScalarResolution) {
  StatusOr<std::string> j = YamlToJson(
      "a: yes\nb: 'yes'\nc: 0x1F\nd: 0o17\ne: 017\nf: 1_000\ng: 1.5\nh: ~\ni: 1.2.3\n"
      "j: \"1\"\nk: -.5e1\nl: 99999999999999999999\nm: off\n1: x\n");
  ASSERT_TRUE(j.ok()) << j.status();
  EXPECT_EQ(*j, R"({"a":true,"b":"yes","c":31,"d":15,"e":15,"f":1000,"g":1.5,"h":null,"i":"1.2.3",)"
                R"("j":"1","k":-5.0,"l":100000000000000000000.0,"m":false,"1":"x"})");
}

TEST(CodecTest, ManifestsDispatchByKind) {
  std::string yaml = R"(---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: a}
---
# an empty document is skipped
---
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Node, metadata: {name: n1}}
- {apiVersion: v1, kind: ConfigMap, metadata: {name: cm}, data: {k: v}}
---
{"apiVersion": "resource.k8s.io/v1beta1", "kind": "ResourceClaim", "metadata": {"name": "old"}}
)";
  StatusOr<std::vector<Manifest>> m = DecodeManifests(yaml);
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_EQ(m->size(), 4u);
  EXPECT_EQ(std::get<DeviceClass>((*m)[0].object).metadata.name, "a");
  EXPECT_EQ(std::get<Node>((*m)[1].object).metadata.name, "n1");
  EXPECT_TRUE(std::holds_alternative<std::monostate>((*m)[2].object));
  EXPECT_EQ((*m)[2].raw_json,
            R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm"},"data":{"k":"v"}})");
  // An older served version is converted to v1, as the API server stores it.
  EXPECT_EQ(std::get<ResourceClaim>((*m)[3].object).metadata.name, "old");
  EXPECT_EQ((*m)[3].api_version, "resource.k8s.io/v1");

  StatusOr<std::vector<Manifest>> bad = DecodeManifests(
      "apiVersion: v1\nkind: Node\n---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\n"
      "spec: {devices: {requests: [{name: a, exactly: {count: many}}]}}\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "document 2: spec.devices.requests[0].exactly.count: expected integer");
  EXPECT_EQ(DecodeManifests("kind: Node\n").status().message(),
            "document 1: apiVersion: expected string");
  EXPECT_FALSE(DecodeManifests("a: [1, 2\n").ok());
}

TEST(CodecTest, RejectsStrayCommasThatHangYamlCpp) {
  // yaml-cpp 0.7 never returns on these; they are invalid YAML, so they must fail fast.
  for (std::string_view y : {",", ", a", "'x',", "\"x\",", "[a],", "  ,", "&x ,", "- a\n,",
                             "---\n,", "a: b\n---\n,", "a: b\n...\n,"}) {
    SCOPED_TRACE(std::string(y));
    EXPECT_EQ(DecodeManifests(y).status().message(), "invalid YAML: ',' outside a flow collection");
  }
  EXPECT_EQ(DecodeManifests(std::string_view("\0\0, a: b", 8)).status().message(),
            "invalid YAML: control character in input");
  // Commas in plain scalars, quotes, flow collections, comments and block scalars are fine.
  StatusOr<std::string> j = YamlToJson(
      "a: b, c\nd: 'x, y'\ne: [1, 2]\nf: {g: h, i: j} # k, l\nm: |\n  ,n\n  ,o\np: it's, ok\n");
  ASSERT_TRUE(j.ok()) << j.status();
  EXPECT_EQ(*j, R"({"a":"b, c","d":"x, y","e":[1,2],"f":{"g":"h","i":"j"},"m":",n\n,o\n",)"
                R"("p":"it's, ok"})");
}

TEST(CodecTest, JsonInputIsDecodedAsJsonNotYaml) {
  // As kubectl: a manifest starting with '{' is JSON. Malformed JSON gets a JSON error (and never
  // reaches yaml-cpp, which loops forever on some broken flow collections).
  StatusOr<std::vector<Manifest>> m = DecodeManifests(
      "  {\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"DeviceClass\","
      "\"metadata\":{\"name\":\"gpu\"}}");
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_EQ(m->size(), 1u);
  std::string broken =
      "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":#\"ResourceSlice\",\"metadate\":{rce\"\","
      "\"name\":+node\":\"gpu- - name: slow\n        de-1\",\"generation\":3}";
  StatusOr<std::vector<Manifest>> bad = DecodeManifests(broken);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message().rfind("invalid JSON at offset", 0), 0u) << bad.status();
  EXPECT_FALSE(YamlToJson(broken).ok());
  EXPECT_FALSE(DecodeYaml<DeviceClass>(broken).ok());
  // A YAML flow mapping at the start is JSON to kubectl too, so it is rejected as JSON.
  EXPECT_FALSE(DecodeManifests("{a: b},").ok());
}

TEST(CodecTest, RejectsPathologicalNesting) {
  std::string deep(10000, '[');
  deep += std::string(10000, ']');
  EXPECT_FALSE(Decode<Pod>(deep).ok());
  std::string yaml_deep;
  for (int i = 0; i < 2000; ++i) yaml_deep += "[";
  for (int i = 0; i < 2000; ++i) yaml_deep += "]";
  EXPECT_FALSE(DecodeManifests(yaml_deep).ok());
  // Alias expansion ("billion laughs") is bounded.
  std::string laughs = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  char prev = 'a';
  for (char c = 'b'; c <= 'k'; ++c) {
    laughs += std::string(1, c) + ": &" + c + " [";
    for (int i = 0; i < 10; ++i) laughs += std::string(i ? ", *" : "*") + prev;
    laughs += "]\n";
    prev = c;
  }
  EXPECT_FALSE(YamlToJson(laughs).ok());
}

TEST(CodecTest, PodConditionsDecodeWithNullProbeTime) {
  // kube-scheduler's report of a failed attempt, as the API server serves it.
  StatusOr<Pod> p = Decode<Pod>(
      R"({"status":{"phase":"Pending","conditions":[{"type":"PodScheduled","status":"False",)"
      R"("lastProbeTime":null,"lastTransitionTime":"2026-01-02T03:04:05Z","reason":)"
      R"("Unschedulable","message":"0/4 nodes are available: 1 node(s) didn't match)"
      R"( Pod's node affinity/selector.","observedGeneration":1}]}})");
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->status.conditions.size(), 1u);
  const PodCondition& c = p->status.conditions[0];
  EXPECT_EQ(c.type, "PodScheduled");
  EXPECT_EQ(c.status, "False");
  EXPECT_EQ(c.reason, "Unschedulable");
  EXPECT_EQ(c.message,
            "0/4 nodes are available: 1 node(s) didn't match Pod's node affinity/selector.");
  EXPECT_EQ(c.last_transition_time, "2026-01-02T03:04:05Z");
  EXPECT_TRUE(c.last_probe_time.empty());
  ASSERT_EQ(c.unknown.members.size(), 1u);
  EXPECT_EQ(c.unknown.members[0].first, "observedGeneration");
}

}  // namespace
}  // namespace draco::api

namespace draco::api {
namespace {

TEST(CodecSchedulingTest, PodConstraintsAndStorageObjectsRoundTrip) {
  auto pod = Decode<Pod>(R"({"metadata":{"name":"p"},"spec":{"affinity":{"podAntiAffinity":{
      "requiredDuringSchedulingIgnoredDuringExecution":[{"labelSelector":{"matchLabels":{
      "app":"x"}},"topologyKey":"kubernetes.io/hostname","namespaceSelector":{}}],
      "preferredDuringSchedulingIgnoredDuringExecution":[]}},"topologySpreadConstraints":[{
      "maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule","minDomains":2,
      "matchLabelKeys":["rev"]}],"volumes":[{"name":"v","persistentVolumeClaim":{"claimName":"c"}},
      {"name":"e","emptyDir":{}}],"containers":[{"name":"c","ports":[{"containerPort":80,
      "hostPort":8080}]}]},"status":{"nominatedNodeName":"n","containerStatuses":[{"name":"c",
      "allocatedResources":{"cpu":"2"},"ready":true}]}})");
  ASSERT_TRUE(pod.ok()) << pod.status().message();
  const auto& anti =
      pod->spec.affinity->pod_anti_affinity->required_during_scheduling_ignored_during_execution;
  ASSERT_EQ(anti.size(), 1u);
  EXPECT_TRUE(anti[0].namespace_selector.has_value());
  EXPECT_EQ(pod->spec.topology_spread_constraints[0].min_domains, 2);
  EXPECT_EQ(pod->spec.volumes[0].persistent_volume_claim->claim_name, "c");
  EXPECT_EQ(pod->spec.containers[0].ports[0].host_port, 8080);
  EXPECT_EQ(pod->status.container_statuses[0].allocated_resources.at("cpu").MilliValue(), 2000);
  auto again = Decode<Pod>(Encode(*pod));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *pod);
  EXPECT_NE(Encode(*pod).find("\"emptyDir\":{}"), std::string::npos);

  auto pv = Decode<PersistentVolume>(R"({"metadata":{"name":"pv"},"spec":{"capacity":{
      "storage":"1Gi"},"claimRef":{"namespace":"ns","name":"c"},"nodeAffinity":{"required":{
      "nodeSelectorTerms":[{"matchExpressions":[{"key":"k","operator":"In","values":["a"]}]}]}},
      "hostPath":{"path":"/x"}},"status":{"phase":"Bound"}})");
  ASSERT_TRUE(pv.ok()) << pv.status().message();
  EXPECT_EQ(pv->spec.claim_ref->name, "c");
  EXPECT_EQ(*Decode<PersistentVolume>(Encode(*pv)), *pv);
  auto sc = Decode<StorageClass>(R"({"metadata":{"name":"s"},"provisioner":"p",
      "volumeBindingMode":"WaitForFirstConsumer","allowedTopologies":[{"matchLabelExpressions":[
      {"key":"zone","values":["a"]}]}]})");
  ASSERT_TRUE(sc.ok());
  EXPECT_EQ(sc->allowed_topologies[0].match_label_expressions[0].values[0], "a");
  auto csi = Decode<CSINode>(R"({"metadata":{"name":"n"},"spec":{"drivers":[{"name":"d",
      "nodeID":"n","allocatable":{"count":3}}]}})");
  ASSERT_TRUE(csi.ok());
  EXPECT_EQ(csi->spec.drivers[0].allocatable->count, 3);
  EXPECT_FALSE(Decode<PersistentVolumeClaim>(R"({"spec":{"volumeName":3}})").ok());
}

TEST(CodecSchedulingTest, PodGroupAndPodSchedulingGroupRoundTrip) {
  auto pg = Decode<PodGroup>(R"({"apiVersion":"scheduling.k8s.io/v1beta1","kind":"PodGroup",
      "metadata":{"name":"g","namespace":"ns","uid":"u1"},"spec":{"schedulingPolicy":{"gang":{
      "minCount":2}},"resourceClaims":[{"name":"gpu","resourceClaimTemplateName":"t"},
      {"name":"shared","resourceClaimName":"c"}]},"status":{"conditions":[],
      "resourceClaimStatuses":[{"name":"gpu","resourceClaimName":"g-gpu-x1"}]}})");
  ASSERT_TRUE(pg.ok()) << pg.status().message();
  ASSERT_EQ(pg->spec.resource_claims.size(), 2u);
  EXPECT_EQ(pg->spec.resource_claims[0].resource_claim_template_name, "t");
  EXPECT_FALSE(pg->spec.resource_claims[0].resource_claim_name.has_value());
  EXPECT_EQ(pg->spec.resource_claims[1].resource_claim_name, "c");
  EXPECT_EQ(pg->status.resource_claim_statuses[0].resource_claim_name, "g-gpu-x1");
  ASSERT_TRUE(pg->spec.scheduling_policy && pg->spec.scheduling_policy->gang);
  EXPECT_EQ(pg->spec.scheduling_policy->gang->min_count, 2);
  std::string enc = Encode(*pg);
  EXPECT_NE(enc.find("\"minCount\":2"), std::string::npos) << enc;  // unknown fields survive
  EXPECT_EQ(*Decode<PodGroup>(enc), *pg);
  EXPECT_FALSE(Decode<PodGroup>(R"({"spec":{"resourceClaims":[{"name":3}]}})").ok());

  auto pod = Decode<Pod>(R"({"metadata":{"name":"p"},"spec":{"schedulingGroup":{
      "podGroupName":"g"}}})");
  ASSERT_TRUE(pod.ok()) << pod.status().message();
  EXPECT_EQ(pod->spec.scheduling_group->pod_group_name, "g");
  EXPECT_EQ(*Decode<Pod>(Encode(*pod)), *pod);
}

}  // namespace
}  // namespace draco::api
