// The cluster state kube-scheduler's filters read, as plain shared pointers to api objects.
//
// Callers (the controller, `draco simulate`, the differential harness) fill a Snapshot; the
// feasibility functions (feasibility.h) only read it. A pod counts as placed on `PlacedPod::node`
// whatever its spec says: bound pods, pods assumed or nominated by kube-scheduler and draco's own
// in-flight node choices are all given this way. Nodes keep the caller's order; verdicts follow it.
// Value type; thread-compatible.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "controller/api/storage_types.h"
#include "controller/api/types.h"
#include "controller/feasibility/resources.h"

namespace draco::feasibility {

struct PlacedPod {
  std::shared_ptr<const api::Pod> pod;
  std::string node;
  // FromResourceList(PlacedPodRequests(*pod)) when the caller keeps it precomputed (the
  // controller's cache does, per pod version); computed from `pod` when null.
  std::shared_ptr<const Resources> requests = nullptr;
};

struct Snapshot {
  std::vector<std::shared_ptr<const api::Node>> nodes;
  // FromResourceList(status.allocatable) per entry of `nodes` when the caller keeps it
  // precomputed (the controller's cache does, per node version); computed when this is not as
  // long as `nodes` or an entry is null.
  std::vector<std::shared_ptr<const Resources>> node_allocatable;
  std::vector<PlacedPod> pods;
  std::map<std::string, std::shared_ptr<const api::Namespace>> namespaces;          // by name
  std::map<std::string, std::shared_ptr<const api::PersistentVolume>> pvs;          // by name
  std::map<std::string, std::shared_ptr<const api::PersistentVolumeClaim>> pvcs;    // "ns/name"
  std::map<std::string, std::shared_ptr<const api::StorageClass>> storage_classes;  // by name
  std::map<std::string, std::shared_ptr<const api::CSINode>> csi_nodes;             // by name
  // Extended resource names a DeviceClass serves (spec.extendedResourceName and the implicit
  // deviceclass.resource.kubernetes.io/<class>): NodeResourcesFit leaves them to DRA on nodes
  // without device-plugin allocatable for them, as kube-scheduler does (KEP-5004).
  std::set<std::string> dra_extended_resources;

  const api::PersistentVolumeClaim* FindPvc(const std::string& ns, const std::string& name) const;
  const api::PersistentVolume* FindPv(const std::string& name) const;
  const api::StorageClass* FindStorageClass(const std::string& name) const;
  const api::CSINode* FindCsiNode(const std::string& name) const;
  // Labels of a namespace; nullptr when the Namespace object is unknown.
  const api::StringMap* NamespaceLabels(const std::string& name) const;
};

}  // namespace draco::feasibility
