// Test and benchmark builders for pod groups (header-only, tests only): nodes with node-local
// devices that carry a "clique" attribute, a ResourceClaimTemplate, and gated group members.
#pragma once

#include <memory>
#include <string>

#include "controller/reconcilers/claim_util.h"
#include "controller/reconcilers/cluster_cache.h"

namespace draco::reconcilers::testing {

// DeviceClass "gpu" (driver drv) and template "ns/tmpl" asking for `count` devices of it.
inline void AddGpuClassAndTemplate(ClusterCache& cache, int64_t count) {
  alloc::DeviceClass cls;
  cls.name = "gpu";
  cls.selectors = {"device.driver == \"drv\""};
  cache.UpsertClass("gpu", cls);
  api::ResourceClaimTemplate t;
  t.metadata.name = "tmpl";
  t.metadata.namespace_ = "ns";
  api::DeviceRequest r;
  r.name = "gpu";
  r.exactly = api::ExactDeviceRequest{};
  r.exactly->device_class_name = "gpu";
  r.exactly->count = count;
  t.spec.spec.devices.requests.push_back(r);
  cache.UpsertTemplate(std::make_shared<const api::ResourceClaimTemplate>(t));
}

// Ready nodes n0..n<nodes-1>, each with a slice of `per_node` devices of driver drv whose
// attribute "clique" is "c<i / nodes_per_clique>".
inline void AddCliqueNodes(ClusterCache& cache, int nodes, int per_node, int nodes_per_clique) {
  for (int i = 0; i < nodes; ++i) {
    std::string node = "n" + std::to_string(i);
    alloc::ResourceSlice s;
    s.name = node + "-drv";
    s.driver = "drv";
    s.pool = node;
    s.generation = 1;
    s.resource_slice_count = 1;
    s.node_name = node;
    for (int k = 0; k < per_node; ++k) {
      alloc::Device d;
      d.name = "d" + std::to_string(k);
      alloc::Attribute a;
      a.kind = alloc::Attribute::Kind::kString;
      a.s = "c" + std::to_string(i / nodes_per_clique);
      d.attributes.push_back({"clique", a});
      s.devices.push_back(d);
    }
    SliceEntry e;
    e.name = s.name;
    e.driver = "drv";
    e.pool = node;
    e.node_name = node;
    e.device_count = per_node;
    e.model = std::make_shared<const alloc::ResourceSlice>(s);
    cache.UpsertSlice(e);
    api::Node n;
    n.metadata.name = node;
    n.metadata.labels = {{"kubernetes.io/hostname", node}};
    n.status.allocatable["pods"] = *api::Quantity::Parse("110");
    api::NodeCondition ready;
    ready.type = "Ready";
    ready.status = "True";
    n.status.conditions.push_back(ready);
    cache.UpsertNode(std::make_shared<const api::Node>(n));
  }
}

// A gated pod "ns/<name>" with one claim from template "tmpl"; in group `group` (label
// draco.dev/group, minimum `min`) unless `group` is empty; `match`: the group's match attribute.
inline api::Pod GroupMember(const std::string& name, const std::string& group, int min,
                            const std::string& match = "") {
  api::Pod p;
  p.metadata.name = name;
  p.metadata.namespace_ = "ns";
  p.metadata.uid = "uid-" + name;
  p.metadata.resource_version = "1";
  if (!group.empty()) {
    p.metadata.labels["draco.dev/group"] = group;
    p.metadata.annotations["draco.dev/group-min-members"] = std::to_string(min);
  }
  if (!match.empty()) p.metadata.annotations["draco.dev/group-match-attribute"] = match;
  api::PodResourceClaim pc;
  pc.name = "gpu";
  pc.resource_claim_template_name = "tmpl";
  p.spec.resource_claims.push_back(pc);
  p.spec.scheduling_gates.push_back({std::string(kSchedulingGate), {}});
  p.status.phase = "Pending";
  return p;
}

}  // namespace draco::reconcilers::testing
