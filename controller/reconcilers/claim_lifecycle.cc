#include "controller/reconcilers/claim_lifecycle.h"

#include <rapidjson/document.h>
#include <spdlog/spdlog.h>

#include "controller/reconcilers/claim_util.h"
#include "controller/reconcilers/controller.h"

namespace draco::reconcilers {
namespace {

// A claim created longer ago than this says nothing about whether its creator still runs.
constexpr auto kFreshEvidence = std::chrono::minutes(1);

// The field managers of the main resource (not a subresource) in the kept metadata.managedFields.
bool ManagedByDraco(const api::ObjectMeta& meta) {
  for (const auto& [key, json] : meta.unknown.members) {
    if (key != "managedFields") continue;
    rapidjson::Document d;
    d.Parse(json.data(), json.size());
    if (d.HasParseError() || !d.IsArray()) return false;
    for (const auto& e : d.GetArray()) {
      if (!e.IsObject() || !e.HasMember("manager") || !e["manager"].IsString()) continue;
      if (e.HasMember("subresource") && e["subresource"].IsString() &&
          e["subresource"].GetStringLength() > 0) {
        continue;
      }
      if (std::string_view(e["manager"].GetString()) == kFieldManager) return true;
    }
  }
  return false;
}

}  // namespace

StatusOr<LifecycleMode> ParseLifecycleMode(std::string_view s) {
  if (s == "auto") return LifecycleMode::kAuto;
  if (s == "draco") return LifecycleMode::kDraco;
  if (s == "upstream") return LifecycleMode::kUpstream;
  return InvalidArgumentError("claim lifecycle must be auto, draco or upstream, not \"" +
                              std::string(s) + "\"");
}

std::string_view LifecycleModeName(LifecycleMode m) {
  switch (m) {
    case LifecycleMode::kAuto:
      return "auto";
    case LifecycleMode::kDraco:
      return "draco";
    case LifecycleMode::kUpstream:
      return "upstream";
  }
  return "auto";
}

std::string_view LifecycleOwnerName(LifecycleOwner o) {
  switch (o) {
    case LifecycleOwner::kUndecided:
      return "undecided";
    case LifecycleOwner::kDraco:
      return "draco";
    case LifecycleOwner::kUpstream:
      return "upstream";
  }
  return "undecided";
}

bool CreatedByUpstreamController(const api::ResourceClaim& claim) {
  const std::string uid = OwnerPodUid(claim);
  if (uid.empty()) return false;
  auto it = claim.metadata.annotations.find(std::string(kPodClaimNameAnnotation));
  if (it == claim.metadata.annotations.end()) return false;
  if (!claim.metadata.generate_name.empty() &&
      claim.metadata.name == GeneratedClaimName(claim.metadata.generate_name, uid, it->second)) {
    return false;  // the name draco asks for
  }
  return !ManagedByDraco(claim.metadata);
}

ClaimLifecycle::ClaimLifecycle(LifecycleMode mode, Clock& clock)
    : mode_(mode),
      clock_(clock),
      owner_(mode == LifecycleMode::kDraco      ? LifecycleOwner::kDraco
             : mode == LifecycleMode::kUpstream ? LifecycleOwner::kUpstream
                                                : LifecycleOwner::kUndecided) {
  reason_ = mode == LifecycleMode::kAuto
                ? "not probed yet"
                : "set by --claim-lifecycle=" + std::string(LifecycleModeName(mode));
}

void ClaimLifecycle::SetOnChange(OnChange f) {
  std::lock_guard<std::mutex> l(mu_);
  on_change_ = std::move(f);
}

void ClaimLifecycle::ObserveClaimAdded(const api::ResourceClaim& claim) {
  if (mode_ != LifecycleMode::kAuto || !CreatedByUpstreamController(claim)) return;
  auto created = ParseTimestamp(claim.metadata.creation_timestamp);
  if (!created || clock_.WallNow() - *created > kFreshEvidence) return;
  {
    std::lock_guard<std::mutex> l(mu_);
    last_evidence_ = clock_.Now();
  }
  if (Owner() != LifecycleOwner::kUpstream) {
    Switch(LifecycleOwner::kUpstream,
           "kube-controller-manager's resourceclaim controller created "
           "claim " +
               claim.metadata.namespace_ + "/" + claim.metadata.name);
  }
}

Clock::TimePoint ClaimLifecycle::LastUpstreamEvidence() const {
  std::lock_guard<std::mutex> l(mu_);
  return last_evidence_;
}

void ClaimLifecycle::ProbeFinished(bool claim_seen, Clock::TimePoint started) {
  if (mode_ != LifecycleMode::kAuto) return;
  if (claim_seen) {
    {
      std::lock_guard<std::mutex> l(mu_);
      last_evidence_ = clock_.Now();
    }
    Switch(LifecycleOwner::kUpstream,
           "kube-controller-manager's resourceclaim controller created the probe pod's claim");
    return;
  }
  if (LastUpstreamEvidence() >= started) return;  // busy, but running
  Switch(LifecycleOwner::kDraco,
         "no resourceclaim controller created the probe pod's claim: draco owns the lifecycle");
}

bool ClaimLifecycle::Restore(LifecycleOwner owner, const std::string& reason) {
  if (mode_ != LifecycleMode::kAuto || owner == LifecycleOwner::kUndecided) return false;
  std::lock_guard<std::mutex> l(mu_);
  if (owner_.load() != LifecycleOwner::kUndecided) return false;
  owner_.store(owner, std::memory_order_release);
  reason_ = "as recorded by the previous leader (" + reason + "); probing again";
  spdlog::info("claim lifecycle: {} ({})", LifecycleOwnerName(owner), reason_);
  return true;
}

std::string ClaimLifecycle::Reason() const {
  std::lock_guard<std::mutex> l(mu_);
  return reason_;
}

void ClaimLifecycle::Switch(LifecycleOwner to, std::string reason) {
  OnChange cb;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (owner_.load() == to) {  // confirmed: only the reason is news
      reason_ = std::move(reason);
      return;
    }
    spdlog::info("claim lifecycle: {} -> {} ({})", LifecycleOwnerName(owner_.load()),
                 LifecycleOwnerName(to), reason);
    owner_.store(to, std::memory_order_release);
    reason_ = std::move(reason);
    cb = on_change_;
  }
  if (cb) cb(to, Reason());
}

}  // namespace draco::reconcilers
