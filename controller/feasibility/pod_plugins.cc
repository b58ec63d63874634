// PodTopologySpread (required constraints) and InterPodAffinity (required terms)
// (pkg/scheduler/framework/plugins/{podtopologyspread,interpodaffinity}/filtering.go).
#include <limits>

#include "controller/feasibility/labels.h"
#include "controller/feasibility/plugin.h"

namespace draco::feasibility::internal {
namespace {

using TopologyPair = std::pair<std::string, std::string>;

struct Constraint {
  int64_t max_skew = 1;
  std::string key;
  Selector selector;
  int64_t min_domains = 1;
  bool honor_affinity = true;
  bool honor_taints = false;
};

class PodTopologySpread : public Plugin {
 public:
  std::string_view Name() const override { return "PodTopologySpread"; }
  PreResult PreFilter(const api::Pod& pod, const ClusterIndex& c) override {
    constraints_.clear();
    counts_.clear();
    min_.clear();
    const auto& tsc = pod.spec.topology_spread_constraints;
    for (size_t i = 0; i < tsc.size(); ++i) {
      if (tsc[i].when_unsatisfiable != "DoNotSchedule") continue;
      auto sel = Selector::Parse(tsc[i].label_selector, "spec.topologySpreadConstraints[" +
                                                            std::to_string(i) + "].labelSelector");
      if (!sel.ok()) return PreResult::Error(sel.status().message());
      Constraint k;
      k.max_skew = tsc[i].max_skew;
      k.key = tsc[i].topology_key;
      k.selector = std::move(*sel);
      for (const auto& lk : tsc[i].match_label_keys) {
        auto it = pod.metadata.labels.find(lk);
        if (it != pod.metadata.labels.end()) k.selector.AddEquals(lk, it->second);
      }
      k.min_domains = tsc[i].min_domains.value_or(1);
      k.honor_affinity = tsc[i].node_affinity_policy.value_or("Honor") == "Honor";
      k.honor_taints = tsc[i].node_taints_policy.value_or("Ignore") == "Honor";
      constraints_.push_back(std::move(k));
    }
    if (constraints_.empty()) return PreResult::Ok();
    counts_.resize(constraints_.size());
    for (const auto& n : c.nodes) {
      const auto& labels = n.node->metadata.labels;
      bool all_keys = true;
      for (const auto& k : constraints_) all_keys = all_keys && labels.count(k.key);
      if (!all_keys) continue;
      for (size_t i = 0; i < constraints_.size(); ++i) {
        const Constraint& k = constraints_[i];
        if (k.honor_affinity && !MatchesRequiredNodeAffinity(pod, *n.node)) continue;
        if (k.honor_taints && FirstUntoleratedTaint(pod, *n.node)) continue;
        int64_t matched = 0;
        for (const auto* p : n.pods) {
          if (p->metadata.deletion_timestamp) continue;
          if (p->metadata.namespace_ != pod.metadata.namespace_) continue;
          if (k.selector.Matches(p->metadata.labels)) ++matched;
        }
        counts_[i][labels.at(k.key)] += matched;
      }
    }
    for (size_t i = 0; i < constraints_.size(); ++i) {
      int64_t m = std::numeric_limits<int64_t>::max();
      for (const auto& [v, n] : counts_[i]) m = std::min(m, n);
      if (static_cast<int64_t>(counts_[i].size()) < constraints_[i].min_domains) m = 0;
      min_.push_back(m);
    }
    return PreResult::Ok();
  }
  Rejection Filter(const api::Pod& pod, const NodeInfo& n) const override {
    const auto& labels = n.node->metadata.labels;
    for (size_t i = 0; i < constraints_.size(); ++i) {
      const Constraint& k = constraints_[i];
      auto it = labels.find(k.key);
      if (it == labels.end()) {
        return "node(s) didn't match pod topology spread constraints (missing required label)";
      }
      int64_t self = k.selector.Matches(pod.metadata.labels) ? 1 : 0;
      auto ct = counts_[i].find(it->second);
      int64_t matched = ct == counts_[i].end() ? 0 : ct->second;
      if (matched + self - min_[i] > k.max_skew) {
        return "node(s) didn't match pod topology spread constraints";
      }
    }
    return "";
  }

 private:
  std::vector<Constraint> constraints_;
  std::vector<std::map<std::string, int64_t>> counts_;
  std::vector<int64_t> min_;
};

// fwk.AffinityTerm: namespaces, selector, topology key, namespace selector.
struct Term {
  std::set<std::string> namespaces;
  Selector selector;
  Selector ns_selector;
  std::string key;
  bool Matches(const api::Pod& p, const api::StringMap& ns_labels) const {
    if (namespaces.count(p.metadata.namespace_) || ns_selector.Matches(ns_labels)) {
      return selector.Matches(p.metadata.labels);
    }
    return false;
  }
};

StatusOr<Term> MakeTerm(const api::Pod& owner, const api::PodAffinityTerm& t,
                        const std::string& field) {
  Term out;
  auto sel = Selector::Parse(t.label_selector, field + ".labelSelector");
  if (!sel.ok()) return sel.status();
  auto ns = Selector::Parse(t.namespace_selector, field + ".namespaceSelector");
  if (!ns.ok()) return ns.status();
  out.selector = std::move(*sel);
  out.ns_selector = std::move(*ns);
  out.key = t.topology_key;
  if (t.namespaces.empty() && !t.namespace_selector) {
    out.namespaces.insert(owner.metadata.namespace_);
  } else {
    out.namespaces.insert(t.namespaces.begin(), t.namespaces.end());
  }
  return out;
}

std::string PodName(const api::Pod& p) { return p.metadata.namespace_ + "/" + p.metadata.name; }

const std::vector<api::PodAffinityTerm>* Required(const std::optional<api::PodAffinity>& a) {
  return a ? &a->required_during_scheduling_ignored_during_execution : nullptr;
}

class InterPodAffinity : public Plugin {
 public:
  std::string_view Name() const override { return "InterPodAffinity"; }
  PreResult PreFilter(const api::Pod& pod, const ClusterIndex& c) override {
    affinity_.clear();
    anti_.clear();
    affinity_counts_.clear();
    anti_counts_.clear();
    existing_anti_counts_.clear();
    anti_who_.clear();
    existing_anti_who_.clear();
    static const api::StringMap kNoLabels;
    const api::StringMap* own_ns = c.snapshot->NamespaceLabels(pod.metadata.namespace_);
    if (!own_ns) own_ns = &kNoLabels;
    if (pod.spec.affinity) {
      auto load = [&](const std::optional<api::PodAffinity>& a, const std::string& field,
                      std::vector<Term>& out) -> Status {
        const auto* req = Required(a);
        for (size_t i = 0; req && i < req->size(); ++i) {
          auto t = MakeTerm(pod, (*req)[i], field + "[" + std::to_string(i) + "]");
          if (!t.ok()) return t.status();
          // mergeAffinityTermNamespacesIfNotEmpty: a non-empty namespace selector becomes the
          // set of existing namespaces it selects.
          if (!t->ns_selector.IsEverything()) {
            for (const auto& [name, ns] : c.snapshot->namespaces) {
              if (t->ns_selector.Matches(ns->metadata.labels)) t->namespaces.insert(name);
            }
            t->ns_selector = Selector();
          }
          out.push_back(std::move(*t));
        }
        return OkStatus();
      };
      Status s = load(pod.spec.affinity->pod_affinity,
                      "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution",
                      affinity_);
      if (s.ok()) {
        s = load(pod.spec.affinity->pod_anti_affinity,
                 "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution",
                 anti_);
      }
      if (!s.ok()) return PreResult::Error(s.message());
    }
    for (const auto& n : c.nodes) {
      const auto& labels = n.node->metadata.labels;
      for (const auto* e : n.pods) {
        // Existing pods' required anti-affinity against the incoming pod.
        if (e->spec.affinity) {
          const auto* req = Required(e->spec.affinity->pod_anti_affinity);
          for (size_t i = 0; req && i < req->size(); ++i) {
            auto t = MakeTerm(*e, (*req)[i], "existing");
            if (!t.ok() || !t->Matches(pod, *own_ns)) continue;
            auto it = labels.find(t->key);
            if (it != labels.end()) {
              existing_anti_counts_[{t->key, it->second}]++;
              existing_anti_who_.try_emplace({t->key, it->second}, PodName(*e));
            }
          }
        }
        // updateWithAffinityTerms: an existing pod counts only if it matches every term, and
        // then for each term's topology pair on its node.
        bool all_terms = !affinity_.empty();
        for (const auto& t : affinity_) all_terms = all_terms && t.Matches(*e, kNoLabels);
        for (const auto& t : affinity_) {
          auto it = labels.find(t.key);
          if (all_terms && it != labels.end()) affinity_counts_[{t.key, it->second}]++;
        }
        for (const auto& t : anti_) {
          auto it = labels.find(t.key);
          if (it != labels.end() && t.Matches(*e, kNoLabels)) {
            anti_counts_[{t.key, it->second}]++;
            anti_who_.try_emplace({t.key, it->second}, PodName(*e));
          }
        }
      }
    }
    if (affinity_.empty() && anti_.empty() && existing_anti_counts_.empty()) {
      return PreResult::Skip();
    }
    self_match_ = true;
    for (const auto& t : affinity_) self_match_ = self_match_ && t.Matches(pod, kNoLabels);
    return PreResult::Ok();
  }

  Rejection Filter(const api::Pod&, const NodeInfo& n) const override {
    const auto& labels = n.node->metadata.labels;
    bool exist = true;
    for (const auto& t : affinity_) {
      auto it = labels.find(t.key);
      if (it == labels.end()) return "node(s) didn't match pod affinity rules";
      auto c = affinity_counts_.find({t.key, it->second});
      if (c == affinity_counts_.end() || c->second <= 0) exist = false;
    }
    if (!exist && !(affinity_counts_.empty() && self_match_)) {
      return "node(s) didn't match pod affinity rules";
    }
    for (const auto& t : anti_) {
      auto it = labels.find(t.key);
      if (it == labels.end()) continue;
      auto c = anti_counts_.find({t.key, it->second});
      if (c != anti_counts_.end() && c->second > 0) {
        return {"node(s) didn't match pod anti-affinity rules",
                "pod anti-affinity with " + anti_who_.at(c->first)};
      }
    }
    for (const auto& [k, v] : labels) {
      auto c = existing_anti_counts_.find({k, v});
      if (c != existing_anti_counts_.end() && c->second > 0) {
        return {"node(s) didn't satisfy existing pods anti-affinity rules",
                "anti-affinity of existing pod " + existing_anti_who_.at(c->first)};
      }
    }
    return "";
  }

 private:
  std::vector<Term> affinity_;
  std::vector<Term> anti_;
  std::map<TopologyPair, int64_t> affinity_counts_;
  std::map<TopologyPair, int64_t> anti_counts_;
  std::map<TopologyPair, int64_t> existing_anti_counts_;
  std::map<TopologyPair, std::string> anti_who_;
  std::map<TopologyPair, std::string> existing_anti_who_;
  bool self_match_ = true;
};

}  // namespace

std::unique_ptr<Plugin> NewPodTopologySpread() { return std::make_unique<PodTopologySpread>(); }
std::unique_ptr<Plugin> NewInterPodAffinity() { return std::make_unique<InterPodAffinity>(); }

}  // namespace draco::feasibility::internal
