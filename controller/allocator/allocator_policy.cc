// AllocationPolicy: governing policy per class, node-ordering strategy, request classes.
#include "controller/allocator/allocator.h"
#include "controller/allocator/allocator_impl.h"

namespace draco::alloc {

std::string Allocator::Impl::ClassOfRequest(const ResourceClaim& claim, std::string_view request) {
  size_t slash = request.find('/');
  std::string_view parent = request.substr(0, slash);
  for (const auto& r : claim.requests) {
    if (r.name != parent) continue;
    if (slash == std::string_view::npos) return r.exactly ? r.exactly->device_class_name : "";
    std::string_view sub = request.substr(slash + 1);
    for (const auto& s : r.first_available) {
      if (s.name == sub) return s.device_class_name;
    }
  }
  return "";
}

std::vector<std::pair<std::string, Amount>> Allocator::Impl::LimitCapacities(
    const Device& d, bool shared, const std::vector<std::pair<std::string, Qty>>& consumed) {
  std::vector<std::pair<std::string, Amount>> out;
  if (shared) {
    for (const auto& [name, q] : consumed) out.emplace_back(name, q.nanos);
  } else {
    for (const auto& [name, c] : d.capacity) out.emplace_back(name, c.value.nanos);
  }
  return out;
}

Amount Allocator::Impl::CapacityNamed(const std::vector<std::pair<std::string, Amount>>& caps,
                                      std::string_view name) {
  Amount v = 0;
  for (const auto& [n, a] : caps) {
    if (n == name) v = a;
  }
  return v;
}

void Allocator::Impl::InitPolicies() {
  class_policy_.clear();
  if (config_.policies.empty()) return;
  class_policy_.assign(classes_.size(), -1);
  for (size_t ci = 0; ci < classes_.size(); ++ci) {
    int best = -1;
    for (size_t pi = 0; pi < config_.policies.size(); ++pi) {
      const AllocationPolicy& p = config_.policies[pi];
      if (!p.Selects(classes_[ci])) continue;
      if (best < 0) {
        best = static_cast<int>(pi);
        continue;
      }
      const AllocationPolicy& b = config_.policies[static_cast<size_t>(best)];
      if (p.priority > b.priority || (p.priority == b.priority && p.name < b.name)) {
        best = static_cast<int>(pi);
      }
    }
    class_policy_[ci] = best;
  }
}

Strategy Allocator::Impl::ClaimsStrategy(const std::vector<const ResourceClaim*>& claims) const {
  if (class_policy_.empty()) return Strategy::kFirstFit;
  auto of = [&](const std::string& cls) {
    auto it = class_by_name_.find(cls);
    int pol = it == class_by_name_.end() ? -1 : PolicyOf(it->second);
    return pol < 0 ? Strategy::kFirstFit : config_.policies[static_cast<size_t>(pol)].strategy;
  };
  for (const ResourceClaim* c : claims) {
    for (const auto& r : c->requests) {
      if (r.exactly) {
        if (Strategy s = of(r.exactly->device_class_name); s != Strategy::kFirstFit) return s;
      }
      for (const auto& sub : r.first_available) {
        if (Strategy s = of(sub.device_class_name); s != Strategy::kFirstFit) return s;
      }
    }
  }
  return Strategy::kFirstFit;
}

}  // namespace draco::alloc
