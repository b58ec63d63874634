#include "controller/reconcilers/snapshot_allocator.h"

#include <chrono>
#include <limits>

#include <spdlog/spdlog.h>

#include "controller/allocator/explain.h"

namespace draco::reconcilers {
namespace {

constexpr size_t kMaxMessage = 900;  // Event messages are kept short (events.k8s.io: 1 KiB)

std::string Truncate(std::string s) {
  if (s.size() > kMaxMessage) s = s.substr(0, kMaxMessage - 3) + "...";
  return s;
}

}  // namespace

SnapshotAllocator::SnapshotAllocator(ClusterCache& cache, alloc::Allocator::Config config,
                                     metrics::ControllerMetrics* metrics)
    : cache_(cache), config_(std::move(config)), metrics_(metrics) {}

void SnapshotAllocator::EnsureInputs(const CacheGenerations& gen) {
  if (snapshot_ && gen.inputs == snapshot_inputs_) return;
  // Slices unchanged since the last build keep their converted form.
  snapshot_ = alloc::Snapshot::Build(config_.features, cache_.DeviceClasses(), cache_.Slices(),
                                     cache_.TaintRules(), snapshot_.get());
  config_.policies = cache_.Policies();
  snapshot_inputs_ = gen.inputs;
}

SnapshotAllocator::AllocatedView SnapshotAllocator::Allocated() const {
  AllocatedView v;
  for (auto& c : cache_.Claims()) {
    if (!c->status.allocation) continue;
    v.uids.insert(c->metadata.uid);
    v.cached.push_back(std::move(c));
  }
  // In-flight allocations the cache does not show yet: the claims with their results.
  v.in_flight.reserve(in_flight_.size());
  for (const auto& [uid, f] : in_flight_) {
    if (!v.uids.insert(uid).second) continue;
    v.in_flight.push_back(*f.claim);
    v.in_flight.back().status.allocation = f.result;
  }
  for (const auto& c : v.cached) v.ptrs.push_back(c.get());
  for (const auto& c : v.in_flight) v.ptrs.push_back(&c);
  return v;
}

void SnapshotAllocator::RefreshHolds() {
  constexpr auto kMaxAge = std::chrono::seconds(2);  // node readiness, taints, pods' node fit
  std::string key;
  std::vector<WaitingPod> waiting;
  if (cache_.HasSchedulerPods()) {
    waiting = WaitingForScheduler(cache_, cache_.SchedulerPods(), &key);
  }
  if (waiting.empty() && holds_key_.empty()) return;  // no holds before, none now: the common case
  const auto now = std::chrono::steady_clock::now();
  const CacheGenerations gen = cache_.Generations();
  if (!waiting.empty()) {
    key += "|" + std::to_string(gen.inputs) + "|" + std::to_string(gen.deallocations);
    if (key == holds_key_ && now - holds_time_ < kMaxAge) return;
  }
  SchedulerHolds next;
  if (!waiting.empty()) {
    EnsureInputs(gen);
    AllocatedView v = Allocated();
    next = ComputeSchedulerHolds(cache_, config_, snapshot_, v.ptrs, waiting);
  }
  if (next.fingerprint != holds_.fingerprint) {
    dirty_ = true;  // the held devices are part of every rebuild
    if (!next.pods.empty() || !holds_.pods.empty()) {
      spdlog::info("scheduler holds: {}", next.devices ? DescribeHolds(next) : "none");
    }
  }
  holds_ = std::move(next);
  holds_key_ = std::move(key);
  holds_time_ = now;
  held_devices_.store(holds_.devices);
  if (metrics_) metrics_->SetSchedulerHeldDevices(static_cast<double>(holds_.devices));
}

Status SnapshotAllocator::EnsureSnapshot(bool include_deallocations) {
  CacheGenerations gen = cache_.Generations();
  uint64_t end = 0;
  if (!alloc_ || dirty_ || gen.inputs != built_.inputs ||
      (include_deallocations && gen.deallocations != built_.deallocations)) {
    auto start = std::chrono::steady_clock::now();
    (void)cache_.AllocationsSince(std::numeric_limits<uint64_t>::max(), &end);
    AllocatedView v = Allocated();
    for (const auto& h : holds_.claims) {
      if (v.uids.insert(h.metadata.uid).second) v.ptrs.push_back(&h);
    }
    EnsureInputs(gen);
    auto a = alloc::Allocator::Create(config_, snapshot_, v.ptrs);
    if (!a.ok()) return a.status();
    alloc_ = std::move(*a);
    committed_ = std::move(v.uids);
    built_ = gen;
    log_pos_ = end;
    dirty_ = false;
    ++rebuilds_;
    cache_.TrimAllocationLog(end);
    spdlog::debug(
        "allocator snapshot rebuilt: {} allocated claims, {:.1f} ms", committed_.size(),
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count());
    return OkStatus();
  }
  for (const auto& c : cache_.AllocationsSince(log_pos_, &end)) {
    if (!c->status.allocation || committed_.count(c->metadata.uid)) continue;
    // With the whole claim so that AllocationPolicy namespace limits count it too.
    alloc_->Commit(*c);
    committed_.insert(c->metadata.uid);
  }
  log_pos_ = end;
  cache_.TrimAllocationLog(end);
  return OkStatus();
}

void SnapshotAllocator::Settle(const std::vector<ClaimPtr>& claims, bool written) {
  for (const auto& c : claims) {
    if (c) in_flight_.erase(c->metadata.uid);
  }
  // A failed write: rebuild from the cache (plus what is still in flight elsewhere) so that the
  // devices this attempt held are free again.
  if (!written) dirty_ = true;
}

AllocateResponse SnapshotAllocator::Allocate(const AllocateRequest& req) {
  // A snapshot that has not seen recent deallocations over-reports used devices: it can never
  // hand out a device twice, only miss a free one. So deallocations alone do not force a rebuild;
  // only a failed attempt on such a snapshot does (then it is retried once on a fresh one).
  AllocateResponse resp = AllocateOnce(req, /*include_deallocations=*/false);
  if (resp.kind == AllocateResponse::Kind::kUnschedulable &&
      cache_.Generations().deallocations != built_.deallocations) {
    resp = AllocateOnce(req, /*include_deallocations=*/true);
  }
  return resp;
}

AllocateResponse SnapshotAllocator::AllocateOnce(const AllocateRequest& req,
                                                 bool include_deallocations) {
  AllocateResponse resp;
  RefreshHolds();
  Status st = EnsureSnapshot(include_deallocations);
  if (!st.ok()) {
    resp.kind = AllocateResponse::Kind::kError;
    resp.message = Truncate(st.message());
    return resp;
  }
  std::vector<const api::ResourceClaim*> claims;
  claims.reserve(req.claims.size());
  for (const auto& c : req.claims) claims.push_back(c.get());
  std::vector<const api::Node*> nodes;
  nodes.reserve(req.candidates.size());
  for (const auto& n : req.candidates) nodes.push_back(n.get());
  if (nodes.empty()) {
    resp.message = "no candidate nodes";
    return resp;
  }
  size_t start = next_start_++ % nodes.size();
  if (!req.prefer_node.empty()) {
    for (size_t k = 0; k < nodes.size(); ++k) {
      if (nodes[k]->metadata.name == req.prefer_node) start = k;
    }
  }
  alloc::Outcome out = alloc_->AllocateOnAnyNode(nodes, claims, start);
  switch (out.kind) {
    case alloc::Outcome::Kind::kAllocated: {
      for (size_t i = 0; i < out.results.size() && i < claims.size(); ++i) {
        alloc_->Commit(*claims[i], out.results[i]);  // in flight; counts against policy limits
        in_flight_[req.claims[i]->metadata.uid] = InFlight{req.claims[i], out.results[i]};
      }
      resp.results = std::move(out.results);
      for (const auto& c : req.claims) committed_.insert(c->metadata.uid);
      resp.kind = AllocateResponse::Kind::kAllocated;
      resp.node = out.node;
      return resp;
    }
    case alloc::Outcome::Kind::kError:
      resp.kind = AllocateResponse::Kind::kError;
      resp.message = Truncate(out.message);
      return resp;
    case alloc::Outcome::Kind::kTimeout:
    case alloc::Outcome::Kind::kUnsatisfiable: {
      resp.kind = AllocateResponse::Kind::kUnschedulable;
      // Explain on the first candidate: the funnel says which filter removed the devices.
      alloc::Explanation e = alloc_->Explain(*nodes[start], claims);
      std::string text = std::to_string(nodes.size()) + " candidate node(s), none fits";
      if (!out.message.empty()) text += " (" + out.message + ")";
      text += "; on " + nodes[start]->metadata.name + ": " + alloc::ExplanationToText(e);
      if (holds_.devices > 0) text = DescribeHolds(holds_) + "; " + text;
      resp.message = Truncate(text);
      return resp;
    }
  }
  return resp;
}

}  // namespace draco::reconcilers
