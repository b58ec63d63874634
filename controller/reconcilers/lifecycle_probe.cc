#include "controller/reconcilers/lifecycle_probe.h"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "k8sclient/api_error.h"

namespace draco::reconcilers {

bool IsLifecycleProbe(const api::Pod& pod) {
  return pod.metadata.labels.count(std::string(kProbeLabel)) > 0;
}

LifecycleProbe::LifecycleProbe(ClaimLifecycle& lifecycle, ClusterCache& cache, ApiWriter& writer,
                               Clock& clock, ProbeOptions options)
    : lifecycle_(lifecycle),
      cache_(cache),
      writer_(writer),
      clock_(clock),
      options_(std::move(options)) {}

std::string LifecycleProbe::QueueKey() const {
  return reconcilers::QueueKey("lifecycle", options_.namespace_, "probe");
}

void LifecycleProbe::RequestSoon() {
  std::lock_guard<std::mutex> l(mu_);
  next_ = std::min(next_, clock_.Now());
}

api::ResourceClaimTemplate LifecycleProbe::ProbeTemplate() const {
  api::ResourceClaimTemplate t;
  t.metadata.name = std::string(kProbeTemplate);
  t.metadata.namespace_ = options_.namespace_;
  t.metadata.labels["app.kubernetes.io/name"] = "draco";
  t.spec.metadata.labels[std::string(kProbeLabel)] = "true";
  api::DeviceRequest r;
  r.name = "probe";
  r.exactly.emplace();
  // Never allocated: the probe pod never gets past its scheduling gate.
  r.exactly->device_class_name = "draco-lifecycle-probe";
  t.spec.spec.devices.requests.push_back(std::move(r));
  return t;
}

api::Pod LifecycleProbe::ProbePod() const {
  api::Pod p;
  p.metadata.generate_name = "draco-lifecycle-probe-";
  p.metadata.namespace_ = options_.namespace_;
  p.metadata.labels[std::string(kProbeLabel)] = "true";
  p.metadata.labels["app.kubernetes.io/name"] = "draco";
  p.metadata.annotations["draco.dev/purpose"] =
      "draco checks whether kube-controller-manager's resourceclaim controller creates this "
      "pod's claim; the pod never runs and is deleted within seconds";
  p.spec.scheduling_gates.push_back({std::string(kProbeLabel), {}});
  api::PodResourceClaim pc;
  pc.name = "probe";
  pc.resource_claim_template_name = std::string(kProbeTemplate);
  p.spec.resource_claims.push_back(std::move(pc));
  api::Container c;
  c.name = "probe";
  c.image = "draco-lifecycle-probe.invalid/never-pulled";  // never scheduled, never pulled
  // Admissible where namespaces enforce the "restricted" Pod Security Standard or a quota that
  // requires requests and limits.
  for (auto* list : {&c.resources.requests, &c.resources.limits}) {
    (*list)["cpu"] = *api::Quantity::Parse("1m");
    (*list)["memory"] = *api::Quantity::Parse("4Mi");
  }
  c.unknown.members.emplace_back(
      "securityContext",
      R"({"allowPrivilegeEscalation":false,"capabilities":{"drop":["ALL"]},"runAsNonRoot":true,)"
      R"("runAsUser":65534,"seccompProfile":{"type":"RuntimeDefault"}})");
  p.spec.containers.push_back(std::move(c));
  p.spec.unknown.members.emplace_back("automountServiceAccountToken", "false");
  return p;
}

void LifecycleProbe::DeleteLeftovers() {
  for (const auto& p : cache_.Pods()) {
    if (!IsLifecycleProbe(*p) || p->metadata.namespace_ != options_.namespace_) continue;
    if (p->metadata.uid == pod_uid_ || p->metadata.deletion_timestamp) continue;
    Status st = writer_.DeletePod(p->metadata.namespace_, p->metadata.name, p->metadata.uid);
    if (!st.ok() && !k8s::IsNotFound(st)) {
      spdlog::warn("claim lifecycle probe: cannot delete left-over probe pod {}/{}: {}",
                   p->metadata.namespace_, p->metadata.name, st.ToString());
    }
  }
}

Status LifecycleProbe::Start() {
  if (!template_ready_) {
    auto t = writer_.CreateClaimTemplate(ProbeTemplate());
    if (!t.ok() && !k8s::IsAlreadyExists(t)) {
      return {t.code(), "claim lifecycle probe: cannot create ResourceClaimTemplate " +
                            options_.namespace_ + "/" + std::string(kProbeTemplate) + ": " +
                            t.message()};
    }
    template_ready_ = true;
  }
  auto pod = writer_.CreatePod(ProbePod());
  if (!pod.ok()) {
    if (k8s::IsNotFound(pod.status())) template_ready_ = false;  // the namespace went?
    return {pod.status().code(), "claim lifecycle probe: cannot create the probe pod in " +
                                     options_.namespace_ + ": " + pod.status().message()};
  }
  running_ = true;
  failures_ = 0;
  pod_name_ = (*pod)->metadata.name;
  pod_uid_ = (*pod)->metadata.uid;
  started_ = clock_.Now();
  return OkStatus();
}

void LifecycleProbe::Finish(bool claim_seen) {
  lifecycle_.ProbeFinished(claim_seen, started_);
  Status st = writer_.DeletePod(options_.namespace_, pod_name_, pod_uid_);
  if (!st.ok() && !k8s::IsNotFound(st)) {
    // Left for the next probe's clean-up (DeleteLeftovers).
    spdlog::warn("claim lifecycle probe: cannot delete probe pod {}/{}: {}", options_.namespace_,
                 pod_name_, st.ToString());
  }
  running_ = false;
  pod_name_.clear();
  pod_uid_.clear();
  std::lock_guard<std::mutex> l(mu_);
  next_ = clock_.Now() + options_.interval;
}

StatusOr<Result> LifecycleProbe::Sync() {
  const Clock::TimePoint now = clock_.Now();
  if (running_) {
    bool seen = !cache_.ClaimsOwnedByPod(pod_uid_).empty();
    if (seen || now - started_ >= options_.timeout) {
      Finish(seen);
      return Result{options_.interval};
    }
    return Result{options_.poll};
  }
  {
    std::lock_guard<std::mutex> l(mu_);
    if (now < next_) return Result{next_ - now};
  }
  DeleteLeftovers();
  if (Status st = Start(); !st.ok()) {
    ++failures_;
    spdlog::error("{} (claim lifecycle stays {}: {})", st.message(),
                  LifecycleOwnerName(lifecycle_.Owner()), lifecycle_.Reason());
    return st;
  }
  return Result{options_.poll};
}

}  // namespace draco::reconcilers
