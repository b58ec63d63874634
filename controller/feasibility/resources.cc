#include "controller/feasibility/resources.h"

#include <functional>

namespace draco::feasibility {
namespace {

void AddList(const api::ResourceList& list, api::ResourceList& acc) {
  for (const auto& [name, q] : list) {
    auto [it, inserted] = acc.try_emplace(name, q);
    if (!inserted) it->second = it->second.Add(q);
  }
}

void MaxList(const api::ResourceList& list, api::ResourceList& acc) {
  for (const auto& [name, q] : list) {
    auto [it, inserted] = acc.try_emplace(name, q);
    if (!inserted && q.Compare(it->second) > 0) it->second = q;
  }
}

bool IsSupportedPodLevelResource(const std::string& name) {
  return name == "cpu" || name == "memory" || name.starts_with("hugepages-");
}

bool IsPodLevelRequestsSet(const api::Pod& pod) {
  if (!pod.spec.resources) return false;
  if (!pod.spec.resources->requests.empty()) return true;
  for (const auto& [name, q] : pod.spec.resources->limits) {
    if (IsSupportedPodLevelResource(name)) return true;
  }
  return false;
}

using ContainerFn = std::function<api::ResourceList(const api::Container&)>;

// aggregateContainerResourcesByFn.
api::ResourceList Aggregate(const api::Pod& pod, const ContainerFn& fn) {
  api::ResourceList reqs;
  for (const auto& c : pod.spec.containers) AddList(fn(c), reqs);
  api::ResourceList sidecars;
  api::ResourceList init_max;
  for (const auto& c : pod.spec.init_containers) {
    api::ResourceList own = fn(c);
    if (c.restart_policy && *c.restart_policy == "Always") {
      AddList(own, reqs);
      AddList(own, sidecars);
      MaxList(sidecars, init_max);
    } else {
      api::ResourceList effective = own;
      AddList(sidecars, effective);
      MaxList(effective, init_max);
    }
  }
  MaxList(init_max, reqs);
  return reqs;
}

const api::ContainerStatus* FindStatus(const api::Pod& pod, const std::string& name) {
  for (const auto& s : pod.status.container_statuses) {
    if (s.name == name) return &s;
  }
  for (const auto& s : pod.status.init_container_statuses) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

bool IsResizeInfeasible(const api::Pod& pod) {
  for (const auto& c : pod.status.conditions) {
    if (c.type == "PodResizePending") return c.reason == "Infeasible";
  }
  return false;
}

api::ResourceList ApplyPodLevelAndOverhead(const api::Pod& pod, api::ResourceList reqs) {
  if (IsPodLevelRequestsSet(pod)) {
    for (const auto& [name, q] : pod.spec.resources->requests) {
      if (IsSupportedPodLevelResource(name)) reqs[name] = q;
    }
  }
  AddList(pod.spec.overhead, reqs);
  return reqs;
}

}  // namespace

void Resources::Add(const Resources& o) {
  milli_cpu += o.milli_cpu;
  memory += o.memory;
  ephemeral_storage += o.ephemeral_storage;
  pods += o.pods;
  for (const auto& [k, v] : o.scalar) scalar[k] += v;
}

bool Resources::IsZero() const {
  return milli_cpu == 0 && memory == 0 && ephemeral_storage == 0 && scalar.empty();
}

bool IsScalarResourceName(const std::string& name) {
  if (name.starts_with("hugepages-") || name.starts_with("attachable-volumes-")) return true;
  if (name.find("kubernetes.io/") != std::string::npos) return true;  // prefixed native
  // Extended: not native (has a '/' and no kubernetes.io/ prefix), not a quota "requests." name.
  return name.find('/') != std::string::npos && !name.starts_with("requests.");
}

Resources FromResourceList(const api::ResourceList& list) {
  Resources r;
  for (const auto& [name, q] : list) {
    if (name == "cpu") {
      r.milli_cpu += q.MilliValue();
    } else if (name == "memory") {
      r.memory += q.Value();
    } else if (name == "ephemeral-storage") {
      r.ephemeral_storage += q.Value();
    } else if (name == "pods") {
      r.pods += q.Value();
    } else if (IsScalarResourceName(name)) {
      r.scalar[name] += q.Value();
    }
  }
  return r;
}

api::ResourceList PodSpecRequests(const api::Pod& pod) {
  return ApplyPodLevelAndOverhead(
      pod, Aggregate(pod, [](const api::Container& c) { return c.resources.requests; }));
}

api::ResourceList PlacedPodRequests(const api::Pod& pod) {
  bool infeasible = IsResizeInfeasible(pod);
  api::ResourceList spec =
      Aggregate(pod, [](const api::Container& c) { return c.resources.requests; });
  api::ResourceList allocated = Aggregate(pod, [&](const api::Container& c) {
    const api::ContainerStatus* cs = FindStatus(pod, c.name);
    if (cs && !cs->allocated_resources.empty()) return cs->allocated_resources;
    return infeasible ? api::ResourceList{} : c.resources.requests;
  });
  api::ResourceList actuated = Aggregate(pod, [&](const api::Container& c) {
    const api::ContainerStatus* cs = FindStatus(pod, c.name);
    if (cs && cs->resources && !cs->resources->requests.empty()) return cs->resources->requests;
    if (cs && !cs->allocated_resources.empty()) return cs->allocated_resources;
    return infeasible ? api::ResourceList{} : c.resources.requests;
  });
  api::ResourceList reqs = infeasible ? api::ResourceList{} : spec;
  MaxList(actuated, reqs);
  MaxList(allocated, reqs);
  return ApplyPodLevelAndOverhead(pod, std::move(reqs));
}

}  // namespace draco::feasibility
