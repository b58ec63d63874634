// See groups.h.
#include "controller/simulate/groups.h"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>

namespace draco::simulate {
namespace {

const api::Pod* PodOf(const Simulation& sim, size_t unit) {
  const int i = sim.groups[unit].pod;
  return i < 0 ? nullptr : sim.in.pods[static_cast<size_t>(i)].get();
}

std::string PodName(const Simulation& sim, size_t unit) {
  const api::Pod* p = PodOf(sim, unit);
  return p ? p->metadata.namespace_ + "/" + p->metadata.name : sim.groups[unit].label;
}

const api::PodGroup* FindPodGroup(const Simulation& sim, const api::Pod& pod) {
  const auto& sg = pod.spec.scheduling_group;
  if (!sg || !sg->pod_group_name) return nullptr;
  for (const auto& pg : sim.in.pod_groups) {
    const std::string& ns = pg.metadata.namespace_.empty() ? "default" : pg.metadata.namespace_;
    if (ns == pod.metadata.namespace_ && pg.metadata.name == *sg->pod_group_name) return &pg;
  }
  return nullptr;
}

// "group JobSet pytorch", "group g1" (a draco.dev/group label's display is "group g1" already).
std::string Title(const group::GroupRef& g) {
  return g.display.starts_with("group ") ? g.display : "group " + g.display;
}

// The match-attribute value of a device some member holds already (the controller's
// GroupDomainInUse).
std::optional<std::string> DomainInUse(const Simulation& sim, const PodGroupUnits& pg) {
  for (const auto* units : {&pg.bound, &pg.units}) {
    for (size_t u : *units) {
      for (size_t c : sim.groups[u].claims) {
        const auto& a = sim.claims[c].status.allocation;
        if (!a) continue;
        for (const auto& d : a->devices.results) {
          auto v = group::DeviceDomain(sim.in.slices, pg.ref.match_attribute, d.driver, d.pool,
                                       d.device);
          if (v) return v;
        }
      }
    }
  }
  return std::nullopt;
}

// Why a member could not be placed, in one line (its explanations are printed with it).
std::string Reason(const GroupOutcome& go) {
  std::string why = go.message;
  if (!go.explanations.empty()) {
    why += " on " + std::to_string(go.explanations.size()) + " candidate node(s)";
  }
  if (!go.filtered.empty()) {
    why += "; " + std::to_string(go.filtered.size()) + " node(s) filtered out";
  }
  return why;
}

// The members' allocations during one group::PlanGroup: each try commits, Undo releases
// everything committed since the last Undo.
struct Trial {
  Simulation& sim;
  const PodGroupUnits& pg;
  std::vector<GroupOutcome> last;                              // per member: its latest try
  std::map<std::pair<size_t, size_t>, GroupOutcome> failures;  // (attempt, member) -> outcome
  std::vector<size_t> claims;                                  // allocated since the last Undo
  std::vector<const api::Pod*> pods;                           // placed since the last Undo
  Status status;                                               // a failed allocator rebuild

  group::MemberOutcome Try(size_t k, const group::Domain* dom, size_t attempt,
                           const std::string& prefer) {
    const Group& g = sim.groups[pg.units[k]];
    std::vector<size_t> fresh;
    std::vector<api::ResourceClaim> saved;
    for (size_t c : g.claims) {
      if (sim.claims[c].status.allocation || std::ranges::find(fresh, c) != fresh.end()) continue;
      fresh.push_back(c);
      if (!dom) continue;
      saved.push_back(sim.claims[c]);
      sim.claims[c] = group::Constrained(sim.claims[c], dom->selector);
    }
    GroupOutcome go = RunGroup(sim, g, false, "", prefer);
    for (size_t i = 0; i < saved.size(); ++i) {  // the claims as written, with the result
      saved[i].status.allocation = std::move(sim.claims[fresh[i]].status.allocation);
      sim.claims[fresh[i]] = std::move(saved[i]);
    }
    last[k] = go;
    if (!go.allocated) {
      failures[{attempt, k}] = go;
      return {false, "", Reason(go)};
    }
    for (size_t c : fresh) {
      if (sim.claims[c].status.allocation) claims.push_back(c);
    }
    if (!go.node.empty()) pods.push_back(PodOf(sim, pg.units[k]));
    return {true, go.node, ""};
  }

  void Undo() {
    for (size_t c : claims) sim.claims[c].status.allocation.reset();
    std::erase_if(sim.in.cluster.pods, [&](const feasibility::PlacedPod& p) {
      return std::ranges::find(pods, p.pod.get()) != pods.end();
    });
    const bool released = !claims.empty();
    claims.clear();
    pods.clear();
    if (!released) return;
    if (Status s = ResetAllocator(sim); !s.ok() && status.ok()) status = s;
  }
};

}  // namespace

Status ResetAllocator(Simulation& sim) {
  std::vector<const api::ResourceClaim*> allocated;
  for (const auto& c : sim.claims) {
    if (c.status.allocation) allocated.push_back(&c);
  }
  auto a = alloc::Allocator::Create(sim.allocator_config, sim.snapshot, allocated);
  if (!a.ok()) return a.status();
  sim.allocator = std::move(a).value();
  return OkStatus();
}

std::vector<PodGroupUnits> FindPodGroups(const Simulation& sim, std::vector<int>* group_of) {
  std::vector<PodGroupUnits> out;
  std::map<std::string, size_t> by_key;
  group_of->assign(sim.groups.size(), -1);
  for (size_t u = 0; u < sim.groups.size(); ++u) {
    const api::Pod* p = PodOf(sim, u);
    if (!p || p->metadata.deletion_timestamp) continue;
    auto ref = group::GroupOf(*p, FindPodGroup(sim, *p));
    if (!ref) continue;
    auto [it, added] = by_key.try_emplace(ref->key, out.size());
    if (added) out.push_back(PodGroupUnits{*ref, {}, {}});
    PodGroupUnits& pg = out[it->second];
    (p->spec.node_name.empty() ? pg.units : pg.bound).push_back(u);
    (*group_of)[u] = static_cast<int>(it->second);
  }
  return out;
}

PodGroupOutcome RunPodGroup(Simulation& sim, const PodGroupUnits& pg) {
  PodGroupOutcome out;
  out.members.resize(pg.units.size());
  const group::GroupRef& g = pg.ref;
  const size_t min = static_cast<size_t>(std::max<int64_t>(g.min_members, 0));
  const size_t released = pg.bound.size();
  const size_t exist = pg.units.size() + released;
  auto pending = [&](const std::string& why) {
    out.summary = Title(g) + ": NOT PLACED: " + why;
    for (auto& m : out.members) m.message = why;
    return out;
  };
  if (min == 0) {
    return pending(g.display + ": the minimum member count is not known (" +
                   (g.source == group::Source::kPodGroup
                        ? "PodGroup not in the input"
                        : "set " + std::string(group::kMinMembersKey)) +
                   "); the members stay gated");
  }
  if (exist < min) {
    return pending(g.display + ": " + std::to_string(exist) + " of " + std::to_string(min) +
                   " member(s) exist; the group is allocated once all of them do");
  }
  // Bound members that reach the minimum: the group runs and the others join one by one.
  const bool late = released >= min;
  const size_t need = late ? 0 : min - released;
  bool constrained = !g.match_attribute.empty();
  std::vector<group::Domain> domains;
  if (constrained) {
    auto all = group::DomainsOf(sim.in.slices, g.match_attribute);
    if (!all.ok()) return pending(all.status().message());
    std::optional<std::string> in_use = DomainInUse(sim, pg);
    for (auto& d : *all) {
      if (!in_use || d.value == *in_use) domains.push_back(std::move(d));
    }
    if (late && !in_use) constrained = false;  // as the controller's late members
    if (!constrained) domains.clear();
  }
  Trial t{sim, pg, std::vector<GroupOutcome>(pg.units.size()), {}, {}, {}, OkStatus()};
  group::PlanOutcome plan = group::PlanGroup(
      pg.units.size(), need, domains, constrained,
      [&](size_t k, const group::Domain* dom, const std::string& prefer) {
        return t.Try(k, dom, dom ? static_cast<size_t>(dom - domains.data()) : 0, prefer);
      },
      [&] { t.Undo(); });
  if (!t.status.ok()) return pending("cannot undo a trial: " + t.status.message());
  if (plan.ok) {
    out.placed = true;
    out.members = std::move(t.last);
    std::string where =
        plan.domain ? " in " + g.match_attribute + "=" + domains[*plan.domain].value : "";
    out.summary = Title(g) + ": " + std::to_string(plan.placed.size()) +
                  (late ? " member(s) placed one by one" : " member(s) placed at once") + where;
    if (released > 0) out.summary += " (" + std::to_string(released) + " bound already)";
    return out;
  }
  const std::string failure =
      group::DescribeFailure(g, plan, domains, PodName(sim, pg.units[plan.failed_member]));
  out.summary = Title(g) + ": NOT PLACED: " + failure;
  for (auto& m : out.members) {
    m = GroupOutcome{};
    m.message = "cannot place the group: " + failure;
  }
  auto it = t.failures.find({plan.failed_domain.value_or(0), plan.failed_member});
  if (it != t.failures.end()) {
    out.members[plan.failed_member].explanations = it->second.explanations;
    out.members[plan.failed_member].filtered = it->second.filtered;
  }
  return out;
}

}  // namespace draco::simulate
