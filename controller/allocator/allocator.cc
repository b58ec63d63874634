// Allocator entry points: claim defaults, allocation on a node or any node, selectors, share IDs.
#include "controller/allocator/allocator.h"

#include <algorithm>
#include <array>
#include <cinttypes>
#include <cstdio>
#include <limits>
#include <set>
#include <unordered_set>

#include "controller/allocator/allocator_impl.h"
#include "controller/allocator/explain.h"
#include "controller/allocator/from_api.h"
#include "controller/allocator/node_selector.h"
#include "controller/allocator/search.h"

namespace draco::alloc {

std::string_view OutcomeKindName(Outcome::Kind kind) {
  switch (kind) {
    case Outcome::Kind::kAllocated:
      return "allocated";
    case Outcome::Kind::kUnsatisfiable:
      return "unsatisfiable";
    case Outcome::Kind::kError:
      return "error";
    case Outcome::Kind::kTimeout:
      return "timeout";
  }
  return "?";
}

void DefaultClaim(ResourceClaim& claim) {
  auto def_tol = [](std::vector<DeviceToleration>& ts) {
    for (auto& t : ts) {
      if (t.op.empty()) t.op = "Equal";
    }
  };
  auto def_spec = [&](RequestSpec& s) {
    if (s.allocation_mode.empty()) s.allocation_mode = "ExactCount";
    if (s.allocation_mode == "ExactCount" && s.count == 0) s.count = 1;
    def_tol(s.tolerations);
  };
  for (auto& r : claim.requests) {
    if (r.exactly) def_spec(*r.exactly);
    for (auto& s : r.first_available) def_spec(s);
  }
  if (claim.allocation) {
    for (auto& r : claim.allocation->results) def_tol(r.tolerations);
  }
}

Allocator::Allocator(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Allocator::~Allocator() = default;

int64_t Allocator::num_devices() const { return impl_->num_devices_; }

double Allocator::IndexBytesPerDevice() const {
  const Impl& m = *impl_;
  if (m.num_devices_ == 0) return 0;
  const Snapshot::Data& d = m.d_;
  size_t bytes = m.ident_.capacity() * sizeof(uint32_t) +
                 d.pools.capacity() * (sizeof(Snapshot::Data::Pool) + sizeof(PoolIndex)) +
                 (d.slice_pool.capacity() + d.slice_gid_base.capacity() +
                  d.pool_slice_list.capacity() + d.ordered_gid_base.capacity()) *
                     sizeof(int);
  for (const auto& p : d.pools) {
    // Only indexes already built (another allocator may be building one right now).
    if (!p.index->touched.load(std::memory_order_acquire)) continue;
    bytes += p.index->canon.capacity() * sizeof(int);
    if (p.index->by_name) bytes += p.index->by_name->size() * (sizeof(std::string_view) + 32);
  }
  for (const auto& v : m.class_sel_) bytes += v.capacity();
  bytes += m.prepared_.capacity() * sizeof(void*);
  for (const auto& chunk : m.prepared_) {
    if (chunk) bytes += sizeof(std::array<const PreparedDevice*, 64>);
  }
  for (const auto& [name, np] : m.node_cache_) {
    bytes += np->cands.capacity() * sizeof(Candidate);
    for (const auto& c : np->cands) {
      bytes += c.consumption.capacity() * sizeof(std::pair<int, Amount>);
    }
    bytes += np->pools.capacity() * sizeof(PoolView);
  }
  return static_cast<double>(bytes) / static_cast<double>(m.num_devices_);
}

const Allocator::Impl::Compiled& Allocator::Impl::Compile(const std::string& expr) {
  auto it = compiled_.find(expr);
  if (it != compiled_.end()) return it->second;
  Compiled c;
  if (!config_.selectors) {
    c.error = FailedPreconditionError("no CEL selector compiler configured");
  } else {
    auto r = config_.selectors->Compile(expr);
    if (r.ok()) {
      c.sel = std::move(r).value();
    } else {
      c.error = r.status();
    }
  }
  return compiled_.emplace(expr, std::move(c)).first->second;
}

int Allocator::Impl::SliceOfGid(int gid) const { return d_.SliceOfGid(gid); }

Allocator::Impl::SliceShared& Allocator::Impl::Shared(int slice) {
  if (slice_shared_.empty()) slice_shared_.resize(slices_.size());
  SliceShared& sh = slice_shared_[static_cast<size_t>(slice)];
  if (!sh.entry && d_.prepared && config_.selectors) {
    sh.entry = d_.prepared->For(slices_.ptrs_[static_cast<size_t>(slice)]);
    sh.class_results = sh.entry->ClassResults(d_.classes, classes_.size(),
                                              slices_[static_cast<size_t>(slice)].devices.size(),
                                              config_.selectors);
  }
  return sh;
}

const PreparedDevice* Allocator::Impl::Prepared(int gid) {
  if (!config_.selectors) return nullptr;
  if (prepared_.empty()) prepared_.resize(static_cast<size_t>(num_devices_ + 63) / 64);
  auto& chunk = prepared_[static_cast<size_t>(gid) / 64];
  if (!chunk) {
    chunk = std::make_unique<std::array<const PreparedDevice*, 64>>();
    chunk->fill(nullptr);
  }
  const PreparedDevice*& p = (*chunk)[static_cast<size_t>(gid) % 64];
  if (p) return p;
  const int slice = SliceOfGid(gid);
  const ResourceSlice& s = slices_[static_cast<size_t>(slice)];
  const auto dev = static_cast<size_t>(gid - slice_gid_base_[static_cast<size_t>(slice)]);
  SliceShared& sh = Shared(slice);
  if (sh.entry) p = sh.entry->Get(s, dev, config_.selectors);
  if (p) return p;
  // The snapshot's entry belongs to another compiler: this allocator's own view.
  prepared_own_.push_back(config_.selectors->Prepare(ViewOf(s, dev)));
  p = prepared_own_.back().get();
  return p;
}

uint8_t Allocator::Impl::ClassSelect(int class_idx, int gid, std::string* err) {
  std::vector<uint8_t>& sel = class_sel_[static_cast<size_t>(class_idx)];
  if (sel.empty()) sel.assign(static_cast<size_t>(num_devices_), 0);
  uint8_t& slot = sel[static_cast<size_t>(gid)];
  if (slot != 0) {
    if (slot == 3 && err) *err = class_sel_err_[class_idx][gid];
    return slot;
  }
  int slice = SliceOfGid(gid);
  const ResourceSlice& s = slices_[slice];
  const auto dev = static_cast<size_t>(gid - slice_gid_base_[slice]);
  // Another allocator over this snapshot (or one sharing the slice) may have evaluated it.
  std::atomic<uint8_t>* shared = Shared(slice).class_results;
  std::atomic<uint8_t>* shared_slot =
      shared ? &shared[static_cast<size_t>(class_idx) * s.devices.size() + dev] : nullptr;
  if (shared_slot) {
    uint8_t known = shared_slot->load(std::memory_order_relaxed);
    if (known != 0) return slot = known;
  }
  const Device& d = s.devices[dev];
  const DeviceClass& cls = classes_[class_idx];
  uint8_t result = 2;
  std::string message;
  for (size_t i = 0; i < cls.selectors.size(); ++i) {
    const Compiled& c = Compile(cls.selectors[i]);
    if (!c.error.ok()) {
      result = 3;
      message = "class " + cls.name + ": selector #" + std::to_string(i) +
                ": CEL compile error: " + c.error.message();
      break;
    }
    auto m = c.sel->Matches(*Prepared(gid));
    if (!m.ok()) {
      result = 3;
      message = "class " + cls.name + ": selector #" + std::to_string(i) + " on device " +
                s.driver + "/" + s.pool + "/" + d.name +
                ": CEL runtime error: " + AddCelKeyHint(m.status().message());
      break;
    }
    if (!*m) {
      result = 1;
      break;
    }
  }
  slot = result;
  if (result == 3) {
    class_sel_err_[class_idx][gid] = message;
    if (err) *err = message;
  } else if (shared_slot) {
    shared_slot->store(result, std::memory_order_relaxed);
  }
  return result;
}

std::string Allocator::Impl::NewShareId() {
  std::array<char, 64> buf{};
  if (config_.deterministic_share_ids) {
    std::snprintf(buf.data(), buf.size(), "00000000-0000-4000-8000-%012" PRId64, ++share_counter_);
    return buf.data();
  }
  if (!rng_) rng_.emplace(std::random_device{}());
  uint64_t a = (*rng_)(), b = (*rng_)();
  a = (a & 0xffffffffffff0fffull) | 0x0000000000004000ull;  // version 4
  b = (b & 0x3fffffffffffffffull) | 0x8000000000000000ull;  // variant
  std::snprintf(buf.data(), buf.size(), "%08x-%04x-%04x-%04x-%012" PRIx64,
                static_cast<unsigned>(a >> 32), static_cast<unsigned>((a >> 16) & 0xffff),
                static_cast<unsigned>(a & 0xffff), static_cast<unsigned>(b >> 48),
                static_cast<uint64_t>(b & 0xffffffffffffull));
  return buf.data();
}

Status Allocator::Impl::PreFilter(const std::vector<const ResourceClaim*>& claims,
                                  std::string* reason) const {
  auto check = [&](const std::string& cls, const std::string& req) -> Status {
    if (cls.empty()) return InvalidArgumentError("request " + req + ": unsupported request type");
    if (!class_by_name_.count(cls)) {
      *reason = "request " + req + ": device class " + cls + " does not exist";
    }
    return OkStatus();
  };
  for (const ResourceClaim* c : claims) {
    for (const auto& r : c->requests) {
      if (r.exactly) {
        if (Status s = check(r.exactly->device_class_name, r.name); !s.ok()) return s;
        if (!reason->empty()) return OkStatus();
      } else if (!r.first_available.empty()) {
        if (!config_.features.prioritized_list) {
          *reason = "resource claim " + c->namespace_name + "/" + c->name + ", request " + r.name +
                    ": has subrequests, but the DRAPrioritizedList feature is disabled";
          return OkStatus();
        }
        for (const auto& s : r.first_available) {
          if (Status st = check(s.device_class_name, r.name + "/" + s.name); !st.ok()) return st;
          if (!reason->empty()) return OkStatus();
        }
      } else {
        *reason = "resource claim " + c->namespace_name + "/" + c->name + ", request " + r.name +
                  ": unknown request type";
        return OkStatus();
      }
    }
  }
  return OkStatus();
}

SearchOutcome Allocator::Impl::Run(const Node& node,
                                   const std::vector<const ResourceClaim*>& claims,
                                   Explanation* explain) {
  if (config_.scheduler_prefilter) {
    std::string reason;
    Status s = PreFilter(claims, &reason);
    if (!s.ok()) return SearchOutcome{Outcome::Kind::kError, {}, s.message(), "", 0};
    if (!reason.empty()) return SearchOutcome{Outcome::Kind::kUnsatisfiable, {}, reason, "", 0};
  }
  Search search(*this, node, claims, explain);
  return search.Run();
}

Outcome ToOutcome(SearchOutcome o) {
  Outcome out;
  out.kind = o.kind;
  out.results.reserve(o.results.size());
  for (const auto& r : o.results) out.results.push_back(ToApiAllocationResult(r));
  out.message = std::move(o.message);
  out.node = std::move(o.node);
  out.search_steps = o.search_steps;
  return out;
}

SearchOutcome ComputeAllocate(Allocator& a, const Node& node,
                              const std::vector<const ResourceClaim*>& claims) {
  return a.impl().Run(node, claims, nullptr);
}

SearchOutcome ComputeAllocateOnAnyNode(Allocator& a, std::span<const Node> candidates,
                                       const std::vector<const ResourceClaim*>& claims,
                                       size_t start) {
  return a.impl().RunOnAnyNode(
      candidates.size(), [&](size_t k) -> const Node& { return candidates[k]; }, claims, start);
}

SearchOutcome Allocator::Impl::RunOnAnyNode(size_t n,
                                            const std::function<const Node&(size_t)>& node_at,
                                            const std::vector<const ResourceClaim*>& claims,
                                            size_t start) {
  SearchOutcome last;
  last.message = "no candidate node";
  std::vector<size_t> order(n);
  for (size_t k = 0; k < n; ++k) order[k] = (start + k) % n;
  // AllocationPolicy strategies reorder nodes by allocated devices (stable: ties keep the
  // rotation order). FirstFit keeps upstream's order.
  Strategy strategy = ClaimsStrategy(claims);
  if (strategy != Strategy::kFirstFit) {
    std::vector<int64_t> used(n);
    for (size_t k = 0; k < n; ++k) used[k] = NodeAllocatedCount(node_at(k).name);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return strategy == Strategy::kBinPack ? used[a] > used[b] : used[a] < used[b];
    });
  }
  for (size_t k = 0; k < n; ++k) {
    const Node& node = node_at(order[k]);
    SearchOutcome o = Run(node, claims, nullptr);
    if (o.kind == Outcome::Kind::kAllocated) {
      o.node = node.name;
      return o;
    }
    if (o.kind == Outcome::Kind::kError || o.kind == Outcome::Kind::kTimeout) return o;
    last = std::move(o);
  }
  last.kind = Outcome::Kind::kUnsatisfiable;
  return last;
}

Explanation ComputeExplain(Allocator& a, const Node& node,
                           const std::vector<const ResourceClaim*>& claims) {
  Explanation e;
  e.node = node.name;
  e.outcome = ToOutcome(a.impl().Run(node, claims, &e));
  return e;
}

// ---- api-typed entry points: convert, run, convert the results back ----

namespace {

struct Converted {
  std::vector<ResourceClaim> claims;
  std::vector<const ResourceClaim*> ptrs;
};

Converted Convert(const std::vector<const api::ResourceClaim*>& claims, bool defaulted) {
  Converted c;
  c.claims.reserve(claims.size());
  for (const api::ResourceClaim* p : claims) {
    c.claims.push_back(defaulted ? ToAllocClaim(*p) : ToAllocClaimAsGiven(*p));
  }
  for (const auto& k : c.claims) c.ptrs.push_back(&k);
  return c;
}

}  // namespace

// Keeps the compute claims and results of a successful call for Commit(claim, result).
Outcome Allocator::Impl::Remember(const std::vector<const api::ResourceClaim*>& api_claims,
                                  std::vector<ResourceClaim> claims, SearchOutcome o) {
  last_ = LastCall{};
  if (o.kind == Outcome::Kind::kAllocated && o.results.size() == claims.size()) {
    for (size_t i = 0; i < claims.size(); ++i) claims[i].allocation = o.results[i];
    last_.api_claims = api_claims;
    last_.claims = std::move(claims);
  }
  return ToOutcome(std::move(o));
}

Outcome Allocator::Allocate(const api::Node& node,
                            const std::vector<const api::ResourceClaim*>& claims) {
  Converted c = Convert(claims, impl_->config_.default_claims);
  SearchOutcome o = impl_->Run(ToAllocNode(node), c.ptrs, nullptr);
  return impl_->Remember(claims, std::move(c.claims), std::move(o));
}

Outcome Allocator::AllocateOnAnyNode(const std::vector<const api::Node*>& candidates,
                                     const std::vector<const api::ResourceClaim*>& claims,
                                     size_t start) {
  Converted c = Convert(claims, impl_->config_.default_claims);
  // Nodes are converted when first looked at (most calls stop at the first few).
  std::vector<std::optional<Node>> nodes(candidates.size());
  auto node_at = [&](size_t k) -> const Node& {
    if (!nodes[k]) nodes[k] = ToAllocNode(*candidates[k]);
    return *nodes[k];
  };
  SearchOutcome o = impl_->RunOnAnyNode(candidates.size(), node_at, c.ptrs, start);
  return impl_->Remember(claims, std::move(c.claims), std::move(o));
}

Explanation Allocator::Explain(const api::Node& node,
                               const std::vector<const api::ResourceClaim*>& claims) {
  Converted c = Convert(claims, impl_->config_.default_claims);
  return ComputeExplain(*this, ToAllocNode(node), c.ptrs);
}

}  // namespace draco::alloc
