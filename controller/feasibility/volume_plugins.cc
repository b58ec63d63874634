// VolumeRestrictions, NodeVolumeLimits (CSI attach limits), VolumeBinding and VolumeZone
// (pkg/scheduler/framework/plugins/{volumerestrictions,nodevolumelimits,volumebinding,
// volumezone}). Not modelled: in-tree volume CSI migration, VolumeAttachments, CSIStorageCapacity
// (provisioning capacity is assumed sufficient).
#include <algorithm>
#include <map>

#include "controller/feasibility/labels.h"
#include "controller/feasibility/plugin.h"

namespace draco::feasibility::internal {

std::string VolumeClaimName(const api::Pod& pod, const api::Volume& v) {
  if (v.persistent_volume_claim) return v.persistent_volume_claim->claim_name;
  if (v.ephemeral) return pod.metadata.name + "-" + v.name;
  return "";
}

namespace {

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

bool VolumeConflict(const api::Volume& v, const api::Pod& existing) {
  for (const auto& e : existing.spec.volumes) {
    if (v.gce_persistent_disk && e.gce_persistent_disk &&
        v.gce_persistent_disk->pd_name == e.gce_persistent_disk->pd_name &&
        !(v.gce_persistent_disk->read_only && e.gce_persistent_disk->read_only)) {
      return true;
    }
    if (v.aws_elastic_block_store && e.aws_elastic_block_store &&
        v.aws_elastic_block_store->volume_id == e.aws_elastic_block_store->volume_id) {
      return true;
    }
    if (v.iscsi && e.iscsi && v.iscsi->iqn == e.iscsi->iqn &&
        !(v.iscsi->read_only && e.iscsi->read_only)) {
      return true;
    }
    if (v.rbd && e.rbd) {
      bool overlap = false;
      for (const auto& m : v.rbd->monitors) overlap = overlap || Contains(e.rbd->monitors, m);
      if (overlap && v.rbd->pool == e.rbd->pool && v.rbd->image == e.rbd->image &&
          !(v.rbd->read_only && e.rbd->read_only)) {
        return true;
      }
    }
  }
  return false;
}

bool NeedsRestrictionsCheck(const api::Volume& v) {
  return v.gce_persistent_disk || v.aws_elastic_block_store || v.rbd || v.iscsi;
}

class VolumeRestrictions : public Plugin {
 public:
  std::string_view Name() const override { return "VolumeRestrictions"; }
  PreResult PreFilter(const api::Pod& pod, const ClusterIndex& c) override {
    bool needs =
        std::any_of(pod.spec.volumes.begin(), pod.spec.volumes.end(), NeedsRestrictionsCheck);
    std::set<std::string> rwop;
    for (const auto& v : pod.spec.volumes) {
      if (!v.persistent_volume_claim) continue;
      const auto* pvc =
          c.snapshot->FindPvc(pod.metadata.namespace_, v.persistent_volume_claim->claim_name);
      if (!pvc) {
        return PreResult::Reject("persistentvolumeclaim \"" +
                                 v.persistent_volume_claim->claim_name + "\" not found");
      }
      if (Contains(pvc->spec.access_modes, "ReadWriteOncePod")) rwop.insert(pvc->metadata.name);
    }
    rwop_conflict_ = false;
    for (const auto& n : c.nodes) {
      for (const auto* placed : n.pods) {
        if (placed->metadata.namespace_ != pod.metadata.namespace_) continue;
        for (const auto& v : placed->spec.volumes) {
          if (v.persistent_volume_claim && rwop.count(v.persistent_volume_claim->claim_name)) {
            rwop_conflict_ = true;
          }
        }
      }
    }
    if (!needs && !rwop_conflict_) return PreResult::Skip();
    return PreResult::Ok();
  }
  Rejection Filter(const api::Pod& pod, const NodeInfo& n) const override {
    for (const auto& v : pod.spec.volumes) {
      if (!NeedsRestrictionsCheck(v)) continue;
      for (const auto* e : n.pods) {
        if (VolumeConflict(v, *e)) return "node(s) had no available disk";
      }
    }
    if (rwop_conflict_) {
      return "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode "
             "already in-use by another pod";
    }
    return "";
  }

 private:
  bool rwop_conflict_ = false;
};

// CSI driver and volume handle of a PVC (getCSIDriverInfo without in-tree migration).
std::pair<std::string, std::string> CsiDriverInfo(const Snapshot& s,
                                                  const api::PersistentVolumeClaim& pvc) {
  if (!pvc.spec.volume_name.empty()) {
    if (const auto* pv = s.FindPv(pvc.spec.volume_name)) {
      if (!pv->spec.csi) return {"", ""};
      return {pv->spec.csi->driver, pv->spec.csi->volume_handle};
    }
  }
  std::string cls = pvc.spec.storage_class_name.value_or("");
  if (cls.empty()) return {"", ""};
  const auto* sc = s.FindStorageClass(cls);
  if (!sc) return {"", ""};
  return {sc->provisioner, pvc.metadata.namespace_ + "-" + pvc.metadata.name};
}

class NodeVolumeLimits : public Plugin {
 public:
  std::string_view Name() const override { return "NodeVolumeLimits"; }
  PreResult PreFilter(const api::Pod& pod, const ClusterIndex& c) override {
    snapshot_ = c.snapshot;
    for (const auto& v : pod.spec.volumes) {
      if (v.persistent_volume_claim || v.ephemeral) return PreResult::Ok();
    }
    return PreResult::Skip();
  }
  Rejection Filter(const api::Pod& pod, const NodeInfo& n) const override {
    if (pod.spec.volumes.empty()) return "";
    std::map<std::string, std::string> fresh;  // unique name -> driver
    std::string err = Attachable(pod, true, fresh);
    if (!err.empty()) return err;
    if (fresh.empty()) return "";
    const auto* csi = snapshot_->FindCsiNode(n.node->metadata.name);
    if (!csi) return "";
    std::map<std::string, int64_t> limits;
    for (const auto& d : csi->spec.drivers) {
      if (d.allocatable && d.allocatable->count) limits[d.name] = *d.allocatable->count;
    }
    if (limits.empty()) return "";
    std::map<std::string, std::string> attached;
    for (const auto* e : n.pods) Attachable(*e, false, attached);
    std::map<std::string, int64_t> count;
    for (const auto& [name, driver] : attached) {
      fresh.erase(name);
      count[driver]++;
    }
    std::map<std::string, int64_t> fresh_count;
    for (const auto& [name, driver] : fresh) fresh_count[driver]++;
    for (const auto& [driver, k] : fresh_count) {
      auto it = limits.find(driver);
      if (it != limits.end() && count[driver] + k > it->second) {
        return "node(s) exceed max volume count";
      }
    }
    return "";
  }

 private:
  std::string Attachable(const api::Pod& pod, bool fresh,
                         std::map<std::string, std::string>& out) const {
    for (const auto& v : pod.spec.volumes) {
      std::string claim = VolumeClaimName(pod, v);
      if (claim.empty()) continue;
      const auto* pvc = snapshot_->FindPvc(pod.metadata.namespace_, claim);
      if (!pvc) {
        if (fresh) {
          return "looking up PVC " + pod.metadata.namespace_ + "/" + claim + ": not found";
        }
        continue;
      }
      auto [driver, handle] = CsiDriverInfo(*snapshot_, *pvc);
      if (driver.empty() || handle.empty()) continue;
      std::string key = driver + "/";
      key += handle;
      out[std::move(key)] = driver;
    }
    return "";
  }
  const Snapshot* snapshot_ = nullptr;
};

}  // namespace

std::unique_ptr<Plugin> NewVolumeRestrictions() { return std::make_unique<VolumeRestrictions>(); }
std::unique_ptr<Plugin> NewNodeVolumeLimits() { return std::make_unique<NodeVolumeLimits>(); }

}  // namespace draco::feasibility::internal
