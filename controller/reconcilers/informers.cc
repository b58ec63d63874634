#include "controller/reconcilers/informers.h"

#include <spdlog/spdlog.h>

#include "controller/allocator/json_codec.h"
#include "controller/api/codec.h"
#include "controller/reconcilers/api_writer.h"

namespace draco::reconcilers {
namespace {

template <typename T>
std::shared_ptr<const T> DecodeObj(const k8s::ObjectPtr& obj) {
  auto v = api::Decode<T>(obj->json());
  if (!v.ok()) {
    spdlog::warn("skipping {} {}: {}", obj->kind(), obj->Key(), v.status().ToString());
    return nullptr;
  }
  return std::make_shared<const T>(std::move(*v));
}

}  // namespace

Informers::Informers(k8s::RestClient& client, ClusterCache& cache, Clock& clock)
    : client_(client), cache_(cache), clock_(clock) {
  auto handler = [this](void (Informers::*fn)(const k8s::ObjectPtr&, bool)) {
    k8s::cache::ResourceEventHandler h;
    h.on_add = [this, fn](const k8s::ObjectPtr& o, bool) { (this->*fn)(o, false); };
    h.on_update = [this, fn](const k8s::ObjectPtr&, const k8s::ObjectPtr& o) {
      (this->*fn)(o, false);
    };
    h.on_delete = [this, fn](const k8s::cache::DeletedObject& d) {
      if (d.object) (this->*fn)(d.object, true);
    };
    return h;
  };
  Add(kResourceClaimsGvr, handler(&Informers::OnClaim));
  Add(kResourceClaimTemplatesGvr, handler(&Informers::OnTemplate));
  Add(kDeviceClassesGvr, handler(&Informers::OnClass));
  Add(kResourceSlicesGvr, handler(&Informers::OnSlice));
  Add(kDeviceTaintRulesGvr, handler(&Informers::OnTaintRule));
  Add(k8s::kPods, handler(&Informers::OnPod));
  Add(k8s::kNodes, handler(&Informers::OnNode));
}

Informers::~Informers() { Stop(); }

void Informers::Add(const k8s::GroupVersionResource& gvr,
                    k8s::cache::ResourceEventHandler handler) {
  lws_.push_back(std::make_unique<k8s::cache::ListWatch>(client_, gvr));
  k8s::cache::SharedInformerOptions opts;
  opts.name = gvr.resource;
  opts.clock = &clock_;
  informers_.push_back(std::make_unique<k8s::cache::SharedInformer>(*lws_.back(), opts));
  informers_.back()->AddEventHandler(std::move(handler));
}

void Informers::SetController(Controller* c) { controller_ = c; }

void Informers::Start() {
  for (auto& i : informers_) i->Start();
}

bool Informers::WaitForSync(Clock::Duration timeout) {
  auto deadline = clock_.Now() + timeout;
  for (auto& i : informers_) {
    auto left = deadline - clock_.Now();
    if (left <= Clock::Duration::zero() || !i->WaitForCacheSync(left)) return false;
  }
  return true;
}

bool Informers::HasSynced() const {
  for (const auto& i : informers_) {
    if (!i->HasSynced()) return false;
  }
  return true;
}

void Informers::Stop() {
  for (auto& i : informers_) i->Stop();
}

void Informers::InputsChanged() {
  if (Controller* c = controller_.load()) c->OnAllocationInputsChanged();
}

void Informers::OnPod(const k8s::ObjectPtr& obj, bool deleted) {
  PodPtr old = cache_.GetPod(obj->namespace_name(), obj->name());
  if (deleted) {
    cache_.DeletePod(obj->namespace_name(), obj->name());
    if (Controller* c = controller_.load()) c->OnPod(old, nullptr);
    if (old && !old->spec.node_name.empty()) InputsChanged();  // node capacity freed
    return;
  }
  PodPtr pod = DecodeObj<api::Pod>(obj);
  if (!pod) return;
  cache_.UpsertPod(pod);
  if (Controller* c = controller_.load()) c->OnPod(old, pod);
  if (old && !old->spec.node_name.empty() && !IsPodDone(*old) && IsPodDone(*pod)) {
    InputsChanged();  // node capacity freed
  }
}

void Informers::OnClaim(const k8s::ObjectPtr& obj, bool deleted) {
  ClaimPtr old = cache_.GetClaim(obj->namespace_name(), obj->name());
  if (deleted) {
    cache_.DeleteClaim(obj->namespace_name(), obj->name());
    if (Controller* c = controller_.load()) c->OnClaim(old, nullptr);
    return;
  }
  ClaimPtr claim = DecodeObj<api::ResourceClaim>(obj);
  if (!claim) return;
  if (!cache_.UpsertClaim(claim)) return;  // older than what we assumed
  if (Controller* c = controller_.load()) c->OnClaim(old, claim);
}

void Informers::OnTemplate(const k8s::ObjectPtr& obj, bool deleted) {
  if (deleted) {
    cache_.DeleteTemplate(obj->namespace_name(), obj->name());
    return;
  }
  TemplatePtr t = DecodeObj<api::ResourceClaimTemplate>(obj);
  if (!t) return;
  cache_.UpsertTemplate(t);
  if (Controller* c = controller_.load()) c->OnTemplate(t);
}

void Informers::OnClass(const k8s::ObjectPtr& obj, bool deleted) {
  if (deleted) {
    cache_.DeleteClass(obj->name());
  } else {
    auto m = alloc::DecodeDeviceClass(obj->doc());
    if (!m.ok()) {
      spdlog::warn("skipping DeviceClass {}: {}", obj->name(), m.status().ToString());
      return;
    }
    cache_.UpsertClass(obj->name(), std::move(*m));
  }
  InputsChanged();
}

void Informers::OnSlice(const k8s::ObjectPtr& obj, bool deleted) {
  if (deleted) {
    cache_.DeleteSlice(obj->name());
  } else {
    auto m = alloc::DecodeResourceSlice(obj->doc());
    if (!m.ok()) {
      spdlog::warn("skipping ResourceSlice {}: {}", obj->name(), m.status().ToString());
      return;
    }
    SliceEntry e;
    e.name = obj->name();
    e.driver = m->driver;
    e.pool = m->pool;
    e.node_name = m->node_name.value_or("");
    e.device_count = static_cast<int64_t>(m->devices.size());
    e.model = std::make_shared<const alloc::ResourceSlice>(std::move(*m));
    cache_.UpsertSlice(std::move(e));
  }
  InputsChanged();
}

void Informers::OnTaintRule(const k8s::ObjectPtr& obj, bool deleted) {
  if (deleted) {
    cache_.DeleteTaintRule(obj->name());
  } else {
    auto m = alloc::DecodeDeviceTaintRule(obj->doc());
    if (!m.ok()) {
      spdlog::warn("skipping DeviceTaintRule {}: {}", obj->name(), m.status().ToString());
      return;
    }
    cache_.UpsertTaintRule(obj->name(), std::move(*m));
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

}  // namespace draco::reconcilers
