#include "controller/run/term.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <spdlog/spdlog.h>

#include "controller/allocator/allocator.h"
#include "controller/reconcilers/claim_util.h"
#include "controller/run/liveness.h"
#include "k8sclient/object.h"
#include "k8sclient/rest_client_impl.h"

namespace draco::run {

using namespace std::chrono_literals;

ControllerTerm::ControllerTerm(const TermDeps& deps, k8s::RestClient& writes)
    : deps_(deps), writes_(writes), hook_(std::make_shared<LifecycleHook>()) {
  k8s::workqueue::QueueOptions qo;
  qo.name = "draco";
  qo.metrics = &deps.wq_metrics;
  qo.clock = &deps.clock;
  // Per-item exponential backoff (5 ms .. 1000 s) and an overall retry budget of 50 qps.
  std::vector<std::unique_ptr<k8s::workqueue::RateLimiter>> limiters;
  limiters.push_back(std::make_unique<k8s::workqueue::ItemExponentialFailureRateLimiter>(
      k8s::workqueue::kDefaultItemBaseDelay, k8s::workqueue::kDefaultItemMaxDelay));
  limiters.push_back(std::make_unique<k8s::workqueue::BucketRateLimiter>(50, 300, deps.clock));
  queue_ = std::make_unique<k8s::workqueue::RateLimitingQueue>(
      qo, std::make_unique<k8s::workqueue::MaxOfRateLimiter>(std::move(limiters)));
  enqueuer_ = std::make_unique<reconcilers::QueueEnqueuer>(*queue_);
  if (deps.liveness) deps.liveness->SetQueue(queue_.get());
  writer_ = std::make_unique<reconcilers::RestApiWriter>(writes);
  recorder_ =
      std::make_unique<reconcilers::AsyncEventRecorder>(writes, deps.clock, "draco", deps.identity);
  alloc::Allocator::Config ac;
  ac.selectors = alloc::NewCelSelectorCompiler();
  ac.timeout = 10s;
  ac.features = deps.features;
  allocator_ = std::make_unique<reconcilers::SnapshotAllocator>(deps.cache, ac, &deps.metrics);
  reconcilers::ControllerOptions co;
  co.allocate = deps.flags.allocate;
  co.pin_node = deps.flags.pin_allocated_node;
  // kube-scheduler waits for binding conditions only with DRADeviceBindingConditions (its other
  // gate, DRAResourceClaimDeviceStatus, is GA and locked on from 1.37).
  co.binding_conditions = deps.features.device_binding;
  co.binding_timeout = deps.flags.binding_timeout;
  co.extended_resources = deps.features.extended_resource;
  co.workload_claims = deps.features.workload_resource_claims;
  co.groups = deps.flags.groups;
  co.group_reserve_after = deps.flags.group_reserve_after;
  co.group_reserve_max = deps.flags.group_reserve_max;
  co.testing_exit_after_group_writes = deps.flags.testing_exit_after_group_writes;
  controller_ = std::make_unique<reconcilers::Controller>(
      deps.cache, *writer_, *allocator_, *recorder_, *enqueuer_, deps.clock, &deps.metrics, co);
  if (deps.lifecycle.Mode() == reconcilers::LifecycleMode::kAuto) {
    reconcilers::ProbeOptions po;
    po.namespace_ = deps.flags.leader_elect_namespace;
    po.interval = deps.flags.claim_lifecycle_probe_interval;
    probe_ = std::make_unique<reconcilers::LifecycleProbe>(deps.lifecycle, deps.cache, *writer_,
                                                           deps.clock, po);
  }
  const bool restored = probe_ && RestoreLifecycle();
  controller_->SetLifecycle(&deps.lifecycle, probe_.get());
  hook_->term = this;
  deps.lifecycle.SetOnChange(
      [hook = hook_](reconcilers::LifecycleOwner owner, const std::string& reason) {
        std::lock_guard<std::mutex> l(hook->mu);
        if (hook->term) hook->term->OnLifecycleChange(owner, reason);
      });
  // A restored owner is on the Lease already (rewriting it would nest its reason).
  OnLifecycleChange(deps.lifecycle.Owner(), deps.lifecycle.Reason(), /*record=*/!restored);
  deps.informers.SetEventSink(recorder_.get());
  deps.informers.SetController(controller_.get());
  controller_->EnqueueAll();  // full resync: repairs whatever changed while nobody led
  worker_ = std::make_unique<reconcilers::Worker>(
      *queue_, [this](const reconcilers::Request& r) { return controller_->Reconcile(r); },
      deps.clock, &deps.metrics);
  worker_->Run(deps.flags.workers);
  spdlog::info("controller running with {} workers", deps.flags.workers);
  auditor_ = std::thread([this] {
    std::unique_lock<std::mutex> l(mu_);
    while (!stopping_) {
      l.unlock();
      controller_->Audit();
      l.lock();
      cv_.wait_for(l, 10s, [this] { return stopping_; });
    }
  });
}

ControllerTerm::~ControllerTerm() { Join(); }

void ControllerTerm::BeginStop() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  queue_->ShutDown();
}

void ControllerTerm::Join() {
  if (joined_) return;
  joined_ = true;
  BeginStop();
  {
    std::lock_guard<std::mutex> l(hook_->mu);  // waits for a running change callback
    hook_->term = nullptr;
  }
  worker_->Join();
  if (deps_.liveness) deps_.liveness->SetQueue(nullptr);
  if (auditor_.joinable()) auditor_.join();
  deps_.informers.SetController(nullptr);
  deps_.informers.SetEventSink(nullptr);
}

bool ControllerTerm::RestoreLifecycle() {
  if (!deps_.flags.leader_elect) return false;
  auto got = writes_.Get(k8s::kLeases, deps_.flags.leader_elect_namespace,
                         deps_.flags.leader_elect_lease_name);
  if (!got.ok()) return false;  // the probe decides
  auto lease = k8s::Object::Parse(std::move(*got));
  if (!lease.ok()) return false;
  const auto& a = (*lease)->annotations();
  auto owner = a.find("draco.dev/claim-lifecycle");
  if (owner == a.end()) return false;
  auto reason = a.find("draco.dev/claim-lifecycle-reason");
  const std::string why = reason == a.end() ? "" : reason->second;
  reconcilers::LifecycleOwner o =
      owner->second == "upstream" ? reconcilers::LifecycleOwner::kUpstream
      : owner->second == "draco"  ? reconcilers::LifecycleOwner::kDraco
                                  : reconcilers::LifecycleOwner::kUndecided;
  return deps_.lifecycle.Restore(o, why);
}

void ControllerTerm::OnLifecycleChange(reconcilers::LifecycleOwner owner, const std::string& reason,
                                       bool record) {
  const std::string_view name = reconcilers::LifecycleOwnerName(owner);
  deps_.metrics.SetClaimLifecycleOwner(name);
  // Pods that waited for a claim, claims that wait for a release: whoever owns it now acts.
  if (controller_) controller_->EnqueueAll();
  if (!record || !deps_.flags.leader_elect) return;
  rapidjson::StringBuffer sb;
  rapidjson::Writer<rapidjson::StringBuffer> w(sb);
  w.StartObject();
  w.Key("metadata");
  w.StartObject();
  w.Key("annotations");
  w.StartObject();
  w.Key("draco.dev/claim-lifecycle");
  w.String(name.data(), static_cast<rapidjson::SizeType>(name.size()));
  w.Key("draco.dev/claim-lifecycle-reason");
  w.String(reason.c_str());
  w.Key("draco.dev/claim-lifecycle-since");
  w.String(reconcilers::FormatTimestamp(deps_.clock.WallNow()).c_str());
  w.EndObject();
  w.EndObject();
  w.EndObject();
  k8s::PatchOptions opts;
  opts.field_manager = std::string(reconcilers::kFieldManager);
  auto r = writes_.Patch(k8s::kLeases, deps_.flags.leader_elect_namespace,
                         deps_.flags.leader_elect_lease_name, k8s::PatchType::kMergePatch,
                         sb.GetString(), opts);
  if (!r.ok()) {
    spdlog::warn("cannot record the claim lifecycle ({}) on Lease {}/{}: {}", name,
                 deps_.flags.leader_elect_namespace, deps_.flags.leader_elect_lease_name,
                 r.status().ToString());
  }
}

WarmClients::WarmClients(k8s::RestConfig config, Clock& clock, Clock::Duration keep_alive)
    : config_(std::move(config)), clock_(clock), keep_alive_(keep_alive) {
  thread_ = std::thread([this] { Loop(); });
}

WarmClients::~WarmClients() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
    if (next_) next_->Cancel();
  }
  cv_.notify_all();
  thread_.join();
}

StatusOr<std::shared_ptr<k8s::RestClient>> WarmClients::Take() {
  std::unique_lock<std::mutex> l(mu_);
  cv_.wait(l, [this] { return next_ != nullptr || !next_error_.ok() || stop_; });
  if (!next_error_.ok()) return next_error_;
  if (!next_) return CancelledError("write clients: shutting down");
  std::shared_ptr<k8s::RestClient> c = std::move(next_);
  next_ = nullptr;
  cv_.notify_all();  // the loop prepares the next one
  return c;
}

void WarmClients::Loop() {
  std::unique_lock<std::mutex> l(mu_);
  while (!stop_) {
    if (!next_ && next_error_.ok()) {
      l.unlock();
      auto built = k8s::NewRestClient(config_, clock_);
      l.lock();
      if (built.ok()) {
        next_ = std::move(*built);
      } else {
        next_error_ = built.status();
      }
      cv_.notify_all();
      if (stop_ && next_) next_->Cancel();
    }
    if (next_ && !stop_) {
      // Opens (or keeps alive) a pooled connection. Failures do not matter: the term's requests
      // connect again themselves.
      std::shared_ptr<k8s::RestClient> c = next_;
      l.unlock();
      (void)c->GetPath("/version");
      l.lock();
    }
    clock_.WaitUntil(cv_, l, clock_.Now() + keep_alive_,
                     [this] { return stop_ || (!next_ && next_error_.ok()); });
  }
}

}  // namespace draco::run
