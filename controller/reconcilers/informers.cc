#include "controller/reconcilers/informers.h"

#include <set>
#include <type_traits>

#include <spdlog/spdlog.h>

#include "controller/allocator/allocator.h"
#include "controller/api/codec.h"
#include "controller/reconcilers/api_writer.h"
#include "k8sclient/api_error.h"

namespace draco::reconcilers {
namespace {

// Decodes an event's object. metadata.managedFields is skipped (often the largest part of a pod,
// and nothing here reads it) for every kind but ResourceClaims, which draco writes back whole
// (UpdateClaim/UpdateClaimStatus encode the cached object, unknown members included).
template <typename T>
std::shared_ptr<const T> DecodeObj(const k8s::ObjectPtr& obj) {
  auto v = std::is_same_v<T, api::ResourceClaim> ? api::Decode<T>(obj->json())
                                                 : api::DecodeSkippingManagedFields<T>(obj->json());
  if (!v.ok()) {
    spdlog::warn("skipping {} {}: {}", obj->kind(), obj->Key(), v.status().ToString());
    return nullptr;
  }
  return std::make_shared<const T>(std::move(*v));
}

}  // namespace

Informers::Informers(k8s::RestClient& client, ClusterCache& cache, Clock& clock,
                     Clock::Duration policy_probe_interval, bool watch_device_taint_rules,
                     bool watch_pod_groups)
    : client_(client), cache_(cache), clock_(clock), policy_probe_interval_(policy_probe_interval) {
  Add(kResourceClaimsGvr, Handler(&Informers::OnClaim));
  Add(kResourceClaimTemplatesGvr, Handler(&Informers::OnTemplate));
  Add(kDeviceClassesGvr, Handler(&Informers::OnClass));
  Add(kResourceSlicesGvr, Handler(&Informers::OnSlice));
  if (watch_device_taint_rules) Add(kDeviceTaintRulesGvr, Handler(&Informers::OnTaintRule));
  Add(k8s::kPods, Handler(&Informers::OnPod));
  Add(k8s::kNodes, Handler(&Informers::OnNode));
  Add(kPersistentVolumesGvr, Handler(&Informers::OnPersistentVolume));
  Add(kPersistentVolumeClaimsGvr, Handler(&Informers::OnPersistentVolumeClaim));
  Add(kStorageClassesGvr, Handler(&Informers::OnStorageClass));
  Add(kCSINodesGvr, Handler(&Informers::OnCSINode));
  Add(k8s::kNamespaces, Handler(&Informers::OnNamespace));
  if (watch_pod_groups) Add(kPodGroupsGvr, Handler(&Informers::OnPodGroup));
}

Informers::~Informers() { Stop(); }

k8s::cache::ResourceEventHandler Informers::Handler(void (Informers::*fn)(const k8s::ObjectPtr&,
                                                                          bool)) {
  k8s::cache::ResourceEventHandler h;
  h.on_add = [this, fn](const k8s::ObjectPtr& o, bool) { (this->*fn)(o, false); };
  h.on_update = [this, fn](const k8s::ObjectPtr&, const k8s::ObjectPtr& o) {
    (this->*fn)(o, false);
  };
  h.on_delete = [this, fn](const k8s::cache::DeletedObject& d) {
    if (d.object) (this->*fn)(d.object, true);
  };
  return h;
}

void Informers::SetEventSink(EventSink* sink) {
  std::unique_lock<std::shared_mutex> l(attach_mu_);
  events_ = sink;
}

Informers::Attached Informers::Attach() const {
  std::shared_lock<std::shared_mutex> l(attach_mu_);
  Controller* c = controller_;
  EventSink* e = events_;
  return Attached{std::move(l), c, e};
}

Informers::PolicyState Informers::policy_state() const {
  std::lock_guard<std::mutex> l(policy_mu_);
  return policy_state_;
}

void Informers::ProbePolicies() {
  std::unique_lock<std::mutex> l(policy_mu_);
  bool logged_absent = false;
  while (!stopping_) {
    l.unlock();
    k8s::ListOptions o;
    o.limit = 1;
    auto r = client_.List(kAllocationPoliciesGvr, "", o);
    l.lock();
    if (stopping_) return;
    if (r.ok()) {
      spdlog::info("AllocationPolicy CRD found: watching allocationpolicies.draco.dev");
      policy_lw_ = std::make_unique<k8s::cache::ListWatch>(client_, kAllocationPoliciesGvr);
      k8s::cache::SharedInformerOptions opts;
      opts.name = kAllocationPoliciesGvr.resource;
      opts.clock = &clock_;
      policy_informer_ = std::make_unique<k8s::cache::SharedInformer>(*policy_lw_, opts);
      policy_handler_id_ = policy_informer_->AddEventHandler(Handler(&Informers::OnPolicy));
      policy_informer_->Start();
      policy_state_ = PolicyState::kWatching;
      policy_cv_.notify_all();
      return;
    }
    if (k8s::IsNotFound(r.status())) {
      if (!logged_absent) {
        spdlog::info(
            "AllocationPolicy CRD (allocationpolicies.draco.dev) not installed: no policies, "
            "every DeviceClass allocates FirstFit without limits; checking again every {}s",
            std::chrono::duration_cast<std::chrono::seconds>(policy_probe_interval_).count());
        logged_absent = true;
      }
      policy_state_ = PolicyState::kAbsent;
      policy_was_absent_ = true;
    } else {
      spdlog::warn("cannot list allocationpolicies.draco.dev (retrying in {}s): {}",
                   std::chrono::duration_cast<std::chrono::seconds>(policy_probe_interval_).count(),
                   r.status().ToString());
    }
    policy_cv_.notify_all();
    clock_.WaitUntil(policy_cv_, l, clock_.Now() + policy_probe_interval_,
                     [&] { return stopping_; });
  }
}

void Informers::Add(const k8s::GroupVersionResource& gvr,
                    k8s::cache::ResourceEventHandler handler) {
  lws_.push_back(std::make_unique<k8s::cache::ListWatch>(client_, gvr));
  k8s::cache::SharedInformerOptions opts;
  opts.name = gvr.resource;
  opts.clock = &clock_;
  informers_.push_back(std::make_unique<k8s::cache::SharedInformer>(*lws_.back(), opts));
  handler_ids_.push_back(informers_.back()->AddEventHandler(std::move(handler)));
}

void Informers::SetController(Controller* c) {
  std::unique_lock<std::shared_mutex> l(attach_mu_);
  controller_ = c;
}

void Informers::Start() {
  for (auto& i : informers_) i->Start();
  std::lock_guard<std::mutex> l(policy_mu_);
  if (!probe_thread_.joinable() && !stopping_) {
    probe_thread_ = std::thread([this] { ProbePolicies(); });
  }
}

namespace {

// CatchUp's part for one kind: list it consistently and bring the cache's copies up to date.
template <typename T, typename Get, typename Upsert, typename All, typename Delete>
StatusOr<size_t> CatchUpKind(k8s::RestClient& client, const k8s::GroupVersionResource& gvr, Get get,
                             Upsert upsert, All all, Delete del) {
  auto list = k8s::ListAll(client, gvr, "", k8s::ListOptions{});
  if (!list.ok()) return list.status().WithPrefix("consistent list of " + gvr.resource);
  size_t changed = 0;
  std::set<std::string> listed;
  for (const auto& obj : list->items) {
    listed.insert(obj->namespace_name() + "/" + obj->name());
    auto old = get(obj->namespace_name(), obj->name());
    if (old && old->metadata.uid == obj->uid() &&
        !ResourceVersionOlder(old->metadata.resource_version, obj->resource_version())) {
      continue;
    }
    if (auto fresh = DecodeObj<T>(obj); fresh && upsert(fresh)) ++changed;
  }
  for (const auto& o : all()) {
    if (listed.count(o->metadata.namespace_ + "/" + o->metadata.name) ||
        !ResourceVersionOlder(o->metadata.resource_version, list->resource_version)) {
      continue;
    }
    del(o->metadata.namespace_, o->metadata.name);  // deleted while the watch was away
    ++changed;
  }
  return changed;
}

}  // namespace

StatusOr<size_t> Informers::CatchUp() {
  ClusterCache& c = cache_;
  auto claims = CatchUpKind<api::ResourceClaim>(
      client_, kResourceClaimsGvr,
      [&c](const std::string& ns, const std::string& n) { return c.GetClaim(ns, n); },
      [&c](ClaimPtr p) { return c.UpsertClaim(std::move(p)); }, [&c] { return c.Claims(); },
      [&c](const std::string& ns, const std::string& n) { c.DeleteClaim(ns, n); });
  if (!claims.ok()) return claims.status();
  auto pods = CatchUpKind<api::Pod>(
      client_, k8s::kPods,
      [&c](const std::string& ns, const std::string& n) { return c.GetPod(ns, n); },
      [&c](PodPtr p) {
        c.UpsertPod(std::move(p));
        return true;
      },
      [&c] { return c.Pods(); },
      [&c](const std::string& ns, const std::string& n) { c.DeletePod(ns, n); });
  if (!pods.ok()) return pods.status();
  return *claims + *pods;
}

bool Informers::WaitForSync(Clock::Duration timeout) {
  auto deadline = clock_.Now() + timeout;
  // Synced means the handlers have put the initial lists into the ClusterCache, not merely that
  // the informers' own stores are filled (the handlers run on their own threads).
  for (size_t i = 0; i < informers_.size(); ++i) {
    auto left = deadline - clock_.Now();
    if (left <= Clock::Duration::zero() ||
        !informers_[i]->WaitForHandlerSync(handler_ids_[i], left)) {
      return false;
    }
  }
  // The optional policy informer: wait for the probe's answer, then for its sync.
  k8s::cache::SharedInformer* pi = nullptr;
  int pid = -1;
  {
    std::unique_lock<std::mutex> l(policy_mu_);
    bool answered = clock_.WaitUntil(policy_cv_, l, deadline, [&] {
      return stopping_ || policy_state_ != PolicyState::kProbing;
    });
    if (!answered || stopping_) return false;
    if (policy_state_ == PolicyState::kAbsent) return true;
    pi = policy_informer_.get();
    pid = policy_handler_id_;
  }
  auto left = deadline - clock_.Now();
  return left > Clock::Duration::zero() && pi->WaitForHandlerSync(pid, left);
}

bool Informers::HasSynced() const {
  for (size_t i = 0; i < informers_.size(); ++i) {
    if (!informers_[i]->HandlerHasSynced(handler_ids_[i])) return false;
  }
  std::lock_guard<std::mutex> l(policy_mu_);
  // A CRD installed while running does not make a ready replica unready while it lists.
  return policy_state_ == PolicyState::kAbsent ||
         (policy_state_ == PolicyState::kWatching &&
          (policy_was_absent_ || policy_informer_->HandlerHasSynced(policy_handler_id_)));
}

std::vector<Informers::InformerHealth> Informers::Health() const {
  std::vector<InformerHealth> out;
  for (size_t i = 0; i < informers_.size(); ++i) {
    out.push_back({informers_[i]->name(), informers_[i]->HandlerHasSynced(handler_ids_[i]),
                   informers_[i]->WatchDownSince()});
  }
  std::lock_guard<std::mutex> l(policy_mu_);
  if (policy_state_ == PolicyState::kProbing) {
    out.push_back({kAllocationPoliciesGvr.resource, false, std::nullopt});
  } else if (policy_state_ == PolicyState::kWatching) {
    out.push_back({policy_informer_->name(),
                   policy_was_absent_ || policy_informer_->HandlerHasSynced(policy_handler_id_),
                   policy_informer_->WatchDownSince()});
  }
  return out;
}

void Informers::Stop() {
  {
    std::lock_guard<std::mutex> l(policy_mu_);
    stopping_ = true;
  }
  policy_cv_.notify_all();
  if (probe_thread_.joinable()) probe_thread_.join();
  for (auto& i : informers_) i->Stop();
  if (policy_informer_) policy_informer_->Stop();
}

void Informers::InputsChanged() {
  if (auto a = Attach(); a.controller) a.controller->OnAllocationInputsChanged();
}

void Informers::OnPod(const k8s::ObjectPtr& obj, bool deleted) {
  PodPtr old = cache_.GetPod(obj->namespace_name(), obj->name());
  if (deleted) {
    cache_.DeletePod(obj->namespace_name(), obj->name());
    if (auto a = Attach(); a.controller) a.controller->OnPod(old, nullptr);
    if (old && !old->spec.node_name.empty()) InputsChanged();  // node capacity freed
    return;
  }
  PodPtr pod = DecodeObj<api::Pod>(obj);
  if (!pod) return;
  cache_.UpsertPod(pod);
  if (auto a = Attach(); a.controller) a.controller->OnPod(old, pod);
  if (old && !old->spec.node_name.empty() && !IsPodDone(*old) && IsPodDone(*pod)) {
    InputsChanged();  // node capacity freed
  }
}

void Informers::OnClaim(const k8s::ObjectPtr& obj, bool deleted) {
  ClaimPtr old = cache_.GetClaim(obj->namespace_name(), obj->name());
  if (deleted) {
    cache_.DeleteClaim(obj->namespace_name(), obj->name());
    if (auto a = Attach(); a.controller) a.controller->OnClaim(old, nullptr);
    return;
  }
  ClaimPtr claim = DecodeObj<api::ResourceClaim>(obj);
  if (!claim) return;
  if (!cache_.UpsertClaim(claim)) return;  // older than what we assumed
  if (auto a = Attach(); a.controller) a.controller->OnClaim(old, claim);
}

void Informers::OnTemplate(const k8s::ObjectPtr& obj, bool deleted) {
  if (deleted) {
    cache_.DeleteTemplate(obj->namespace_name(), obj->name());
    return;
  }
  TemplatePtr t = DecodeObj<api::ResourceClaimTemplate>(obj);
  if (!t) return;
  cache_.UpsertTemplate(t);
  if (auto a = Attach(); a.controller) a.controller->OnTemplate(t);
}

void Informers::OnClass(const k8s::ObjectPtr& obj, bool deleted) {
  if (deleted) {
    cache_.DeleteClass(obj->name());
  } else {
    auto m = api::Decode<api::DeviceClass>(obj->json());
    if (!m.ok()) {
      spdlog::warn("skipping DeviceClass {}: {}", obj->name(), m.status().ToString());
      return;
    }
    cache_.UpsertClass(std::make_shared<const api::DeviceClass>(std::move(*m)));
  }
  InputsChanged();
}

void Informers::OnSlice(const k8s::ObjectPtr& obj, bool deleted) {
  if (deleted) {
    cache_.DeleteSlice(obj->name());
  } else {
    auto a = api::Decode<api::ResourceSlice>(obj->json());
    if (!a.ok()) {
      spdlog::warn("skipping ResourceSlice {}: {}", obj->name(), a.status().ToString());
      return;
    }
    cache_.UpsertSlice(MakeSliceEntry(std::make_shared<const api::ResourceSlice>(std::move(*a))));
  }
  InputsChanged();
}

void Informers::OnTaintRule(const k8s::ObjectPtr& obj, bool deleted) {
  if (deleted) {
    cache_.DeleteTaintRule(obj->name());
  } else {
    auto m = api::Decode<api::DeviceTaintRule>(obj->json());
    if (!m.ok()) {
      spdlog::warn("skipping DeviceTaintRule {}: {}", obj->name(), m.status().ToString());
      return;
    }
    cache_.UpsertTaintRule(std::move(*m));
  }
  InputsChanged();
}

void Informers::OnNode(const k8s::ObjectPtr& obj, bool deleted) {
  if (deleted) {
    cache_.DeleteNode(obj->name());
  } else {
    NodePtr n = DecodeObj<api::Node>(obj);
    if (!n) return;
    NodePtr old = cache_.GetNode(obj->name());
    cache_.UpsertNode(n);
    // Heartbeats change only condition timestamps; only scheduling-relevant changes wake pods.
    if (old && old->spec == n->spec && old->metadata.labels == n->metadata.labels &&
        old->IsReady() == n->IsReady() && old->status.allocatable == n->status.allocatable) {
      return;
    }
  }
  InputsChanged();
}

void Informers::OnPolicy(const k8s::ObjectPtr& obj, bool deleted) {
  if (deleted) {
    spdlog::info("AllocationPolicy {} deleted", obj->name());
    cache_.DeletePolicy(obj->name());
  } else {
    auto m = api::Decode<api::AllocationPolicy>(obj->json());
    Status valid = m.ok() ? alloc::ValidatePolicy(*m) : m.status();
    if (!valid.ok()) {
      std::string msg =
          "AllocationPolicy " + obj->name() +
          " ignored (its last valid version, if any, stays in effect): " + valid.message();
      spdlog::warn("{}", msg);
      if (auto a = Attach(); a.events != nullptr) {
        EventTarget t{"draco.dev/v1alpha1", "AllocationPolicy", "", obj->name(), obj->uid()};
        a.events->Record(t, "Warning", "InvalidPolicy", msg);
      }
      return;
    }
    const api::AllocationPolicySpec& spec = *m->spec;  // ValidatePolicy: present
    spdlog::info("AllocationPolicy {} in effect (strategy {}, {} namespace limit(s))", obj->name(),
                 spec.strategy.empty() ? "FirstFit" : spec.strategy, spec.namespace_limits.size());
    cache_.UpsertPolicy(std::move(*m));
  }
  InputsChanged();
}

// Feasibility inputs: stored for the filters; a change may make a parked pod schedulable.
void Informers::OnPersistentVolume(const k8s::ObjectPtr& obj, bool deleted) {
  if (deleted) {
    cache_.DeletePersistentVolume(obj->name());
  } else if (auto v = DecodeObj<api::PersistentVolume>(obj)) {
    cache_.UpsertPersistentVolume(std::move(v));
  }
  InputsChanged();
}

void Informers::OnPersistentVolumeClaim(const k8s::ObjectPtr& obj, bool deleted) {
  if (deleted) {
    cache_.DeletePersistentVolumeClaim(obj->namespace_name(), obj->name());
  } else if (auto v = DecodeObj<api::PersistentVolumeClaim>(obj)) {
    cache_.UpsertPersistentVolumeClaim(std::move(v));
  }
  InputsChanged();
}

void Informers::OnStorageClass(const k8s::ObjectPtr& obj, bool deleted) {
  if (deleted) {
    cache_.DeleteStorageClass(obj->name());
  } else if (auto v = DecodeObj<api::StorageClass>(obj)) {
    cache_.UpsertStorageClass(std::move(v));
  }
  InputsChanged();
}

void Informers::OnCSINode(const k8s::ObjectPtr& obj, bool deleted) {
  if (deleted) {
    cache_.DeleteCSINode(obj->name());
  } else if (auto v = DecodeObj<api::CSINode>(obj)) {
    cache_.UpsertCSINode(std::move(v));
  }
  InputsChanged();
}

void Informers::OnNamespace(const k8s::ObjectPtr& obj, bool deleted) {
  if (deleted) {
    cache_.DeleteNamespace(obj->name());
  } else if (auto v = DecodeObj<api::Namespace>(obj)) {
    cache_.UpsertNamespace(std::move(v));
  }
}

void Informers::OnPodGroup(const k8s::ObjectPtr& obj, bool deleted) {
  PodGroupPtr old = cache_.GetPodGroup(obj->namespace_name(), obj->name());
  if (deleted) {
    cache_.DeletePodGroup(obj->namespace_name(), obj->name());
    if (!old) old = DecodeObj<api::PodGroup>(obj);
    if (auto a = Attach(); a.controller && old) a.controller->OnPodGroup(old, nullptr);
    return;
  }
  PodGroupPtr group = DecodeObj<api::PodGroup>(obj);
  if (!group) return;
  cache_.UpsertPodGroup(group);
  if (auto a = Attach(); a.controller) a.controller->OnPodGroup(old, group);
}

}  // namespace draco::reconcilers
