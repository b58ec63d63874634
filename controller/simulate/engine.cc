#include "controller/simulate/engine.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "controller/allocator/allocator.h"
#include "controller/allocator/explain.h"
#include "controller/allocator/features.h"
#include "controller/api/extended_resource.h"
#include "controller/api/pod_claims.h"
#include "controller/feasibility/node_filter.h"
#include "controller/simulate/extended_resources.h"

namespace draco::simulate {

std::string Key(const std::string& ns, const std::string& name) {
  return (ns.empty() ? "default" : ns) + "/" + name;
}

void PrintExplanations(const std::vector<alloc::Explanation>& explanations, bool skip_allocated,
                       const std::string& indent, std::ostream& out) {
  constexpr size_t kListedEmptyNodes = 10;
  std::vector<std::string> empty;
  for (const auto& e : explanations) {
    const bool allocated = e.outcome.kind == alloc::Outcome::Kind::kAllocated;
    if (allocated && skip_allocated) continue;
    bool none = !allocated && !e.requests.empty();
    for (const auto& r : e.requests) {
      none = none && r.cel_errors.empty() && !r.stages.empty() && r.stages.front().count == 0;
    }
    if (none) {
      empty.push_back(e.node);
      continue;
    }
    std::istringstream lines(alloc::ExplanationToText(e));
    for (std::string l; std::getline(lines, l);) out << indent << l << "\n";
  }
  if (empty.empty()) return;
  out << indent << "no devices for these requests on " << empty.size()
      << (empty.size() == 1 ? " node:" : " nodes:");
  for (size_t i = 0; i < empty.size() && i < kListedEmptyNodes; ++i) out << " " << empty[i];
  if (empty.size() > kListedEmptyNodes) out << " +" << empty.size() - kListedEmptyNodes << " more";
  out << "\n";
}

std::string IgnoredLine(const Inputs& in) {
  if (in.ignored.empty()) return "";
  std::string line =
      "ignored: " + std::to_string(in.ignored.size()) +
      (in.ignored.size() == 1 ? " object of an unknown kind: " : " objects of unknown kinds: ");
  for (size_t i = 0; i < in.ignored.size(); ++i) line += (i ? ", " : "") + in.ignored[i];
  return line;
}

namespace {

// The claims of a simulation while Build makes the groups, in the api model: the input's, then
// those generated for pods. Indices are Simulation::claims indices.
struct ClaimSet {
  std::vector<api::ResourceClaim> claims;
  std::map<std::string, size_t> by_key;  // "ns/name" -> index
  std::set<size_t> referenced;           // claims some pod uses

  size_t Add(api::ResourceClaim c) {
    claims.push_back(std::move(c));
    return claims.size() - 1;
  }
  std::optional<size_t> Find(const std::string& ns, const std::string& name) const {
    auto it = by_key.find(Key(ns, name));
    return it == by_key.end() ? std::nullopt : std::optional<size_t>(it->second);
  }
};

// The claim of pod entry `pc` (resolved with the controller's api::ResolveClaimName): a named
// claim, the claim the pod's status records (a live pod's), or one made from the template, named
// "<pod>-<podClaimName>". Empty with *problem set when the claim or template is missing.
std::optional<size_t> PodClaim(const Inputs& in, const api::Pod& pod,
                               const api::PodResourceClaim& pc, ClaimSet& cs,
                               std::string* problem) {
  const std::string& ns = pod.metadata.namespace_;
  auto resolved = api::ResolveClaimName(pod, pc);  // LoadInputs rejected entries naming neither
  if (!resolved.ok()) {
    *problem = resolved.status().message();
    return std::nullopt;
  }
  std::optional<size_t> found = resolved->name ? cs.Find(ns, *resolved->name) : std::nullopt;
  if (found || pc.resource_claim_name) {
    if (!found) *problem = "resource claim " + ns + "/" + *pc.resource_claim_name + " not found";
    return found;
  }
  auto t = in.templates.find(Key(ns, *pc.resource_claim_template_name));
  if (t == in.templates.end()) {
    *problem =
        "resource claim template " + ns + "/" + *pc.resource_claim_template_name + " not found";
    return std::nullopt;
  }
  api::ResourceClaim c;
  c.metadata.name = pod.metadata.name + "-" + pc.name;
  c.metadata.namespace_ = ns;
  c.metadata.annotations["resource.kubernetes.io/pod-claim-name"] = pc.name;
  c.spec = t->second.spec.spec;
  size_t i = cs.Add(std::move(c));
  cs.by_key[Key(ns, cs.claims[i].metadata.name)] = i;
  return i;
}

// The group of pod `index` of the input: its claims, and the special claim for its extended
// resources (the one its status records, else the one kube-scheduler would make).
Group PodUnit(const Inputs& in, size_t index, const alloc::Features& features,
              const api::ExtendedResourceClasses& ext_classes, ClaimSet& cs) {
  const api::Pod& p = *in.pods[index];
  Group g;
  g.label = "pod " + p.metadata.namespace_ + "/" + p.metadata.name;
  g.pod = static_cast<int>(index);
  for (const auto& pc : p.spec.resource_claims) {
    std::optional<size_t> c = PodClaim(in, p, pc, cs, &g.problem);
    if (!c) continue;
    cs.referenced.insert(*c);
    g.claims.push_back(*c);
  }
  std::optional<size_t> recorded =
      cs.Find(p.metadata.namespace_, api::ExtendedResourceClaimName(p));
  StatusOr<std::optional<api::ResourceClaim>> ext = std::optional<api::ResourceClaim>();
  if (features.extended_resource) ext = ExtendedResourceClaim(p, ext_classes);
  if (recorded) {
    cs.referenced.insert(*recorded);
    g.claims.push_back(*recorded);
  } else if (!ext.ok()) {
    g.problem = ext.status().message();
  } else if (*ext) {
    g.claims.push_back(cs.Add(std::move(**ext)));
  }
  return g;
}

}  // namespace

Status Build(const Options& opts, Simulation* sim) {
  if (Status s = LoadInputs(opts, &sim->in); !s.ok()) return s;
  alloc::Features features = alloc::DefaultFeatures(opts.kubernetes_minor);
  if (Status s = alloc::ApplyFeatureGates(opts.feature_gates, opts.kubernetes_minor, features);
      !s.ok()) {
    return s.WithPrefix("--feature-gates");
  }
  // Without DRAExtendedResource kube-scheduler leaves extended resources to device plugins.
  if (!features.extended_resource) sim->in.cluster.dra_extended_resources.clear();
  ClaimSet cs;
  for (const auto& c : sim->in.claims) {
    cs.by_key[Key(c.metadata.namespace_, c.metadata.name)] = cs.Add(c);
  }
  std::vector<const api::DeviceClass*> classes;
  for (const auto& c : sim->in.classes) classes.push_back(&c);
  const api::ExtendedResourceClasses ext_classes = api::MapExtendedResourceClasses(classes);
  for (size_t i = 0; i < sim->in.pods.size(); ++i) {
    sim->groups.push_back(PodUnit(sim->in, i, features, ext_classes, cs));
  }
  for (size_t i = 0; i < sim->in.claims.size(); ++i) {
    if (cs.referenced.count(i) || cs.claims[i].status.allocation) continue;
    Group g;
    g.label = "claim " + Key(cs.claims[i].metadata.namespace_, cs.claims[i].metadata.name);
    g.claims.push_back(i);
    sim->groups.push_back(std::move(g));
  }
  sim->claims = std::move(cs.claims);
  alloc::Allocator::Config& cfg = sim->allocator_config;
  for (size_t i = 0; i < sim->in.policies.size(); ++i) {  // an error names the policy's document
    Status s = alloc::ValidatePolicy(sim->in.policies[i]);
    if (!s.ok()) return s.WithPrefix(sim->in.policy_sources[i]);
  }
  cfg.policies = sim->in.policies;
  cfg.selectors = alloc::NewCelSelectorCompiler();
  cfg.timeout = std::chrono::milliseconds(10000);
  cfg.features = features;
  sim->features = features;
  sim->snapshot = alloc::Snapshot::Build(features, sim->in.classes, sim->in.slices, sim->in.rules);
  return ResetAllocator(*sim);
}

void PrintAllocation(const api::ResourceClaim& c, const api::AllocationResult& r,
                     std::ostream& out) {
  out << "  claim " << c.metadata.namespace_ << "/" << c.metadata.name << "\n";
  for (const auto& d : r.devices.results) {
    out << "    " << d.request << " -> " << d.driver << "/" << d.pool << "/" << d.device;
    if (d.admin_access.value_or(false)) out << " (admin access)";
    if (d.share_id) out << " share " << *d.share_id;
    for (const auto& [k, q] : d.consumed_capacity) out << " " << k << "=" << q.ToString();
    out << "\n";
  }
  for (const auto& cfg : r.devices.config) {
    out << "    config " << cfg.source << " " << (cfg.opaque ? cfg.opaque->driver : "") << " "
        << (cfg.opaque ? cfg.opaque->parameters.json : "");
    if (!cfg.requests.empty()) {
      out << " for";
      for (const auto& q : cfg.requests) out << " " << q;
    }
    out << "\n";
  }
  if (r.node_selector) {
    std::string ns;
    for (const auto& t : r.node_selector->node_selector_terms) {
      for (const auto& e : t.match_fields) {
        ns += " " + e.key + " " + e.operator_ + " " + (e.values.empty() ? "" : e.values[0]);
      }
      for (const auto& e : t.match_expressions) {
        ns += " " + e.key + " " + e.operator_;
        for (const auto& v : e.values) ns += " " + v;
      }
    }
    out << "    nodeSelector:" << ns << "\n";
  }
}

// The nodes group `g` may use, filtered as `draco run` filters them (feasibility/node_filter.h):
// for a pod, kube-scheduler's filters on the cluster as placed so far (the pod left out), Ready,
// and the node selector of every claim of the group already allocated; for a claim no pod
// references, Ready and schedulable. One "node: why" line per node that does not pass, in order.
std::vector<const api::Node*> Candidates(const Simulation& sim, const Group& g,
                                         std::vector<std::string>* filtered) {
  const api::Pod* pod = g.pod >= 0 ? sim.in.pods[static_cast<size_t>(g.pod)].get() : nullptr;
  feasibility::Snapshot snap;
  if (pod) {
    snap = sim.in.cluster;
    std::erase_if(snap.pods, [&](const feasibility::PlacedPod& p) { return p.pod.get() == pod; });
  } else {
    snap.nodes = sim.in.cluster.nodes;
  }
  std::vector<const api::NodeSelector*> allocated;
  for (size_t c : g.claims) {
    const auto& a = sim.claims[c].status.allocation;
    if (a && a->node_selector) allocated.push_back(&*a->node_selector);
  }
  feasibility::NodeFilterResult r = feasibility::FilterNodes(pod, snap, allocated);
  std::vector<const api::Node*> out;
  size_t next = 0;  // r.fit keeps the nodes' order
  for (auto& node : snap.nodes) {
    if (next < r.fit.size() && r.fit[next] == node) {
      out.push_back(node.get());  // shared with sim.in.cluster
      ++next;
    } else if (auto it = r.why.find(node->metadata.name); it != r.why.end()) {
      filtered->push_back(it->first + ": " + it->second);
    }
  }
  return out;
}

GroupOutcome RunGroup(Simulation& sim, const Group& g, bool explain, const std::string& only_node,
                      const std::string& prefer) {
  GroupOutcome go;
  if (!g.problem.empty()) {
    go.message = g.problem;
    return go;
  }
  std::vector<size_t> pending;
  std::vector<const api::ResourceClaim*> claims;
  for (size_t i : g.claims) {
    if (sim.claims[i].status.allocation) continue;
    pending.push_back(i);
    claims.push_back(&sim.claims[i]);
  }
  if (claims.empty()) {
    go.allocated = true;
    go.message = g.claims.empty() ? "no resource claims" : "all claims already allocated";
    return go;
  }
  std::vector<const api::Node*> all = Candidates(sim, g, &go.filtered);
  std::vector<const api::Node*> cands;
  for (const api::Node* n : all) {
    if (only_node.empty() || n->metadata.name == only_node) cands.push_back(n);
  }
  if (cands.empty()) {
    go.message = "no candidate node: " + std::to_string(all.size()) + "/" +
                 std::to_string(sim.in.cluster.nodes.size()) +
                 " nodes pass kube-scheduler's filters";
    return go;
  }
  if (explain) {
    for (const api::Node* n : cands) go.explanations.push_back(sim.allocator->Explain(*n, claims));
    return go;
  }
  size_t start = 0;
  for (size_t k = 0; k < cands.size(); ++k) start = cands[k]->metadata.name == prefer ? k : start;
  alloc::Outcome o = sim.allocator->AllocateOnAnyNode(cands, claims, start);
  if (o.kind == alloc::Outcome::Kind::kAllocated) {
    go.allocated = true;
    go.node = o.node;
    for (size_t k = 0; k < pending.size(); ++k) {
      sim.allocator->Commit(sim.claims[pending[k]], o.results[k]);
      sim.claims[pending[k]].status.allocation = std::move(o.results[k]);
    }
    // The pod now counts as placed for later pods (affinity, spread, ports, resources).
    if (g.pod >= 0) {
      const auto& pod = sim.in.pods[static_cast<size_t>(g.pod)];
      if (pod->spec.node_name.empty()) sim.in.cluster.pods.push_back({pod, o.node});
    }
    return go;
  }
  go.message =
      std::string(alloc::OutcomeKindName(o.kind)) + (o.message.empty() ? "" : ": " + o.message);
  for (const api::Node* n : cands) go.explanations.push_back(sim.allocator->Explain(*n, claims));
  return go;
}

}  // namespace draco::simulate
