// Benchmark of decoding a pod watch event's object, with and without metadata.managedFields
// (issue #18: pods carry managedFields, and draco reads nothing of them).
//
// The pod is shaped like the throughput benchmark's pods (tests/bench/throughput) once bound: one
// claim from a template, a scheduling gate removed with a node pin, resourceClaimStatuses, the
// scheduler's condition, and the managedFields entries the API server keeps for the creating
// client, draco (apply and update), kube-scheduler and the kubelet's status update.
#include <string>

#include <benchmark/benchmark.h>

#include "controller/api/codec.h"

namespace {

const std::string& BoundPodJson() {
  static const std::string kPod = R"({"kind":"Pod","apiVersion":"v1","metadata":{
"name":"p-1234","namespace":"bench-draco","uid":"0b6a7f6e-2c5d-4d8e-9a43-3f0e2b1c9d77",
"resourceVersion":"184467","creationTimestamp":"2026-12-06T08:00:00Z",
"managedFields":[
{"manager":"throughput","operation":"Update","apiVersion":"v1","time":"2026-12-06T08:00:00Z",
 "fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:containers":{"k:{\"name\":\"c\"}":{".":{},
 "f:image":{},"f:imagePullPolicy":{},"f:name":{},"f:resources":{"f:claims":{".":{},
 "k:{\"name\":\"gpu\"}":{".":{},"f:name":{}}}},"f:terminationMessagePath":{},
 "f:terminationMessagePolicy":{}}},"f:dnsPolicy":{},"f:enableServiceLinks":{},
 "f:nodeSelector":{},"f:resourceClaims":{".":{},"k:{\"name\":\"gpu\"}":{".":{},"f:name":{},
 "f:resourceClaimTemplateName":{}}},"f:restartPolicy":{},"f:schedulerName":{},
 "f:securityContext":{},"f:terminationGracePeriodSeconds":{}}}},
{"manager":"draco","operation":"Apply","apiVersion":"v1","time":"2026-12-06T08:00:01Z",
 "fieldsType":"FieldsV1","fieldsV1":{"f:status":{"f:resourceClaimStatuses":{
 "k:{\"name\":\"gpu\"}":{".":{},"f:name":{},"f:resourceClaimName":{}}}}},
 "subresource":"status"},
{"manager":"draco","operation":"Update","apiVersion":"v1","time":"2026-12-06T08:00:01Z",
 "fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:affinity":{".":{},"f:nodeAffinity":{".":{},
 "f:requiredDuringSchedulingIgnoredDuringExecution":{}}}}}},
{"manager":"kube-scheduler","operation":"Update","apiVersion":"v1",
 "time":"2026-12-06T08:00:02Z","fieldsType":"FieldsV1","fieldsV1":{"f:status":{
 "f:conditions":{".":{},"k:{\"type\":\"PodScheduled\"}":{".":{},"f:lastProbeTime":{},
 "f:lastTransitionTime":{},"f:status":{},"f:type":{}}}}},"subresource":"status"},
{"manager":"throughput","operation":"Update","apiVersion":"v1","time":"2026-12-06T08:00:02Z",
 "fieldsType":"FieldsV1","fieldsV1":{"f:status":{"f:phase":{}}},"subresource":"status"}]},
"spec":{"resourceClaims":[{"name":"gpu","resourceClaimTemplateName":"gpu"}],
"containers":[{"name":"c","image":"registry.invalid/ml:1","resources":{"claims":[{"name":"gpu"}]},
"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File",
"imagePullPolicy":"IfNotPresent"}],"restartPolicy":"Always","terminationGracePeriodSeconds":30,
"dnsPolicy":"ClusterFirst","nodeSelector":{"draco.dev/bench":"true"},
"nodeName":"bench-node-17","securityContext":{},
"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{
"nodeSelectorTerms":[{"matchFields":[{"key":"metadata.name","operator":"In",
"values":["bench-node-17"]}]}]}}},"schedulerName":"default-scheduler",
"tolerations":[{"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute",
"tolerationSeconds":300},{"key":"node.kubernetes.io/unreachable","operator":"Exists",
"effect":"NoExecute","tolerationSeconds":300}],"priority":0,"enableServiceLinks":true,
"preemptionPolicy":"PreemptLowerPriority"},
"status":{"phase":"Pending","conditions":[{"type":"PodScheduled","status":"True",
"lastProbeTime":null,"lastTransitionTime":"2026-12-06T08:00:02Z"}],"qosClass":"BestEffort",
"resourceClaimStatuses":[{"name":"gpu","resourceClaimName":"p-1234-gpu-x7k2q"}]}})";
  return kPod;
}

void BM_DecodePod(benchmark::State& state) {
  const std::string& json = BoundPodJson();
  for (auto _ : state) {
    auto pod = draco::api::Decode<draco::api::Pod>(json);
    benchmark::DoNotOptimize(pod);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * json.size()));
}
BENCHMARK(BM_DecodePod);

void BM_DecodePodSkippingManagedFields(benchmark::State& state) {
  const std::string& json = BoundPodJson();
  for (auto _ : state) {
    auto pod = draco::api::DecodeSkippingManagedFields<draco::api::Pod>(json);
    benchmark::DoNotOptimize(pod);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * json.size()));
}
BENCHMARK(BM_DecodePodSkippingManagedFields);

}  // namespace

BENCHMARK_MAIN();
