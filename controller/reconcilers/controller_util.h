// Small helpers shared by the Controller's source files (controller.cc, group_sync.cc): keys,
// Event targets and timing. Internal to draco_reconcilers.
#pragma once

#include <chrono>
#include <string>

#include "base/clock.h"
#include "base/status.h"
#include "controller/api/types.h"
#include "controller/reconcilers/interfaces.h"

namespace draco::reconcilers {

inline std::string ClaimKey(const api::ResourceClaim& c) {
  return c.metadata.namespace_ + "/" + c.metadata.name;
}

inline EventTarget PodTarget(const api::Pod& p) {
  return {"v1", "Pod", p.metadata.namespace_, p.metadata.name, p.metadata.uid};
}

inline EventTarget ClaimTarget(const api::ResourceClaim& c) {
  return {"resource.k8s.io/v1", "ResourceClaim", c.metadata.namespace_, c.metadata.name,
          c.metadata.uid};
}

// Requeue policy for write failures: conflicts and "not found" are expected races that the next
// sync resolves from fresher state.
inline Status WriteError(const Status& s, const std::string& what) { return s.WithPrefix(what); }

inline double SecondsSince(const Clock& clock, Clock::TimePoint start) {
  return std::chrono::duration<double>(clock.Now() - start).count();
}

}  // namespace draco::reconcilers
