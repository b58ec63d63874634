// Test and benchmark builders for pod groups (header-only, tests only): nodes with node-local
// devices that carry a "clique" attribute, a ResourceClaimTemplate, and gated group members.
#pragma once

#include <memory>
#include <string>

#include "controller/reconcilers/claim_util.h"
#include "controller/reconcilers/cluster_cache.h"
#include "controller/reconcilers/testing_objects.h"

namespace draco::reconcilers::testing {

// DeviceClass "gpu" with one CEL selector.
inline ClassPtr GpuClass(const std::string& selector) {
  api::DeviceClass cls;
  cls.metadata.name = "gpu";
  api::DeviceSelector sel;
  sel.cel = api::CELDeviceSelector{selector, {}};
  cls.spec.selectors.push_back(sel);
  return std::make_shared<const api::DeviceClass>(std::move(cls));
}

// ResourceSlice "<node>-drv" of driver drv, pool `node`, generation 1, with devices d0..d<n-1>
// local to `node`.
inline api::ResourceSlice NodeSlice(const std::string& node, int devices) {
  api::ResourceSlice s;
  s.metadata.name = node + "-drv";
  s.spec.driver = "drv";
  s.spec.pool.name = node;
  s.spec.pool.generation = 1;
  s.spec.pool.resource_slice_count = 1;
  s.spec.node_name = node;
  for (int k = 0; k < devices; ++k) {
    api::Device d;
    d.name = "d" + std::to_string(k);
    s.spec.devices.push_back(std::move(d));
  }
  return s;
}

// DeviceClass "gpu" (driver drv) and template "ns/tmpl" asking for `count` devices of it.
inline void AddGpuClassAndTemplate(ClusterCache& cache, int64_t count) {
  cache.UpsertClass(GpuClass("device.driver == \"drv\""));
  cache.UpsertTemplate(
      std::make_shared<const api::ResourceClaimTemplate>(GpuTemplate("gpu", count)));
}

// Ready nodes n0..n<nodes-1>, each with a slice of `per_node` devices of driver drv whose
// attribute "clique" is "c<i / nodes_per_clique>".
inline void AddCliqueNodes(ClusterCache& cache, int nodes, int per_node, int nodes_per_clique) {
  for (int i = 0; i < nodes; ++i) {
    std::string node = "n" + std::to_string(i);
    api::ResourceSlice s = NodeSlice(node, per_node);
    for (auto& d : s.spec.devices) {
      d.attributes["clique"].string_value = "c" + std::to_string(i / nodes_per_clique);
    }
    cache.UpsertSlice(MakeSliceEntry(std::make_shared<const api::ResourceSlice>(std::move(s))));
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
