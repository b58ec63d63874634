// ClusterCache: the feasibility inputs (PVs, PVCs, StorageClasses, CSINodes, Namespaces), the
// snapshot kube-scheduler's filters are evaluated on, and the PodGroups of PodGroup claims.
#include "controller/api/extended_resource.h"
#include "controller/reconcilers/cluster_cache.h"

namespace draco::reconcilers {

void ClusterCache::UpsertNode(NodePtr node) {
  // Its allocatable, parsed once per node version (every pod's node filter reads it).
  auto allocatable = std::make_shared<const feasibility::Resources>(
      feasibility::FromResourceList(node->status.allocatable));
  std::unique_lock l(mu_);
  NodePtr& slot = nodes_[node->metadata.name];
  if (slot) node_allocatable_.erase(slot.get());
  node_allocatable_[node.get()] = std::move(allocatable);
  slot = std::move(node);
}

void ClusterCache::DeleteNode(const std::string& name) {
  std::unique_lock l(mu_);
  auto it = nodes_.find(name);
  if (it == nodes_.end()) return;
  node_allocatable_.erase(it->second.get());
  nodes_.erase(it);
}

std::vector<std::shared_ptr<const feasibility::Resources>> ClusterCache::NodeAllocatable(
    const std::vector<NodePtr>& nodes) const {
  std::vector<std::shared_ptr<const feasibility::Resources>> out;
  out.reserve(nodes.size());
  std::shared_lock l(mu_);
  for (const auto& n : nodes) {
    // Null (computed by the filter) for a node version the cache does not hold.
    auto it = node_allocatable_.find(n.get());
    out.push_back(it != node_allocatable_.end() ? it->second : nullptr);
  }
  return out;
}

void ClusterCache::UpsertPersistentVolume(std::shared_ptr<const api::PersistentVolume> pv) {
  std::unique_lock l(mu_);
  std::string name = pv->metadata.name;
  storage_.pvs[name] = std::move(pv);
}
void ClusterCache::DeletePersistentVolume(const std::string& name) {
  std::unique_lock l(mu_);
  storage_.pvs.erase(name);
}
void ClusterCache::UpsertPersistentVolumeClaim(
    std::shared_ptr<const api::PersistentVolumeClaim> pvc) {
  std::unique_lock l(mu_);
  std::string key = pvc->metadata.namespace_ + "/" + pvc->metadata.name;
  storage_.pvcs[key] = std::move(pvc);
}
void ClusterCache::DeletePersistentVolumeClaim(const std::string& ns, const std::string& name) {
  std::unique_lock l(mu_);
  storage_.pvcs.erase(ns + "/" + name);
}
void ClusterCache::UpsertStorageClass(std::shared_ptr<const api::StorageClass> sc) {
  std::unique_lock l(mu_);
  std::string name = sc->metadata.name;
  storage_.storage_classes[name] = std::move(sc);
}
void ClusterCache::DeleteStorageClass(const std::string& name) {
  std::unique_lock l(mu_);
  storage_.storage_classes.erase(name);
}
void ClusterCache::UpsertCSINode(std::shared_ptr<const api::CSINode> csi_node) {
  std::unique_lock l(mu_);
  std::string name = csi_node->metadata.name;
  storage_.csi_nodes[name] = std::move(csi_node);
}
void ClusterCache::DeleteCSINode(const std::string& name) {
  std::unique_lock l(mu_);
  storage_.csi_nodes.erase(name);
}
void ClusterCache::UpsertNamespace(std::shared_ptr<const api::Namespace> ns) {
  std::unique_lock l(mu_);
  std::string name = ns->metadata.name;
  storage_.namespaces[name] = std::move(ns);
}
void ClusterCache::DeleteNamespace(const std::string& name) {
  std::unique_lock l(mu_);
  storage_.namespaces.erase(name);
}

void ClusterCache::UpsertPodGroup(PodGroupPtr group) {
  std::unique_lock l(mu_);
  std::string key = group->metadata.namespace_ + "/" + group->metadata.name;
  pod_groups_[key] = std::move(group);
}
void ClusterCache::DeletePodGroup(const std::string& ns, const std::string& name) {
  std::unique_lock l(mu_);
  pod_groups_.erase(ns + "/" + name);
}
PodGroupPtr ClusterCache::GetPodGroup(const std::string& ns, const std::string& name) const {
  std::shared_lock l(mu_);
  auto it = pod_groups_.find(ns + "/" + name);
  return it == pod_groups_.end() ? nullptr : it->second;
}
std::vector<PodPtr> ClusterCache::PodGroupMembers(const std::string& ns,
                                                  const std::string& group) const {
  std::shared_lock l(mu_);
  std::vector<PodPtr> out;
  for (const auto& [key, p] : pods_) {
    if (p->metadata.namespace_ == ns && PodGroupNameOf(*p) == group) out.push_back(p);
  }
  return out;
}

std::vector<PodPtr> ClusterCache::GroupMembers(const std::string& group_key) const {
  std::shared_lock l(mu_);
  std::vector<PodPtr> out;
  auto it = pods_by_group_.find(group_key);
  if (it == pods_by_group_.end()) return out;
  for (const auto& key : it->second) {
    if (auto p = pods_.find(key); p != pods_.end()) out.push_back(p->second);
  }
  return out;
}

feasibility::Snapshot ClusterCache::FeasibilitySnapshot(const std::string& exclude_pod_key,
                                                        bool with_nodes) const {
  std::shared_lock l(mu_);
  feasibility::Snapshot s = storage_;
  if (with_nodes) {
    s.nodes.reserve(nodes_.size());
    s.node_allocatable.reserve(nodes_.size());
    for (const auto& [name, n] : nodes_) {
      s.nodes.push_back(n);
      auto it = node_allocatable_.find(n.get());
      s.node_allocatable.push_back(it != node_allocatable_.end() ? it->second : nullptr);
    }
  }
  for (const auto& [name, c] : classes_) {
    s.dra_extended_resources.insert(std::string(api::kDeviceClassResourcePrefix) + name);
    const auto& ext = c->spec.extended_resource_name;
    if (ext && !ext->empty()) s.dra_extended_resources.insert(*ext);
  }
  s.pods.reserve(live_pods_.size());
  for (const auto& [key, live] : live_pods_) {
    if (key == exclude_pod_key) continue;
    const api::Pod& p = *live.pod;
    std::string node = p.spec.node_name;
    if (node.empty()) {
      auto nom = nominated_.find(key);
      node = nom != nominated_.end() ? nom->second : p.status.nominated_node_name;
    }
    if (!node.empty()) s.pods.push_back({live.pod, std::move(node), live.requests});
  }
  return s;
}

}  // namespace draco::reconcilers
