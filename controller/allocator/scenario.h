// Scenario runner speaking the `oracle allocate` protocol (tests/oracle/README.md, section 2):
// one JSON object per line with node, classes, slices, allocatedClaims, claims, deviceTaintRules
// and features in, one JSON result line out. Used by the differential test, the benchmark driver
// and allocator_test (not by `draco simulate`).
//
// Thread-safe (no shared state; every call builds its own Allocator).
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "controller/allocator/allocator.h"

namespace draco::alloc {

struct Scenario {
  std::string id;
  std::string mode;  // "" / "single" or "fillUp"
  std::optional<api::Node> node;
  std::vector<api::Node> nodes;
  std::vector<api::DeviceClass> classes;
  std::vector<std::shared_ptr<const api::ResourceSlice>> slices;
  std::vector<api::ResourceClaim> allocated_claims;
  std::vector<api::ResourceClaim> claims;
  std::vector<api::DeviceTaintRule> taint_rules;
  Features features;
};

// Parses one scenario line (api::Decode). The allocator applies API-server defaulting to claims
// and allocated claims (Allocator::Config::default_claims).
StatusOr<Scenario> ParseScenario(std::string_view json_line);

struct RunOptions {
  std::shared_ptr<SelectorCompiler> selectors;
  bool prune = true;
  std::chrono::milliseconds timeout{10000};
};

// Runs a scenario and returns the oracle-format output line (no trailing newline). Share IDs are
// canonicalized like the oracle's (sequential per output line).
std::string RunScenario(const Scenario& s, const RunOptions& opts);

// Parses and runs one line; a parse failure gives {"id":..., "inputError": ...}.
std::string RunScenarioLine(std::string_view json_line, const RunOptions& opts);

}  // namespace draco::alloc
