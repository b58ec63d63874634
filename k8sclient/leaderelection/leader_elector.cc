#include "k8sclient/leaderelection/leader_elector.h"

#include <algorithm>
#include <array>
#include <cinttypes>
#include <cstdint>
#include <ctime>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "k8sclient/api_error.h"

namespace draco::k8s {
namespace {

using rapidjson::Document;
using rapidjson::Value;

std::string Str(const Value& obj, const char* key) {
  if (!obj.IsObject()) return "";
  auto it = obj.FindMember(key);
  return it != obj.MemberEnd() && it->value.IsString() ? it->value.GetString() : "";
}
int64_t Int(const Value& obj, const char* key) {
  if (!obj.IsObject()) return 0;
  auto it = obj.FindMember(key);
  return it != obj.MemberEnd() && it->value.IsInt64() ? it->value.GetInt64() : 0;
}

// Builds the Lease body: `base` (the fetched object, may be null) with spec replaced by `rec`.
std::string LeaseBody(const Document* base, const LeaderElectionConfig& cfg, const LeaseRecord& rec,
                      const std::string& resource_version) {
  Document d;
  if (base != nullptr) {
    d.CopyFrom(*base, d.GetAllocator());
  } else {
    d.SetObject();
  }
  auto& a = d.GetAllocator();
  if (!d.HasMember("apiVersion")) d.AddMember("apiVersion", "coordination.k8s.io/v1", a);
  if (!d.HasMember("kind")) d.AddMember("kind", "Lease", a);
  if (!d.HasMember("metadata")) d.AddMember("metadata", Value(rapidjson::kObjectType), a);
  Value& md = d["metadata"];
  md.RemoveMember("name");
  md.RemoveMember("namespace");
  md.RemoveMember("resourceVersion");
  md.AddMember("name", Value(cfg.lease_name.c_str(), a), a);
  md.AddMember("namespace", Value(cfg.lease_namespace.c_str(), a), a);
  if (!resource_version.empty()) {
    md.AddMember("resourceVersion", Value(resource_version.c_str(), a), a);
  }
  d.RemoveMember("spec");
  Value spec(rapidjson::kObjectType);
  if (!rec.holder_identity.empty()) {
    spec.AddMember("holderIdentity", Value(rec.holder_identity.c_str(), a), a);
  }
  spec.AddMember("leaseDurationSeconds", Value(rec.lease_duration_seconds), a);
  if (!rec.acquire_time.empty()) {
    spec.AddMember("acquireTime", Value(rec.acquire_time.c_str(), a), a);
  }
  if (!rec.renew_time.empty()) spec.AddMember("renewTime", Value(rec.renew_time.c_str(), a), a);
  spec.AddMember("leaseTransitions", Value(rec.lease_transitions), a);
  d.AddMember("spec", spec, a);
  d.RemoveMember("status");
  rapidjson::StringBuffer sb;
  rapidjson::Writer<rapidjson::StringBuffer> w(sb);
  d.Accept(w);
  return sb.GetString();
}

}  // namespace

std::string FormatMicroTime(std::chrono::system_clock::time_point t) {
  auto us = std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
  auto secs = static_cast<std::time_t>(us / 1000000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  std::array<char, 64> buf{};
  std::snprintf(buf.data(), buf.size(), "%04d-%02d-%02dT%02d:%02d:%02d.%06" PRId64 "Z",
                tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<int64_t>(us % 1000000));
  return buf.data();
}

StatusOr<std::pair<LeaseRecord, std::string>> ParseLease(std::string_view json) {
  Document d;
  d.Parse(json.data(), json.size());
  if (d.HasParseError() || !d.IsObject()) return InvalidArgumentError("lease is not a JSON object");
  LeaseRecord r;
  auto spec = d.FindMember("spec");
  if (spec != d.MemberEnd() && spec->value.IsObject()) {
    const Value& s = spec->value;
    r.holder_identity = Str(s, "holderIdentity");
    r.lease_duration_seconds = Int(s, "leaseDurationSeconds");
    r.acquire_time = Str(s, "acquireTime");
    r.renew_time = Str(s, "renewTime");
    r.lease_transitions = Int(s, "leaseTransitions");
  }
  std::string rv;
  auto md = d.FindMember("metadata");
  if (md != d.MemberEnd()) rv = Str(md->value, "resourceVersion");
  return std::make_pair(r, rv);
}

StatusOr<std::unique_ptr<LeaderElector>> LeaderElector::New(RestClient& client, Clock& clock,
                                                            LeaderElectionConfig config) {
  if (config.lease_name.empty() || config.lease_namespace.empty()) {
    return InvalidArgumentError("leader election: lease name and namespace are required");
  }
  if (config.identity.empty()) return InvalidArgumentError("leader election: empty identity");
  if (config.lease_duration <= config.renew_deadline) {
    return InvalidArgumentError("leader election: lease duration must exceed renew deadline");
  }
  if (config.renew_deadline <= config.retry_period * 12 / 10) {
    return InvalidArgumentError("leader election: renew deadline must exceed 1.2 * retry period");
  }
  if (!config.on_started_leading || !config.on_stopped_leading) {
    return InvalidArgumentError("leader election: both leading callbacks are required");
  }
  return std::unique_ptr<LeaderElector>(new LeaderElector(client, clock, std::move(config)));
}

std::string LeaderElector::Leader() const {
  std::lock_guard<std::mutex> l(mu_);
  return holder_;
}

void LeaderElector::ObserveHolder(const std::string& holder) {
  bool changed;
  {
    std::lock_guard<std::mutex> l(mu_);
    changed = holder != holder_;
    holder_ = holder;
  }
  if (changed && config_.on_new_leader) config_.on_new_leader(holder);
}

bool LeaderElector::TryAcquireOrRenew() {
  const auto now = clock_.Now();
  const std::string now_str = FormatMicroTime(clock_.WallNow());
  LeaseRecord desired;
  desired.holder_identity = config_.identity;
  desired.lease_duration_seconds =
      std::chrono::duration_cast<std::chrono::seconds>(config_.lease_duration).count();
  desired.acquire_time = now_str;
  desired.renew_time = now_str;

  auto got = client_.Get(kLeases, config_.lease_namespace, config_.lease_name);
  if (!got.ok()) {
    if (!IsNotFound(got.status())) return false;
    auto created =
        client_.Create(kLeases, config_.lease_namespace, LeaseBody(nullptr, config_, desired, ""));
    if (!created.ok()) return false;
    auto parsed = ParseLease(*created);
    {
      std::lock_guard<std::mutex> l(mu_);
      observed_ = desired;
      observed_resource_version_ = parsed.ok() ? parsed->second : "";
      observed_time_ = now;
    }
    ObserveHolder(config_.identity);
    return true;
  }
  auto parsed = ParseLease(*got);
  if (!parsed.ok()) return false;
  const LeaseRecord& current = parsed->first;
  bool expired;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (!observed_ || !(*observed_ == current)) {
      observed_ = current;
      observed_time_ = now;
    }
    observed_resource_version_ = parsed->second;
    expired = observed_time_ + std::chrono::seconds(current.lease_duration_seconds) < now;
  }
  ObserveHolder(current.holder_identity);
  const bool we_hold = current.holder_identity == config_.identity;
  if (!current.holder_identity.empty() && !we_hold && !expired) return false;
  if (we_hold) {
    desired.acquire_time = current.acquire_time;
    desired.lease_transitions = current.lease_transitions;
  } else {
    desired.lease_transitions = current.lease_transitions + 1;
  }
  Document base;
  base.Parse(got->data(), got->size());
  auto updated = client_.Update(kLeases, config_.lease_namespace, config_.lease_name,
                                LeaseBody(&base, config_, desired, parsed->second));
  if (!updated.ok()) return false;
  auto after = ParseLease(*updated);
  {
    std::lock_guard<std::mutex> l(mu_);
    observed_ = desired;
    observed_resource_version_ = after.ok() ? after->second : "";
    observed_time_ = now;
  }
  ObserveHolder(config_.identity);
  return true;
}

Clock::Duration LeaderElector::Jittered(Clock::Duration d) {
  // xorshift64: deterministic, cheap, good enough for spreading retries.
  rand_state_ ^= rand_state_ << 13;
  rand_state_ ^= rand_state_ >> 7;
  rand_state_ ^= rand_state_ << 17;
  double f = static_cast<double>(rand_state_ % 1000) / 1000.0;
  return d + std::chrono::duration_cast<Clock::Duration>(d * (0.2 * f));
}

bool LeaderElector::Sleep(Clock::Duration d, bool wake_on_release) {
  std::unique_lock<std::mutex> l(mu_);
  clock_.WaitUntil(cv_, l, clock_.Now() + d,
                   [&] { return stopped_ || (wake_on_release && released_seen_); });
  return !stopped_;
}

Clock::TimePoint LeaderElector::ValidUntil() const {
  return Clock::TimePoint(Clock::Duration(valid_until_.load()));
}

Clock::TimePoint LeaderElector::LastRenewal() const {
  const Clock::TimePoint until = ValidUntil();
  if (until == Clock::TimePoint::min()) return until;
  return until - config_.renew_deadline;
}

Clock::TimePoint LeaderElector::LastAttempt() const {
  return Clock::TimePoint(Clock::Duration(last_attempt_.load()));
}

LeaderElector::~LeaderElector() {
  Stop();
  JoinAttempt();
  StopWatch();
}

void LeaderElector::Stop() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stopped_ = true;
  }
  cv_.notify_all();
}

struct LeaderElector::AttemptState {
  bool done = false;
  bool ok = false;
};

void LeaderElector::JoinAttempt() {
  if (attempt_thread_.joinable()) attempt_thread_.join();
}

LeaderElector::Outcome LeaderElector::Attempt(Clock::TimePoint deadline) {
  JoinAttempt();  // an abandoned attempt must end before the next one starts
  last_attempt_ = clock_.Now().time_since_epoch().count();
  auto state = std::make_shared<AttemptState>();
  {
    std::lock_guard<std::mutex> l(mu_);
    released_seen_ = false;
  }
  attempt_thread_ = std::thread([this, state] {
    bool ok = TryAcquireOrRenew();
    {
      std::lock_guard<std::mutex> l(mu_);
      state->done = true;
      state->ok = ok;
    }
    cv_.notify_all();
  });
  std::unique_lock<std::mutex> l(mu_);
  clock_.WaitUntil(cv_, l, deadline, [&] { return state->done || stopped_; });
  // A success is one that ended before the deadline (WaitUntil checks once more after it).
  if (state->done && (!state->ok || clock_.Now() < deadline)) {
    return state->ok ? Outcome::kSucceeded : Outcome::kFailed;
  }
  return stopped_ ? Outcome::kStopped : Outcome::kTimedOut;
}

void LeaderElector::Release() {
  auto report = [this](const Status& st) {
    if (config_.on_released) config_.on_released(st);
  };
  auto got = client_.Get(kLeases, config_.lease_namespace, config_.lease_name);
  if (!got.ok()) return report(got.status());
  auto parsed = ParseLease(*got);
  if (!parsed.ok()) return report(parsed.status());
  if (parsed->first.holder_identity != config_.identity) {
    return report(
        FailedPreconditionError("the Lease is held by '" + parsed->first.holder_identity + "'"));
  }
  LeaseRecord rec = parsed->first;
  rec.holder_identity.clear();
  rec.lease_duration_seconds = 1;
  rec.renew_time = FormatMicroTime(clock_.WallNow());
  Document base;
  base.Parse(got->data(), got->size());
  auto updated = client_.Update(kLeases, config_.lease_namespace, config_.lease_name,
                                LeaseBody(&base, config_, rec, parsed->second));
  report(updated.ok() ? OkStatus() : updated.status());
}

void LeaderElector::WatchLoop() {
  ListOptions opts;
  opts.field_selector = "metadata.name=" + config_.lease_name;
  opts.timeout_seconds = 60;
  while (true) {
    {
      std::lock_guard<std::mutex> l(mu_);
      if (watch_stop_ || stopped_) return;
    }
    auto w = client_.Watch(kLeases, config_.lease_namespace, opts);
    if (!w.ok()) {
      if (w.status().code() == StatusCode::kUnimplemented) return;  // polling only
      std::unique_lock<std::mutex> l(mu_);
      clock_.WaitUntil(cv_, l, clock_.Now() + config_.retry_period,
                       [this] { return watch_stop_ || stopped_; });
      continue;
    }
    {
      std::lock_guard<std::mutex> l(mu_);
      if (watch_stop_ || stopped_) return;
      watcher_ = std::move(*w);
    }
    while (true) {
      auto ev = watcher_->Next();
      if (!ev.ok() || !ev->has_value()) break;
      const WatchEvent& e = **ev;
      bool released = e.type == WatchEvent::Type::kDeleted;
      if ((e.type == WatchEvent::Type::kAdded || e.type == WatchEvent::Type::kModified) &&
          e.object != nullptr) {
        auto rec = ParseLease(e.object->json());
        released = rec.ok() && rec->first.holder_identity.empty();
      }
      if (released) {
        {
          std::lock_guard<std::mutex> l(mu_);
          released_seen_ = true;
        }
        cv_.notify_all();
      }
    }
    std::lock_guard<std::mutex> l(mu_);
    watcher_.reset();
  }
}

void LeaderElector::StopWatch() {
  {
    std::lock_guard<std::mutex> l(mu_);
    watch_stop_ = true;
    if (watcher_) watcher_->Stop();
  }
  cv_.notify_all();
  if (watch_thread_.joinable()) watch_thread_.join();
  std::lock_guard<std::mutex> l(mu_);
  watch_stop_ = false;
}

bool LeaderElector::Campaign() {
  // The watch runs from the first campaign until Stop(); while leading, its events (our own
  // renewals) change nothing.
  if (config_.watch_lease && !watch_thread_.joinable()) {
    watch_thread_ = std::thread([this] { WatchLoop(); });
  }
  while (true) {
    const auto start = clock_.Now();
    switch (Attempt(start + config_.renew_deadline)) {
      case Outcome::kSucceeded:
        valid_until_ = (start + config_.renew_deadline).time_since_epoch().count();
        return true;
      case Outcome::kStopped:
        return false;
      case Outcome::kFailed:
      case Outcome::kTimedOut:
        break;
    }
    if (!Sleep(Jittered(config_.retry_period), /*wake_on_release=*/true)) return false;
  }
}

bool LeaderElector::Renew(Clock::TimePoint valid_until) {
  while (true) {
    if (!Sleep(std::min<Clock::Duration>(config_.retry_period, valid_until - clock_.Now()))) {
      return true;
    }
    if (clock_.Now() >= valid_until) return false;
    const auto start = clock_.Now();
    switch (Attempt(valid_until)) {
      case Outcome::kSucceeded:  // ended before the deadline
        valid_until = start + config_.renew_deadline;
        valid_until_ = valid_until.time_since_epoch().count();
        break;
      case Outcome::kStopped:
        return true;
      case Outcome::kTimedOut:
        return false;  // abandoned at the deadline, whatever it does later
      case Outcome::kFailed:
        if (clock_.Now() >= valid_until) return false;
        break;
    }
  }
}

void LeaderElector::Run() {
  if (Campaign()) {
    leading_ = true;
    config_.on_started_leading();
    const bool stopped = Renew(ValidUntil());
    valid_until_ = Clock::TimePoint::min().time_since_epoch().count();
    leading_ = false;
    // Writers fenced by ValidUntil() stop now; on_stopped_leading cancels what is in flight.
    config_.on_stopped_leading();
    JoinAttempt();
    if (stopped && config_.release_on_cancel) Release();
  } else {
    // Stopped while an acquisition was in flight: it may have succeeded after all.
    JoinAttempt();
    if (config_.release_on_cancel && Leader() == config_.identity) Release();
  }
  JoinAttempt();
  std::unique_lock<std::mutex> l(mu_);
  if (stopped_) {
    l.unlock();
    StopWatch();
  }
}

}  // namespace draco::k8s
