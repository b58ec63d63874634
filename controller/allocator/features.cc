#include "controller/allocator/features.h"

#include <algorithm>
#include <array>
#include <initializer_list>
#include <vector>

namespace draco::alloc {
namespace {

// One row of the versioned gate table: from `minor` on, the default is `on`; `locked` means the
// gate cannot be set to the other value from that version on.
struct Step {
  int minor;
  bool on;
  bool locked;
};

struct Gate {
  std::string_view name;
  bool Features::*field;
  std::vector<Step> steps;  // ascending by minor
};

// k8s.io/kubernetes v1.37.2 pkg/features/kube_features.go, the DRA gates draco reads.
const std::vector<Gate>& Gates() {
  static const std::vector<Gate> kGates = {
      {"DRAAdminAccess",
       &Features::admin_access,
       {{32, false, false}, {34, true, false}, {36, true, true}}},
      {"DRAConsumableCapacity",
       &Features::consumable_capacity,
       {{34, false, false}, {36, true, false}}},
      {"DRADerivedAttributes", &Features::derived_attributes, {{37, false, false}}},
      {"DRADeviceBindingConditions",
       &Features::device_binding,
       {{34, false, false}, {36, true, false}}},
      {"DRADeviceCompatibilityGroups", &Features::compatibility_groups, {{37, false, false}}},
      {"DRADeviceTaintRules",
       &Features::device_taint_rules,
       {{35, false, false}, {37, true, false}}},
      {"DRADeviceTaints", &Features::device_taints, {{33, false, false}, {36, true, false}}},
      {"DRAExtendedResource",
       &Features::extended_resource,
       {{34, false, false}, {36, true, false}, {37, true, true}}},
      {"DRAFractionalCapacityRange", &Features::fractional_capacity_range, {{37, false, false}}},
      {"DRAListTypeAttributes", &Features::list_type_attributes, {{36, false, false}}},
      {"DRAOptionalNodeOperations", &Features::optional_node_operations, {{37, false, false}}},
      {"DRAPartitionableDevices",
       &Features::partitionable_devices,
       {{33, false, false}, {36, true, false}}},
      {"DRAPrioritizedList",
       &Features::prioritized_list,
       {{33, false, false}, {34, true, false}, {37, true, true}}},
      {"DRAWorkloadResourceClaims",
       &Features::workload_resource_claims,
       {{36, false, false}, {37, false, false}}},
  };
  return kGates;
}

// The step in force at `minor`, or nullptr when the gate does not exist yet.
const Step* StepAt(const Gate& g, int minor) {
  const Step* in_force = nullptr;
  for (const Step& s : g.steps) {
    if (s.minor <= minor) in_force = &s;
  }
  return in_force;
}

int Clamp(int minor) { return std::clamp(minor, kOldestKnownMinor, kNewestKnownMinor); }

std::string_view Trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

}  // namespace

Features DefaultFeatures(int minor) {
  minor = Clamp(minor);
  Features f;
  for (const Gate& g : Gates()) {
    const Step* s = StepAt(g, minor);
    f.*g.field = s != nullptr && s->on;
  }
  return f;
}

Status ApplyFeatureGates(std::string_view spec, int minor, Features& features) {
  minor = Clamp(minor);
  Features out = features;
  while (!spec.empty()) {
    size_t comma = spec.find(',');
    std::string_view item = Trim(spec.substr(0, comma));
    spec = comma == std::string_view::npos ? std::string_view() : spec.substr(comma + 1);
    if (item.empty()) continue;
    size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      return InvalidArgumentError("feature gate \"" + std::string(item) +
                                  "\": expected Name=true or Name=false");
    }
    std::string_view name = Trim(item.substr(0, eq));
    std::string_view value = Trim(item.substr(eq + 1));
    if (value != "true" && value != "false") {
      return InvalidArgumentError("feature gate " + std::string(name) + ": invalid value \"" +
                                  std::string(value) + "\" (true or false)");
    }
    auto it =
        std::find_if(Gates().begin(), Gates().end(), [&](const Gate& g) { return g.name == name; });
    const Step* step = it == Gates().end() ? nullptr : StepAt(*it, minor);
    if (step == nullptr) {
      return InvalidArgumentError("unknown feature gate " + std::string(name) +
                                  " for Kubernetes 1." + std::to_string(minor) +
                                  " (known: " + FeatureGateNames() + ")");
    }
    bool on = value == "true";
    if (step->locked && on != step->on) {
      return InvalidArgumentError("feature gate " + std::string(name) + " is locked to " +
                                  (step->on ? "true" : "false") + " in Kubernetes 1." +
                                  std::to_string(minor));
    }
    out.*it->field = on;
  }
  features = out;
  return OkStatus();
}

std::string FeatureGatesString(const Features& features) {
  std::string s;
  for (const Gate& g : Gates()) {
    if (!s.empty()) s += ",";
    s += std::string(g.name) + "=" + (features.*g.field ? "true" : "false");
  }
  return s;
}

std::string FeatureGateNames() {
  std::string s;
  for (const Gate& g : Gates()) {
    if (!s.empty()) s += ",";
    s += g.name;
  }
  return s;
}

}  // namespace draco::alloc
