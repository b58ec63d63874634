// LeaderElector: Lease-based leader election (coordination.k8s.io/v1), as client-go's
// tools/leaderelection with the LeaseLock.
//
// Overview. Replicas compete for one Lease object. The holder renews spec.renewTime every
// retry_period; the others poll every retry_period (+ up to 20% jitter) and take over once they
// have seen the lease record unchanged for lease_duration, measured on their own Clock (the remote
// renewTime is never compared with the local clock, so clock skew does not matter). Candidates
// also watch the Lease, so a released Lease is taken over at once instead of at the next poll.
// Defaults are the Kubernetes component defaults: 15 s / 10 s / 2 s. Validation: lease_duration >
// renew_deadline > 1.2 * retry_period.
//
// The renew deadline. A term is valid until ValidUntil(): renew_deadline after the start of the
// last successful acquire/renew attempt (the start, not the end: the server recorded the renewal
// no earlier, so the peers' lease_duration countdown began no earlier either). Attempts run on a
// helper thread and the elector waits for them only until the deadline: an attempt still running
// then is abandoned and leadership ends at the deadline, even if the attempt succeeds later (a
// late success only updates the observed record; Run() returns and the caller campaigns again).
// Writers fence themselves with ValidUntil() (see fenced_client.h), so a leader never writes
// after renew_deadline, leaving lease_duration - renew_deadline for in-flight requests to settle
// before any peer can acquire.
//
// Writes. GET the lease; CREATE when absent; otherwise PUT with the observed resourceVersion, so
// two candidates racing for an expired lease cannot both win (the loser gets 409 and retries next
// round). On Stop(), a leader with release_on_cancel clears holderIdentity so a peer takes over at
// once instead of waiting for expiry.
//
// Threading. Run() blocks the calling thread for one campaign and the term that follows and
// invokes the callbacks on it; callbacks must not block (start work on another thread). Run() may
// be called again after it returned without Stop() (to campaign again after a lost term). Stop(),
// IsLeader(), ValidUntil(), Leader() are thread-safe. The RestClient and Clock must outlive the
// elector; give it a client of its own that nobody cancels (the release on Stop() uses it) and
// whose per-request timeout is below renew_deadline.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "base/clock.h"
#include "base/status.h"
#include "k8sclient/rest_client.h"

namespace draco::k8s {

struct LeaderElectionConfig {
  std::string lease_namespace;
  std::string lease_name;
  // Unique per replica, e.g. "<hostname>_<random>".
  std::string identity;
  Clock::Duration lease_duration = std::chrono::seconds(15);
  Clock::Duration renew_deadline = std::chrono::seconds(10);
  Clock::Duration retry_period = std::chrono::seconds(2);
  bool release_on_cancel = true;
  // Watch the Lease while campaigning to notice a release at once (falls back to polling when the
  // watch cannot be opened).
  bool watch_lease = true;
  // Called once when this replica becomes leader.
  std::function<void()> on_started_leading;
  // Called once when leadership ends (lost or Stop()), only if it was acquired.
  std::function<void()> on_stopped_leading;
  // Called when the observed holder changes (including to ourselves), from Run()'s helper thread.
  std::function<void(const std::string& holder)> on_new_leader;
  // Called after Stop() made a leader (with release_on_cancel) try to release the Lease, with the
  // outcome (OK: the holder is cleared, peers may take over at once), on Run()'s thread after
  // on_stopped_leading. Optional.
  std::function<void(const Status& released)> on_released;
};

// The spec of a Lease as the elector reads and writes it.
struct LeaseRecord {
  std::string holder_identity;
  int64_t lease_duration_seconds = 0;
  std::string acquire_time;  // RFC 3339 with microseconds
  std::string renew_time;
  int64_t lease_transitions = 0;
  friend bool operator==(const LeaseRecord&, const LeaseRecord&) = default;
};

class LeaderElector {
 public:
  static StatusOr<std::unique_ptr<LeaderElector>> New(RestClient& client, Clock& clock,
                                                      LeaderElectionConfig config);

  ~LeaderElector();
  LeaderElector(const LeaderElector&) = delete;
  LeaderElector& operator=(const LeaderElector&) = delete;
  // Campaigns until leadership is acquired, then renews until it is lost or Stop() is called.
  // Returns after on_stopped_leading (if leadership was acquired).
  void Run();
  // Makes Run() return promptly (releasing the lease when leading and release_on_cancel).
  // Irreversible.
  void Stop();

  bool IsLeader() const { return leading_.load(); }
  // While leading: the end of the current term's authority (renew_deadline after the start of the
  // last successful renewal). TimePoint::min() while not leading.
  Clock::TimePoint ValidUntil() const;
  // The last observed holder ("" if none).
  std::string Leader() const;
  // While leading: the start of the last successful acquire or renewal (ValidUntil() minus
  // renew_deadline). TimePoint::min() while not leading.
  Clock::TimePoint LastRenewal() const;
  // The start of the last acquire-or-renew attempt, whatever its outcome (the elector's creation
  // before the first): a campaigning or leading elector starts one at least every retry_period
  // (+20% jitter) plus the length of the previous attempt (at most renew_deadline). Liveness
  // checks compare these two with the clock (client-go's HealthzAdaptor checks the first).
  Clock::TimePoint LastAttempt() const;

  // One acquire-or-renew round (exposed for tests). True when we hold the lease afterwards.
  bool TryAcquireOrRenew();

 private:
  LeaderElector(RestClient& client, Clock& clock, LeaderElectionConfig config)
      : client_(client),
        clock_(clock),
        config_(std::move(config)),
        last_attempt_(clock.Now().time_since_epoch().count()) {}
  struct AttemptState;
  enum class Outcome { kSucceeded, kFailed, kTimedOut, kStopped };
  // Runs TryAcquireOrRenew on attempt_thread_ and waits until it ends, `deadline` passes or Stop().
  Outcome Attempt(Clock::TimePoint deadline);
  void JoinAttempt();
  // Campaigns; true once leading, false when stopped.
  bool Campaign();
  // Renews until the deadline passes (false) or Stop() (true).
  bool Renew(Clock::TimePoint valid_until);
  // Sleeps up to `d` on the clock; returns false when stopped. With `wake_on_release`, also
  // returns early when the lease watch saw the lease released.
  bool Sleep(Clock::Duration d, bool wake_on_release = false);
  void WatchLoop();
  void StopWatch();
  Clock::Duration Jittered(Clock::Duration d);
  // Clears holderIdentity if we still hold the Lease; reports to on_released.
  void Release();
  void ObserveHolder(const std::string& holder);

  RestClient& client_;
  Clock& clock_;
  const LeaderElectionConfig config_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopped_ = false;
  bool released_seen_ = false;  // the lease watch saw an empty holder since the last attempt
  std::atomic<bool> leading_{false};
  std::atomic<Clock::Duration::rep> valid_until_{
      Clock::TimePoint::min().time_since_epoch().count()};
  std::atomic<Clock::Duration::rep> last_attempt_{0};
  std::thread attempt_thread_;
  std::shared_ptr<AttemptState> attempt_;
  std::thread watch_thread_;
  std::unique_ptr<Watcher> watcher_;  // guarded by mu_
  bool watch_stop_ = false;
  // Last observed lease and when it last changed (local clock).
  std::optional<LeaseRecord> observed_;
  std::string observed_resource_version_;
  Clock::TimePoint observed_time_{};
  std::string holder_;
  uint64_t rand_state_ = 0x9E3779B97F4A7C15ull;
};

// Parses a Lease JSON object's spec and metadata.resourceVersion.
StatusOr<std::pair<LeaseRecord, std::string>> ParseLease(std::string_view json);
// RFC 3339 with microseconds in UTC ("2026-01-02T03:04:05.000006Z"), the MicroTime format.
std::string FormatMicroTime(std::chrono::system_clock::time_point t);

}  // namespace draco::k8s
