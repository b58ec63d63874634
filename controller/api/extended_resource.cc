#include "controller/api/extended_resource.h"

#include <algorithm>
#include <optional>
#include <set>

namespace draco::api {
namespace {

// One device request of the special claim under construction (count > 0).
struct PendingRequest {
  std::string name;
  int64_t count = 0;
};

int64_t IntRequest(const ResourceList& reqs, const std::string& resource) {
  auto it = reqs.find(resource);
  if (it == reqs.end()) return 0;
  std::optional<int64_t> v = it->second.AsInt64();
  return v && *v > 0 ? *v : 0;
}

// "container-<index>-request-<j>": j is the resource's position among the container's request
// names in sorted order.
std::string RequestName(size_t container_index, const ResourceList& reqs,
                        const std::string& resource) {
  size_t j = 0;
  for (const auto& [name, q] : reqs) {  // std::map: sorted
    if (name == resource) break;
    ++j;
  }
  return "container-" + std::to_string(container_index) + "-request-" + std::to_string(j);
}

bool IsSidecar(const Container& c) { return c.restart_policy && *c.restart_policy == "Always"; }

// Requests and mappings for one resource (kube-scheduler's per-resource pass).
void PlanResource(const std::vector<const Container*>& containers, size_t num_init,
                  const std::string& resource, std::vector<PendingRequest>& requests,
                  std::vector<ContainerExtendedResourceRequest>& mappings) {
  std::vector<std::optional<PendingRequest>> long_lived(containers.size());
  std::vector<ContainerExtendedResourceRequest> long_maps, short_maps;
  std::vector<size_t> short_lived;
  for (size_t i = 0; i < containers.size(); ++i) {
    const Container& c = *containers[i];
    if (i < num_init && !IsSidecar(c)) {
      short_lived.push_back(i);
      continue;
    }
    ResourceList reqs = EffectiveContainerRequests(c);
    int64_t n = IntRequest(reqs, resource);
    if (n == 0) continue;
    long_lived[i] = PendingRequest{RequestName(i, reqs, resource), n};
    long_maps.push_back({c.name, resource, long_lived[i]->name, {}});
  }
  std::optional<PendingRequest> max_short;
  std::set<std::string> short_names;
  for (size_t i : short_lived) {
    const Container& c = *containers[i];
    ResourceList reqs = EffectiveContainerRequests(c);
    int64_t n = IntRequest(reqs, resource);
    if (n == 0) continue;
    // Devices of long-lived containers that start later are reused first.
    int64_t sum = 0;
    bool covered = false;
    for (size_t k = i; k < long_lived.size() && !covered; ++k) {
      if (!long_lived[k]) continue;
      sum += long_lived[k]->count;
      short_maps.push_back({c.name, resource, long_lived[k]->name, {}});
      covered = sum >= n;
    }
    if (covered) continue;
    PendingRequest own{RequestName(i, reqs, resource), n - sum};
    short_maps.push_back({c.name, resource, own.name, {}});
    short_names.insert(own.name);
    if (!max_short || max_short->count < own.count) max_short = own;
  }
  // All short-lived containers run one after the other: they share the largest request.
  if (max_short && short_names.size() > 1) {
    short_names.erase(max_short->name);
    for (auto& m : short_maps) {
      if (short_names.count(m.request_name)) m.request_name = max_short->name;
    }
  }
  if (max_short) requests.push_back(*max_short);
  for (const auto& r : long_lived) {
    if (r) requests.push_back(*r);
  }
  mappings.insert(mappings.end(), long_maps.begin(), long_maps.end());
  mappings.insert(mappings.end(), short_maps.begin(), short_maps.end());
}

}  // namespace

bool IsDraExtendedResourceName(std::string_view name) {
  if (name.starts_with(kDeviceClassResourcePrefix)) return true;
  if (name.find('/') == std::string_view::npos) return false;               // native: cpu, memory
  if (name.find("kubernetes.io/") != std::string_view::npos) return false;  // prefixed native
  return !name.starts_with("requests.");
}

ExtendedResourceClasses MapExtendedResourceClasses(const std::vector<const DeviceClass*>& classes) {
  ExtendedResourceClasses out;
  std::map<std::string, const DeviceClass*> explicit_owner;
  for (const DeviceClass* c : classes) {
    out[std::string(kDeviceClassResourcePrefix) + c->metadata.name] = c->metadata.name;
    if (!c->spec.extended_resource_name || c->spec.extended_resource_name->empty()) continue;
    const std::string& rn = *c->spec.extended_resource_name;
    const DeviceClass*& cur = explicit_owner[rn];
    // RFC 3339 timestamps in UTC compare lexically.
    if (cur) {
      int cmp = c->metadata.creation_timestamp.compare(cur->metadata.creation_timestamp);
      if (cmp < 0 || (cmp == 0 && c->metadata.name >= cur->metadata.name)) continue;
    }
    cur = c;
  }
  for (const auto& [rn, c] : explicit_owner) out[rn] = c->metadata.name;
  return out;
}

ResourceList EffectiveContainerRequests(const Container& c) {
  ResourceList r = c.resources.requests;
  for (const auto& [name, q] : c.resources.limits) r.emplace(name, q);  // keeps explicit requests
  return r;
}

std::vector<std::string> PodExtendedResources(const Pod& pod,
                                              const ExtendedResourceClasses& classes) {
  std::set<std::string> names;
  auto scan = [&](const std::vector<Container>& cs) {
    for (const auto& c : cs) {
      for (const auto& [name, q] : EffectiveContainerRequests(c)) {
        if (q.Sign() > 0 && IsDraExtendedResourceName(name) && classes.count(name)) {
          names.insert(name);
        }
      }
    }
  };
  scan(pod.spec.init_containers);
  scan(pod.spec.containers);
  return {names.begin(), names.end()};
}

StatusOr<ExtendedResourcePlan> PlanExtendedResources(const Pod& pod,
                                                     const ExtendedResourceClasses& classes,
                                                     const ResourceList* node_allocatable) {
  std::vector<const Container*> containers;
  for (const auto& c : pod.spec.init_containers) containers.push_back(&c);
  for (const auto& c : pod.spec.containers) containers.push_back(&c);
  std::set<std::string> requested;
  for (const Container* c : containers) {
    for (const auto& [name, q] : EffectiveContainerRequests(*c)) {
      if (q.Sign() > 0 && IsDraExtendedResourceName(name)) requested.insert(name);
    }
  }
  ExtendedResourcePlan plan;
  std::vector<PendingRequest> pending;
  std::map<std::string, std::string> class_of_request;
  for (const std::string& resource : requested) {  // sorted: deterministic order
    bool from_plugin = false;
    bool on_node = false;
    if (node_allocatable) {
      auto it = node_allocatable->find(resource);
      on_node = it != node_allocatable->end();
      from_plugin = on_node && it->second.Sign() > 0;
    }
    auto cls = classes.find(resource);
    if (from_plugin) continue;
    if (cls == classes.end()) {
      if (on_node || !node_allocatable) continue;  // the node-resources fit decides
      return NotFoundError("extended resource " + resource +
                           " is neither offered by the node nor served by a DeviceClass");
    }
    size_t before = pending.size();
    PlanResource(containers, pod.spec.init_containers.size(), resource, pending, plan.mappings);
    for (size_t i = before; i < pending.size(); ++i) {
      class_of_request[pending[i].name] = cls->second;
    }
  }
  std::sort(pending.begin(), pending.end(),
            [](const PendingRequest& a, const PendingRequest& b) { return a.name < b.name; });
  for (const auto& p : pending) {
    DeviceRequest r;
    r.name = p.name;
    r.exactly.emplace();
    r.exactly->device_class_name = class_of_request[p.name];
    r.exactly->allocation_mode = "ExactCount";
    r.exactly->count = p.count;
    plan.requests.push_back(std::move(r));
  }
  return plan;
}

bool IsExtendedResourceClaim(const ResourceClaim& claim) {
  auto it = claim.metadata.annotations.find(std::string(kExtendedResourceClaimAnnotation));
  return it != claim.metadata.annotations.end() && it->second == "true";
}

ResourceClaim NewExtendedResourceClaim(const Pod& pod, std::vector<DeviceRequest> requests) {
  ResourceClaim c;
  c.metadata.namespace_ = pod.metadata.namespace_;
  c.metadata.generate_name = pod.metadata.name + "-extended-resources-";
  c.metadata.annotations[std::string(kExtendedResourceClaimAnnotation)] = "true";
  OwnerReference o;
  o.api_version = "v1";
  o.kind = "Pod";
  o.name = pod.metadata.name;
  o.uid = pod.metadata.uid;
  o.controller = true;
  c.metadata.owner_references.push_back(std::move(o));
  c.spec.devices.requests = std::move(requests);
  return c;
}

std::string ExtendedResourceClaimName(const Pod& pod) {
  const auto& s = pod.status.extended_resource_claim_status;
  return s ? s->resource_claim_name : "";
}

}  // namespace draco::api
