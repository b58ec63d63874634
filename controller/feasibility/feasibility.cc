#include "controller/feasibility/feasibility.h"

#include "controller/feasibility/labels.h"
#include "controller/feasibility/plugin.h"

namespace draco::feasibility {

const api::PersistentVolumeClaim* Snapshot::FindPvc(const std::string& ns,
                                                    const std::string& name) const {
  auto it = pvcs.find(ns + "/" + name);
  return it == pvcs.end() ? nullptr : it->second.get();
}
const api::PersistentVolume* Snapshot::FindPv(const std::string& name) const {
  auto it = pvs.find(name);
  return it == pvs.end() ? nullptr : it->second.get();
}
const api::StorageClass* Snapshot::FindStorageClass(const std::string& name) const {
  auto it = storage_classes.find(name);
  return it == storage_classes.end() ? nullptr : it->second.get();
}
const api::CSINode* Snapshot::FindCsiNode(const std::string& name) const {
  auto it = csi_nodes.find(name);
  return it == csi_nodes.end() ? nullptr : it->second.get();
}
const api::StringMap* Snapshot::NamespaceLabels(const std::string& name) const {
  auto it = namespaces.find(name);
  return it == namespaces.end() ? nullptr : &it->second->metadata.labels;
}

namespace {

std::vector<std::unique_ptr<internal::Plugin>> DefaultPlugins() {
  std::vector<std::unique_ptr<internal::Plugin>> p;
  p.push_back(internal::NewNodeName());
  p.push_back(internal::NewNodeUnschedulable());
  p.push_back(internal::NewTaintToleration());
  p.push_back(internal::NewNodeAffinity());
  p.push_back(internal::NewNodePorts());
  p.push_back(internal::NewNodeResourcesFit());
  p.push_back(internal::NewVolumeRestrictions());
  p.push_back(internal::NewNodeVolumeLimits());
  p.push_back(internal::NewVolumeBinding());
  p.push_back(internal::NewVolumeZone());
  p.push_back(internal::NewPodTopologySpread());
  p.push_back(internal::NewInterPodAffinity());
  return p;
}

Verdict Reject(std::string_view plugin, std::string reason) {
  return Verdict{false, std::string(plugin), std::move(reason), false, ""};
}

}  // namespace

std::vector<Verdict> Evaluate(const api::Pod& pod, const Snapshot& snapshot) {
  internal::ClusterIndex cluster = internal::ClusterIndex::Build(snapshot);
  auto plugins = DefaultPlugins();
  std::vector<bool> active(plugins.size(), true);
  // (plugin, names) of each PreFilterResult, in order.
  std::vector<std::pair<std::string_view, std::set<std::string>>> narrowing;
  std::optional<Verdict> all;  // a PreFilter verdict for every node
  for (size_t i = 0; i < plugins.size() && !all; ++i) {
    internal::PreResult r = plugins[i]->PreFilter(pod, cluster);
    switch (r.code) {
      case internal::PreResult::kSkip:
        active[i] = false;
        break;
      case internal::PreResult::kReject:
        all = Reject(plugins[i]->Name(), r.reason);
        break;
      case internal::PreResult::kError:
        all = Verdict{false, std::string(plugins[i]->Name()), r.reason, true, ""};
        break;
      case internal::PreResult::kOk:
        if (r.node_names) narrowing.emplace_back(plugins[i]->Name(), std::move(*r.node_names));
        break;
    }
  }
  std::vector<Verdict> out;
  out.reserve(cluster.nodes.size());
  for (const auto& n : cluster.nodes) {
    if (all) {
      out.push_back(*all);
      continue;
    }
    std::optional<Verdict> v;
    for (const auto& [name, names] : narrowing) {
      if (!names.count(n.node->metadata.name)) {
        v = Reject(name, "node(s) didn't satisfy plugin " + std::string(name));
        break;
      }
    }
    for (size_t i = 0; i < plugins.size() && !v; ++i) {
      if (!active[i]) continue;
      internal::Rejection why = plugins[i]->Filter(pod, n);
      if (!why.passed()) {
        v = Reject(plugins[i]->Name(), std::move(why.reason));
        v->detail = std::move(why.detail);
      }
    }
    out.push_back(v.value_or(Verdict{}));
  }
  return out;
}

Verdict Filter(const api::Pod& pod, const api::Node& node, const Snapshot& snapshot) {
  Snapshot copy = snapshot;
  copy.nodes.push_back(std::make_shared<api::Node>(node));
  return Evaluate(pod, copy).back();
}

std::vector<std::shared_ptr<const api::Node>> FeasibleNodes(const api::Pod& pod,
                                                            const Snapshot& snapshot) {
  std::vector<Verdict> v = Evaluate(pod, snapshot);
  std::vector<std::shared_ptr<const api::Node>> out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i].passed) out.push_back(snapshot.nodes[i]);
  }
  return out;
}

namespace {

Status ValidateTerms(const std::optional<api::PodAffinity>& a, const std::string& field) {
  if (!a) return OkStatus();
  const auto& req = a->required_during_scheduling_ignored_during_execution;
  for (size_t i = 0; i < req.size(); ++i) {
    std::string f =
        field + ".requiredDuringSchedulingIgnoredDuringExecution[" + std::to_string(i) + "]";
    if (req[i].topology_key.empty()) {
      return InvalidArgumentError(f + ".topologyKey: Required value: can not be empty");
    }
    auto s = Selector::Parse(req[i].label_selector, f + ".labelSelector");
    if (!s.ok()) return s.status();
    auto ns = Selector::Parse(req[i].namespace_selector, f + ".namespaceSelector");
    if (!ns.ok()) return ns.status();
  }
  return OkStatus();
}

}  // namespace

Status ValidatePod(const api::Pod& pod) {
  if (pod.spec.affinity) {
    Status s = ValidateTerms(pod.spec.affinity->pod_affinity, "spec.affinity.podAffinity");
    if (!s.ok()) return s;
    s = ValidateTerms(pod.spec.affinity->pod_anti_affinity, "spec.affinity.podAntiAffinity");
    if (!s.ok()) return s;
  }
  const auto& tsc = pod.spec.topology_spread_constraints;
  for (size_t i = 0; i < tsc.size(); ++i) {
    std::string f = "spec.topologySpreadConstraints[" + std::to_string(i) + "]";
    const auto& c = tsc[i];
    if (c.max_skew <= 0) return InvalidArgumentError(f + ".maxSkew: must be greater than zero");
    if (c.topology_key.empty()) {
      return InvalidArgumentError(f + ".topologyKey: Required value: can not be empty");
    }
    if (c.when_unsatisfiable != "DoNotSchedule" && c.when_unsatisfiable != "ScheduleAnyway") {
      return InvalidArgumentError(f + ".whenUnsatisfiable: Unsupported value: \"" +
                                  c.when_unsatisfiable + "\"");
    }
    if (c.min_domains && *c.min_domains <= 0) {
      return InvalidArgumentError(f + ".minDomains: must be greater than zero");
    }
    for (const auto* p : {&c.node_affinity_policy, &c.node_taints_policy}) {
      if (*p && **p != "Honor" && **p != "Ignore") {
        return InvalidArgumentError(
            f + (p == &c.node_affinity_policy ? ".nodeAffinityPolicy" : ".nodeTaintsPolicy") +
            ": Unsupported value: \"" + **p + "\"");
      }
    }
    auto s = Selector::Parse(c.label_selector, f + ".labelSelector");
    if (!s.ok()) return s.status();
  }
  return OkStatus();
}

bool CoversPod(const api::Pod& pod) {
  if (!pod.spec.scheduler_name.empty() && pod.spec.scheduler_name != "default-scheduler") {
    return false;
  }
  for (const auto& v : pod.spec.volumes) {
    if (v.gce_persistent_disk || v.aws_elastic_block_store || v.rbd || v.iscsi) return false;
  }
  return ValidatePod(pod).ok();
}

}  // namespace draco::feasibility
