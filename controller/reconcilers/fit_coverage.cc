#include "controller/reconcilers/fit_coverage.h"

#include <string>
#include <string_view>

namespace draco::reconcilers {
namespace {

constexpr std::string_view kDefaultScheduler = "default-scheduler";

// The unmodelled member `name` of `fields`, as compact JSON text; "" when absent.
const std::string* Unknown(const api::UnknownFields& fields, std::string_view name) {
  for (const auto& [k, v] : fields.members) {
    if (k == name) return &v;
  }
  return nullptr;
}

// True when compact JSON `json` has an object member named `key` anywhere. A string value
// containing the same text is escaped (\"key\":), so this cannot match one; it may match a
// member of the same name deeper down, which only makes the answer more conservative.
bool HasMember(const std::string& json, std::string_view key) {
  const std::string needle = "\"" + std::string(key) + "\":";
  for (size_t at = json.find(needle); at != std::string::npos; at = json.find(needle, at + 1)) {
    if (at > 0 && (json[at - 1] == '{' || json[at - 1] == ',')) return true;
  }
  return false;
}

// Volume sources that a kube-scheduler Filter looks at (VolumeBinding, VolumeZone,
// VolumeRestrictions, NodeVolumeLimits).
constexpr std::string_view kSchedulingVolumes[] = {"persistentVolumeClaim",
                                                   "ephemeral",
                                                   "csi",
                                                   "gcePersistentDisk",
                                                   "awsElasticBlockStore",
                                                   "azureDisk",
                                                   "azureFile",
                                                   "rbd",
                                                   "iscsi",
                                                   "cinder",
                                                   "portworxVolume",
                                                   "vsphereVolume",
                                                   "fc",
                                                   "flocker",
                                                   "photonPersistentDisk",
                                                   "scaleIO",
                                                   "storageos",
                                                   "quobyte",
                                                   "glusterfs",
                                                   "cephfs",
                                                   "nfs"};

bool OnlyCpuMemory(const api::ResourceList& list) {
  for (const auto& [name, q] : list) {
    if (name != "cpu" && name != "memory") return false;
  }
  return true;
}

bool ContainerCovered(const api::Container& c) {
  if (!OnlyCpuMemory(c.resources.requests) || !OnlyCpuMemory(c.resources.limits)) return false;
  const std::string* ports = Unknown(c.unknown, "ports");
  return !ports || !HasMember(*ports, "hostPort");
}

}  // namespace

bool FitCoversPod(const api::Pod& pod) {
  const api::PodSpec& spec = pod.spec;
  if (!spec.scheduler_name.empty() && spec.scheduler_name != kDefaultScheduler) return false;
  if (spec.affinity && (Unknown(spec.affinity->unknown, "podAffinity") ||
                        Unknown(spec.affinity->unknown, "podAntiAffinity"))) {
    return false;
  }
  if (Unknown(spec.unknown, "topologySpreadConstraints")) return false;
  if (const std::string* volumes = Unknown(spec.unknown, "volumes")) {
    for (std::string_view v : kSchedulingVolumes) {
      if (HasMember(*volumes, v)) return false;
    }
  }
  if (!OnlyCpuMemory(spec.overhead)) return false;
  if (spec.resources &&
      (!OnlyCpuMemory(spec.resources->requests) || !OnlyCpuMemory(spec.resources->limits))) {
    return false;
  }
  for (const auto& c : spec.init_containers) {
    if (!ContainerCovered(c)) return false;
  }
  for (const auto& c : spec.containers) {
    if (!ContainerCovered(c)) return false;
  }
  return true;
}

}  // namespace draco::reconcilers
