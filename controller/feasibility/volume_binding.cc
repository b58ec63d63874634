// VolumeBinding and VolumeZone (pkg/scheduler/framework/plugins/{volumebinding,volumezone}).
// Unbound WaitForFirstConsumer claims are satisfied by a matching available PV or by dynamic
// provisioning within the StorageClass's allowedTopologies; storage capacity is not modelled.
#include <algorithm>
#include <array>

#include "controller/feasibility/labels.h"
#include "controller/feasibility/plugin.h"

namespace draco::feasibility::internal {
namespace {

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

bool PvNodeAffinityMatches(const api::PersistentVolume& pv, const api::Node& node) {
  if (!pv.spec.node_affinity || !pv.spec.node_affinity->required) return true;
  return api::NodeSelectorMatches(*pv.spec.node_affinity->required, node.metadata.labels, "");
}

std::string ClaimClass(const api::PersistentVolumeClaim& pvc) {
  auto it = pvc.metadata.annotations.find("volume.beta.kubernetes.io/storage-class");
  if (it != pvc.metadata.annotations.end()) return it->second;
  return pvc.spec.storage_class_name.value_or("");
}

api::Quantity Storage(const api::ResourceList& l) {
  auto it = l.find("storage");
  return it == l.end() ? api::Quantity() : it->second;
}

class VolumeBinding : public Plugin {
 public:
  std::string_view Name() const override { return "VolumeBinding"; }
  PreResult PreFilter(const api::Pod& pod, const ClusterIndex& c) override {
    snapshot_ = c.snapshot;
    bool has = false;
    for (const auto& v : pod.spec.volumes) {
      std::string claim = VolumeClaimName(pod, v);
      if (claim.empty()) continue;
      has = true;
      const auto* pvc = c.snapshot->FindPvc(pod.metadata.namespace_, claim);
      if (!pvc) {
        if (v.ephemeral) {
          return PreResult::Reject(
              "waiting for ephemeral volume controller to create the persistentvolumeclaim \"" +
              claim + "\"");
        }
        return PreResult::Reject("persistentvolumeclaim \"" + claim + "\" not found");
      }
      if (pvc->status.phase == "Lost") {
        return PreResult::Reject("persistentvolumeclaim \"" + claim +
                                 "\" bound to non-existent persistentvolume");
      }
      if (pvc->metadata.deletion_timestamp) {
        return PreResult::Reject("persistentvolumeclaim \"" + claim + "\" is being deleted");
      }
    }
    if (!has) return PreResult::Skip();
    bound_.clear();
    delayed_.clear();
    for (const auto& v : pod.spec.volumes) {
      std::string claim = VolumeClaimName(pod, v);
      if (claim.empty()) continue;
      const auto* pvc = c.snapshot->FindPvc(pod.metadata.namespace_, claim);
      if (!pvc->spec.volume_name.empty() &&
          pvc->metadata.annotations.count("pv.kubernetes.io/bind-completed")) {
        bound_.push_back(pvc);
        continue;
      }
      bool delay = false;
      std::string cls = ClaimClass(*pvc);
      if (const auto* sc = cls.empty() ? nullptr : c.snapshot->FindStorageClass(cls)) {
        if (!sc->volume_binding_mode) {
          return PreResult::Error("VolumeBindingMode not set for StorageClass \"" + cls + "\"");
        }
        delay = *sc->volume_binding_mode == "WaitForFirstConsumer";
      }
      if (!delay || !pvc->spec.volume_name.empty()) {
        return PreResult::Reject("pod has unbound immediate PersistentVolumeClaims");
      }
      delayed_.push_back(pvc);
    }
    return PreResult::Ok();
  }

  Rejection Filter(const api::Pod&, const NodeInfo& n) const override {
    for (const auto* pvc : bound_) {
      const auto* pv = snapshot_->FindPv(pvc->spec.volume_name);
      if (!pv) return "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)";
      if (!PvNodeAffinityMatches(*pv, *n.node)) {
        return "node(s) had volume node affinity conflict";
      }
    }
    std::vector<const api::PersistentVolumeClaim*> to_match;
    std::vector<const api::PersistentVolumeClaim*> to_provision;
    for (const auto* pvc : delayed_) {
      auto it = pvc->metadata.annotations.find("volume.kubernetes.io/selected-node");
      if (it == pvc->metadata.annotations.end()) {
        to_match.push_back(pvc);
      } else if (it->second != n.node->metadata.name) {
        return "node(s) didn't find available persistent volumes to bind";
      } else {
        to_provision.push_back(pvc);
      }
    }
    // findMatchingVolumes: smallest claims first, each takes the smallest fitting PV.
    std::stable_sort(to_match.begin(), to_match.end(), [](const auto* a, const auto* b) {
      return Storage(a->spec.resources.requests).Compare(Storage(b->spec.resources.requests)) < 0;
    });
    std::set<std::string> chosen;
    for (const auto* pvc : to_match) {
      const api::PersistentVolume* pv = FindMatchingVolume(*pvc, *n.node, chosen);
      if (pv) {
        chosen.insert(pv->metadata.name);
      } else {
        to_provision.push_back(pvc);
      }
    }
    for (const auto* pvc : to_provision) {
      std::string cls = ClaimClass(*pvc);
      const auto* sc = cls.empty() ? nullptr : snapshot_->FindStorageClass(cls);
      if (!sc) return "failed to find storage class \"" + cls + "\"";
      if (sc->provisioner.empty() || sc->provisioner == "kubernetes.io/no-provisioner" ||
          !MatchTopologySelectorTerms(sc->allowed_topologies, n.node->metadata.labels)) {
        return "node(s) didn't find available persistent volumes to bind";
      }
    }
    return "";
  }

 private:
  // volume.FindMatchingVolume with delayBinding: pre-bound PVs first, else the smallest available
  // PV of the claim's class that satisfies size, mode, access modes, selector and node affinity.
  const api::PersistentVolume* FindMatchingVolume(const api::PersistentVolumeClaim& pvc,
                                                  const api::Node& node,
                                                  const std::set<std::string>& chosen) const {
    api::Quantity want = Storage(pvc.spec.resources.requests);
    std::string cls = ClaimClass(pvc);
    auto sel = Selector::Parse(pvc.spec.selector, "selector");
    const api::PersistentVolume* best = nullptr;
    for (const auto& [name, pv] : snapshot_->pvs) {
      if (pv->spec.storage_class_name != cls || chosen.count(name)) continue;
      if (Storage(pv->spec.capacity).Compare(want) < 0) continue;
      if (pv->spec.volume_mode.value_or("Filesystem") !=
          pvc.spec.volume_mode.value_or("Filesystem")) {
        continue;
      }
      bool affinity_ok = PvNodeAffinityMatches(*pv, node);
      const auto& ref = pv->spec.claim_ref;
      if (ref && ref->name == pvc.metadata.name && ref->namespace_ == pvc.metadata.namespace_ &&
          (ref->uid.empty() || ref->uid == pvc.metadata.uid)) {
        if (!affinity_ok) return nullptr;
        return pv.get();
      }
      if (ref || pv->status.phase != "Available" || pv->metadata.deletion_timestamp) continue;
      if (pvc.spec.selector && (!sel.ok() || !sel->Matches(pv->metadata.labels))) continue;
      const auto& pv_modes = pv->spec.access_modes;
      bool modes = std::all_of(pvc.spec.access_modes.begin(), pvc.spec.access_modes.end(),
                               [&pv_modes](const std::string& m) { return Contains(pv_modes, m); });
      if (!modes || !affinity_ok) continue;
      if (!best || Storage(pv->spec.capacity).Compare(Storage(best->spec.capacity)) < 0) {
        best = pv.get();
      }
    }
    return best;
  }

  const Snapshot* snapshot_ = nullptr;
  std::vector<const api::PersistentVolumeClaim*> bound_;
  std::vector<const api::PersistentVolumeClaim*> delayed_;
};

constexpr std::array<const char*, 4> kTopologyLabels = {
    "failure-domain.beta.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/region",
    "topology.kubernetes.io/zone", "topology.kubernetes.io/region"};

// volumehelpers.LabelZonesToSet: "a__b" -> {a, b}.
std::set<std::string> ZoneSet(const std::string& v) {
  std::set<std::string> out;
  size_t start = 0;
  while (true) {
    size_t p = v.find("__", start);
    out.insert(v.substr(start, p == std::string::npos ? std::string::npos : p - start));
    if (p == std::string::npos) break;
    start = p + 2;
  }
  return out;
}

std::string Translated(const std::string& key) {
  if (key == "failure-domain.beta.kubernetes.io/zone") return "topology.kubernetes.io/zone";
  if (key == "failure-domain.beta.kubernetes.io/region") return "topology.kubernetes.io/region";
  if (key == "topology.kubernetes.io/zone") return "failure-domain.beta.kubernetes.io/zone";
  if (key == "topology.kubernetes.io/region") return "failure-domain.beta.kubernetes.io/region";
  return key;
}

class VolumeZone : public Plugin {
 public:
  std::string_view Name() const override { return "VolumeZone"; }
  PreResult PreFilter(const api::Pod& pod, const ClusterIndex& c) override {
    topologies_.clear();
    for (const auto& v : pod.spec.volumes) {
      if (!v.persistent_volume_claim) continue;
      const std::string& claim = v.persistent_volume_claim->claim_name;
      if (claim.empty()) return PreResult::Reject("PersistentVolumeClaim had no name");
      const auto* pvc = c.snapshot->FindPvc(pod.metadata.namespace_, claim);
      if (!pvc) return PreResult::Reject("persistentvolumeclaim \"" + claim + "\" not found");
      if (pvc->spec.volume_name.empty()) {
        std::string cls = ClaimClass(*pvc);
        if (cls.empty()) {
          return PreResult::Reject(
              "PersistentVolumeClaim had no pv name and "
              "storageClass name");
        }
        const auto* sc = c.snapshot->FindStorageClass(cls);
        if (!sc) return PreResult::Reject("StorageClass \"" + cls + "\" not found");
        if (sc->volume_binding_mode.value_or("") == "WaitForFirstConsumer") continue;
        return PreResult::Reject("PersistentVolume had no name");
      }
      const auto* pv = c.snapshot->FindPv(pvc->spec.volume_name);
      if (!pv) {
        return PreResult::Reject("persistentvolume \"" + pvc->spec.volume_name + "\" not found");
      }
      for (const char* key : kTopologyLabels) {
        auto it = pv->metadata.labels.find(key);
        if (it != pv->metadata.labels.end()) topologies_.emplace_back(key, ZoneSet(it->second));
      }
    }
    return topologies_.empty() ? PreResult::Skip() : PreResult::Ok();
  }
  Rejection Filter(const api::Pod&, const NodeInfo& n) const override {
    const auto& labels = n.node->metadata.labels;
    bool has_any = false;
    for (const char* key : kTopologyLabels) has_any = has_any || labels.count(key);
    if (!has_any) return "";
    for (const auto& [key, values] : topologies_) {
      auto it = labels.find(key);
      if (it == labels.end()) it = labels.find(Translated(key));
      if (it == labels.end() || !values.count(it->second)) {
        return "node(s) had no available volume zone";
      }
    }
    return "";
  }

 private:
  std::vector<std::pair<std::string, std::set<std::string>>> topologies_;
};

}  // namespace

std::unique_ptr<Plugin> NewVolumeBinding() { return std::make_unique<VolumeBinding>(); }
std::unique_ptr<Plugin> NewVolumeZone() { return std::make_unique<VolumeZone>(); }

}  // namespace draco::feasibility::internal
