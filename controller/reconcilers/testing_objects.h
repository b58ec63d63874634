// Test builders for the objects most controller tests start from (header-only, tests only): a
// Ready node as a kubelet reports it, a pod gated by draco with one templated claim, and that
// template.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "controller/api/types.h"
#include "controller/reconcilers/claim_util.h"

namespace draco::reconcilers::testing {

// Node `name`, Ready, labelled kubernetes.io/hostname=<name>, allocatable 110 pods (every
// kubelet reports allocatable pods; kube-scheduler's NodeResourcesFit counts them).
inline api::Node ReadyNode(const std::string& name) {
  api::Node n;
  n.metadata.name = name;
  n.metadata.labels = {{"kubernetes.io/hostname", name}};
  api::NodeCondition c;
  c.type = "Ready";
  c.status = "True";
  n.status.conditions.push_back(c);
  n.status.allocatable["pods"] = *api::Quantity::Parse("110");
  return n;
}

// Pending pod ns/<name> (uid "uid-<name>", resourceVersion "1") with draco's scheduling gate and
// one pod claim "gpu" from template "tmpl"; `scheduler` is spec.schedulerName ("" = default).
inline api::Pod GatedPod(const std::string& name, const std::string& scheduler = "") {
  api::Pod p;
  p.metadata.name = name;
  p.metadata.namespace_ = "ns";
  p.metadata.uid = "uid-" + name;
  p.metadata.resource_version = "1";
  p.spec.scheduler_name = scheduler;
  api::PodResourceClaim pc;
  pc.name = "gpu";
  pc.resource_claim_template_name = "tmpl";
  p.spec.resource_claims.push_back(pc);
  api::PodSchedulingGate g;
  g.name = std::string(kSchedulingGate);
  p.spec.scheduling_gates.push_back(g);
  p.status.phase = "Pending";
  return p;
}

// ResourceClaimTemplate ns/tmpl (GatedPod's template) with one request "gpu" for exactly
// `count` devices (unset: the API's default of one) of class `device_class`.
inline api::ResourceClaimTemplate GpuTemplate(const std::string& device_class = "gpu.example.com",
                                              std::optional<int64_t> count = std::nullopt) {
  api::ResourceClaimTemplate t;
  t.metadata.name = "tmpl";
  t.metadata.namespace_ = "ns";
  api::DeviceRequest r;
  r.name = "gpu";
  r.exactly = api::ExactDeviceRequest{};
  r.exactly->device_class_name = device_class;
  r.exactly->count = count;
  t.spec.spec.devices.requests.push_back(r);
  return t;
}

}  // namespace draco::reconcilers::testing
