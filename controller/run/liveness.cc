#include "controller/run/liveness.h"

#include <string>

namespace draco::run {
namespace {

// "75s" (whole seconds, rounded down).
std::string Secs(Clock::Duration d) {
  return std::to_string(std::chrono::duration_cast<std::chrono::seconds>(d).count()) + "s";
}

}  // namespace

Liveness::Liveness(Clock& clock, LivenessOptions options)
    : clock_(clock), options_(options), started_(clock.Now()) {}

void Liveness::SetQueue(const k8s::workqueue::Queue* queue) {
  std::lock_guard<std::mutex> l(mu_);
  queue_ = queue;
}

void Liveness::SetElector(const k8s::LeaderElector* elector, Clock::Duration lease_duration,
                          Clock::Duration renew_deadline) {
  std::lock_guard<std::mutex> l(mu_);
  elector_ = elector;
  lease_duration_ = lease_duration;
  renew_deadline_ = renew_deadline;
}

std::vector<server::Check> Liveness::Checks(const reconcilers::Informers& informers) {
  return {{"informers", [this, &informers] { return CheckInformers(informers.Health()); }},
          {"workers", [this] { return CheckWorkers(); }},
          {"leader-election", [this] { return CheckLeaderElection(); }}};
}

Status Liveness::CheckInformers(
    const std::vector<reconcilers::Informers::InformerHealth>& health) const {
  const Clock::TimePoint now = clock_.Now();
  std::string problems;
  auto add = [&problems](const std::string& p) { problems += (problems.empty() ? "" : "; ") + p; };
  for (const auto& h : health) {
    if (!h.synced) {
      // Unsynced informers are listing for the first time: only the startup grace applies.
      if (now - started_ > options_.initial_sync_timeout) {
        add(h.name + " not synced " + Secs(now - started_) + " after start-up (timeout " +
            Secs(options_.initial_sync_timeout) + ")");
      }
    } else if (h.watch_down_since && now - *h.watch_down_since > options_.watch_down_timeout) {
      add(h.name + " watch down for " + Secs(now - *h.watch_down_since) + " (timeout " +
          Secs(options_.watch_down_timeout) + ")");
    }
  }
  if (problems.empty()) return OkStatus();
  return UnavailableError(problems);
}

Status Liveness::CheckWorkers() const {
  std::lock_guard<std::mutex> l(mu_);
  if (queue_ == nullptr) return OkStatus();  // no term: no workers
  auto oldest = queue_->OldestInFlight();
  if (!oldest) return OkStatus();  // idle
  const Clock::Duration busy = clock_.Now() - oldest->started;
  if (busy <= options_.stuck_worker_timeout) return OkStatus();
  return UnavailableError("a worker has been busy with " + oldest->item + " for " + Secs(busy) +
                          " (timeout " + Secs(options_.stuck_worker_timeout) + ")");
}

Status Liveness::CheckLeaderElection() const {
  std::lock_guard<std::mutex> l(mu_);
  if (elector_ == nullptr) return OkStatus();
  const Clock::TimePoint now = clock_.Now();
  if (elector_->IsLeader()) {
    const Clock::TimePoint renewed = elector_->LastRenewal();
    if (renewed == Clock::TimePoint::min() || now - renewed <= lease_duration_) return OkStatus();
    return UnavailableError("leading without a successful Lease renewal for " +
                            Secs(now - renewed) + " (lease duration " + Secs(lease_duration_) +
                            ")");
  }
  const Clock::Duration since = now - elector_->LastAttempt();
  if (since <= lease_duration_ + renew_deadline_) return OkStatus();
  return UnavailableError("no attempt to acquire the Lease for " + Secs(since) + " (limit " +
                          Secs(lease_duration_ + renew_deadline_) + ")");
}

}  // namespace draco::run
