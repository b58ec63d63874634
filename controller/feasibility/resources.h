// Pod resource requests and node allocatable in kube-scheduler's units (framework.Resource):
// cpu in millicores, memory/ephemeral-storage/scalar resources in units, all rounded up.
// Scalar resources: extended (domain-prefixed, e.g. example.com/gpu), hugepages-*,
// attachable-volumes-* and *kubernetes.io/* names; other unprefixed names are ignored.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "controller/api/types.h"

namespace draco::feasibility {

struct Resources {
  int64_t milli_cpu = 0;
  int64_t memory = 0;
  int64_t ephemeral_storage = 0;
  int64_t pods = 0;  // allocatable only
  std::map<std::string, int64_t> scalar;

  void Add(const Resources& o);
  bool IsZero() const;
};

bool IsScalarResourceName(const std::string& name);

// Converts a ResourceList (requests or allocatable).
Resources FromResourceList(const api::ResourceList& list);

// Upstream resource.PodRequests for a pod being scheduled (spec only): containers summed, sidecars
// and init containers by the KEP-753 rule, pod-level requests for cpu/memory/hugepages-*, plus
// overhead.
api::ResourceList PodSpecRequests(const api::Pod& pod);

// What an already placed pod occupies (PodInfo.CalculateResource with InPlacePodVerticalScaling):
// per container max(spec, status allocatedResources, status resources.requests), spec ignored
// when the pod's resize is Infeasible.
api::ResourceList PlacedPodRequests(const api::Pod& pod);

}  // namespace draco::feasibility
