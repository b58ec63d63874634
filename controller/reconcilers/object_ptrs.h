// Shared, immutable handles of the API objects the reconcilers pass around (the ClusterCache
// stores them; the seams in interfaces.h exchange them without knowing the cache).
#pragma once

#include <memory>

#include "controller/api/types.h"
#include "controller/api/workload_types.h"

namespace draco::reconcilers {

using PodPtr = std::shared_ptr<const api::Pod>;
using ClaimPtr = std::shared_ptr<const api::ResourceClaim>;
using TemplatePtr = std::shared_ptr<const api::ResourceClaimTemplate>;
using NodePtr = std::shared_ptr<const api::Node>;
using PodGroupPtr = std::shared_ptr<const api::PodGroup>;

}  // namespace draco::reconcilers
