#include "controller/admission/gate.h"

#include <algorithm>

namespace draco::admission {

bool ShouldGate(const api::Pod& pod) {
  if (pod.spec.resource_claims.empty()) return false;
  if (!pod.spec.node_name.empty()) return false;
  return std::none_of(pod.spec.scheduling_gates.begin(), pod.spec.scheduling_gates.end(),
                      [](const api::PodSchedulingGate& g) { return g.name == kSchedulingGate; });
}

std::string GatePatch(const api::Pod& pod) {
  const std::string gate = R"({"name":")" + std::string(kSchedulingGate) + "\"}";
  if (pod.spec.scheduling_gates.empty()) {
    return R"([{"op":"add","path":"/spec/schedulingGates","value":[)" + gate + "]}]";
  }
  return R"([{"op":"add","path":"/spec/schedulingGates/-","value":)" + gate + "}]";
}

}  // namespace draco::admission
