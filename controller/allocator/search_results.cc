// Result construction of the search: device results, configs and node selectors per claim.
#include <algorithm>
#include <set>

#include "controller/allocator/search.h"

namespace draco::alloc {
namespace {

// The request data of request `ri` as allocated (its chosen subrequest, if any).
const Search::ReqData& Chosen(const Search::ClaimData& cd, size_t ri) {
  return cd.reqs[ri][cd.has_subs[ri] ? static_cast<size_t>(cd.selected_sub[ri]) : 0];
}

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// Appends the requirements of `from` not already in `to` (same key, operator and value set).
void AddRequirements(const std::vector<NodeSelectorRequirement>& from,
                     std::vector<NodeSelectorRequirement>& to) {
  for (const auto& req : from) {
    bool dup = std::any_of(to.begin(), to.end(), [&](const auto& e) {
      if (e.key != req.key || e.op != req.op) return false;
      std::set<std::string> a(e.values.begin(), e.values.end());
      std::set<std::string> b(req.values.begin(), req.values.end());
      return a == b;
    });
    if (!dup) to.push_back(req);
  }
}

}  // namespace

void Search::AddDeviceResults(const ClaimData& cd, AllocationResult& ar) const {
  const Features& f = impl_.config_.features;
  for (const InternalResult& r : cd.results) {
    const ReqData& rd = cd.reqs[r.req][r.sub];
    const Candidate& c = pools_->cands[r.cand];
    const ResourceSlice& s = impl_.slices_[c.slice];
    const Device& d = s.devices[c.device];
    DeviceRequestAllocationResult o;
    o.request = rd.full;
    o.driver = s.driver;
    o.pool = s.pool;
    o.device = d.name;
    if (r.admin) o.admin_access = true;
    o.tolerations = rd.spec->tolerations;
    if (f.device_binding) {
      if (d.binding_conditions) o.binding_conditions = *d.binding_conditions;
      if (d.binding_failure_conditions) {
        o.binding_failure_conditions = *d.binding_failure_conditions;
      }
    }
    o.share_id = r.share_id;
    o.consumed_capacity = r.consumed;
    o.has_consumed_capacity = !r.consumed.empty();
    if (experimental_) o.skip_node_operations = s.skip_node_operations;
    ar.results.push_back(std::move(o));
  }
}

void Search::AddClassConfigs(const ClaimData& cd, AllocationResult& ar) const {
  // Class configs, once per class.
  std::vector<std::pair<int, std::pair<size_t, size_t>>> class_ranges;
  for (size_t ri = 0; ri < cd.reqs.size(); ++ri) {
    const ReqData& rd = Chosen(cd, ri);
    if (rd.class_idx < 0) continue;
    auto it = std::find_if(class_ranges.begin(), class_ranges.end(),
                           [&](const auto& p) { return p.first == rd.class_idx; });
    if (it != class_ranges.end()) {
      for (size_t i = it->second.first; i < it->second.second; ++i) {
        ar.config[i].requests.push_back(rd.full);
      }
      continue;
    }
    size_t begin = ar.config.size();
    const DeviceClass& cls = impl_.classes_[rd.class_idx];
    for (size_t k = 0; k < cls.config.size(); ++k) {
      AllocationConfig c;
      c.source = "FromClass";
      c.requests = {rd.full};
      c.has_opaque = cls.config_has_opaque[k];
      c.opaque = cls.config[k];
      ar.config.push_back(std::move(c));
    }
    class_ranges.push_back({rd.class_idx, {begin, ar.config.size()}});
  }
}

void Search::AddClaimConfigs(const ClaimData& cd, AllocationResult& ar) const {
  const ResourceClaim& claim = *cd.claim;
  for (const ClaimConfig& cc : claim.config) {
    AllocationConfig c;
    c.source = "FromClaim";
    c.requests = cc.requests;
    c.has_opaque = cc.has_opaque;
    c.opaque = cc.opaque;
    if (cc.requests.empty()) {
      ar.config.push_back(std::move(c));
      continue;
    }
    for (size_t ri = 0; ri < claim.requests.size(); ++ri) {
      if (Contains(cc.requests, claim.requests[ri].name)) {
        ar.config.push_back(c);
        break;
      }
      if (!cd.has_subs[ri]) continue;
      if (Contains(cc.requests, Chosen(cd, ri).full)) {
        ar.config.push_back(c);
        break;
      }
    }
  }
  for (auto& c : ar.config) {
    if (c.requests.empty()) continue;
    bool all = true;
    for (size_t ri = 0; ri < claim.requests.size() && all; ++ri) {
      if (Contains(c.requests, claim.requests[ri].name)) continue;
      if (cd.has_subs[ri] && Contains(c.requests, Chosen(cd, ri).full)) continue;
      all = false;
    }
    if (all) c.requests.clear();
  }
}

bool Search::SetNodeSelector(const ClaimData& cd, AllocationResult& ar, std::string* error) const {
  NodeSelectorTerm term;
  bool pinned = false;
  for (const InternalResult& r : cd.results) {
    const Candidate& c = pools_->cands[r.cand];
    const ResourceSlice& s = impl_.slices_[c.slice];
    const Device& d = s.devices[c.device];
    const std::optional<std::string>* nn;
    const std::optional<NodeSelector>* ns;
    if (s.per_device_node_selection.value_or(false)) {
      nn = &d.node_name;
      ns = &d.node_selector;
    } else {
      nn = &s.node_name;
      ns = &s.node_selector;
    }
    if (nn->has_value() || d.binds_to_node.value_or(false)) {
      pinned = true;
      break;
    }
    if (ns->has_value()) {
      const auto& terms = (*ns)->terms;
      if (terms.size() == 1) {
        AddRequirements(terms[0].match_fields, term.match_fields);
        AddRequirements(terms[0].match_expressions, term.match_expressions);
      } else if (terms.size() > 1) {
        *error = "create NodeSelector for claim " + cd.claim->name +
                 ": unsupported ResourceSlice.NodeSelector with " + std::to_string(terms.size()) +
                 " terms";
        return false;
      }
    }
  }
  if (pinned) {
    NodeSelector sel;
    NodeSelectorTerm t;
    t.match_fields.push_back({"metadata.name", "In", {node_.name}});
    sel.terms.push_back(std::move(t));
    ar.node_selector = std::move(sel);
  } else if (!term.match_fields.empty() || !term.match_expressions.empty()) {
    NodeSelector sel;
    sel.terms.push_back(std::move(term));
    ar.node_selector = std::move(sel);
  }
  return true;
}

SearchOutcome Search::BuildResults() {
  SearchOutcome out;
  out.kind = Outcome::Kind::kAllocated;
  for (const ClaimData& cd : claims_) {
    AllocationResult ar;
    AddDeviceResults(cd, ar);
    AddClassConfigs(cd, ar);
    AddClaimConfigs(cd, ar);
    if (!SetNodeSelector(cd, ar, &out.message)) {
      out.kind = Outcome::Kind::kError;
      out.results.clear();
      return out;
    }
    out.results.push_back(std::move(ar));
  }
  return out;
}

}  // namespace draco::alloc
