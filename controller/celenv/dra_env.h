// The DRA CEL environment: the `device` variable and the Kubernetes quantity and semver libraries
// on top of the generic CEL engine (controller/cel), as k8s.io/dynamic-resource-allocation/cel
// v0.37 declares them for stored expressions.
//
//   auto sel = celenv::CompileSelector(R"(device.attributes["dra.example.com"].model == "a100")");
//   auto data = celenv::DeviceDataBuilder("dra.example.com").String("model", "a100").Build();
//   StatusOr<bool> m = (*sel)->Matches(*data);
//
// Error vs false (upstream semantics): Matches returns false for "no match" and a non-OK Status
// for any runtime error (no such key, type errors, cost limit exceeded, a non-bool result, a
// version attribute that is not valid semver); callers must treat errors as fatal for the claim.
//
// Thread-safety: Selector and DeviceData are immutable and may be shared across threads.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "controller/api/quantity.h"
#include "controller/cel/cache.h"
#include "controller/cel/env.h"
#include "controller/cel/value.h"

namespace draco::celenv {

// Upstream limits (k8s.io/api resource/v1).
inline constexpr uint64_t kSelectorMaxCost = 1000000;            // CELSelectorExpressionMaxCost
inline constexpr size_t kSelectorMaxLength = size_t{10} * 1024;  // CELSelectorExpressionMaxLength

// The frozen DRA environment (built once, thread-safe).
const cel::Env& DraEnv();

// Precomputed CEL view of one device: build once per device, evaluate any number of selectors
// against it without further allocation of maps.
class DeviceData {
 public:
  const cel::Value& device() const { return device_; }
  // Set when an attribute could not be converted (e.g. an invalid version): every evaluation
  // against this device fails with it, as upstream's DeviceMatches does.
  const Status& conversion_error() const { return conversion_error_; }

 private:
  friend class DeviceDataBuilder;
  cel::Value device_;
  Status conversion_error_;
};

// Builds DeviceData. Names are fully qualified attribute/capacity names ("domain/id") or bare
// ids, which land in the driver's domain. A later value for the same domain/id replaces an
// earlier one.
class DeviceDataBuilder {
 public:
  explicit DeviceDataBuilder(std::string driver) : driver_(std::move(driver)) {}
  DeviceDataBuilder& Int(std::string_view name, int64_t v);
  DeviceDataBuilder& Bool(std::string_view name, bool v);
  DeviceDataBuilder& String(std::string_view name, std::string v);
  DeviceDataBuilder& Version(std::string_view name, std::string_view v);
  DeviceDataBuilder& IntList(std::string_view name, const std::vector<int64_t>& v);
  DeviceDataBuilder& BoolList(std::string_view name, const std::vector<bool>& v);
  DeviceDataBuilder& StringList(std::string_view name, const std::vector<std::string>& v);
  DeviceDataBuilder& VersionList(std::string_view name, const std::vector<std::string>& v);
  DeviceDataBuilder& Capacity(std::string_view name, const api::Quantity& q);
  // Records an attribute that carries no value: like upstream, every evaluation against the
  // device then fails ("attribute <name>: unsupported attribute value").
  DeviceDataBuilder& Unsupported(std::string_view name);
  DeviceDataBuilder& AllowMultipleAllocations(bool v) {
    allow_multiple_ = v;
    return *this;
  }
  std::shared_ptr<const DeviceData> Build() const;

 private:
  void Put(std::vector<std::pair<std::string, std::vector<std::pair<std::string, cel::Value>>>>& m,
           std::string_view name, cel::Value v);
  std::string driver_;
  bool allow_multiple_ = false;
  Status error_;
  std::vector<std::pair<std::string, std::vector<std::pair<std::string, cel::Value>>>> attrs_;
  std::vector<std::pair<std::string, std::vector<std::pair<std::string, cel::Value>>>> caps_;
};

// The outcome of one evaluation: match/no match or the runtime error, and the runtime cost in
// cel-go units (absent when evaluation never started, e.g. an attribute conversion error; when the
// cost limit is exceeded it is the cost at the moment of cancellation).
struct MatchResult {
  StatusOr<bool> matched = false;
  std::optional<uint64_t> cost;
};

// A compiled device selector. Immutable, thread-safe.
class Selector {
 public:
  explicit Selector(std::shared_ptr<const cel::Program> program) : program_(std::move(program)) {}
  // True/false, or an error for any runtime failure. `cost` receives the runtime cost if non-null
  // and evaluation ran (also when it failed).
  StatusOr<bool> Matches(const DeviceData& device, uint64_t* cost = nullptr,
                         uint64_t cost_limit = kSelectorMaxCost) const;
  // As Matches, returning the cost alongside.
  MatchResult Evaluate(const DeviceData& device, uint64_t cost_limit = kSelectorMaxCost) const;

 private:
  std::shared_ptr<const cel::Program> program_;
};

// The value of a derived attribute (DRADerivedAttributes): a scalar or a list of one scalar type.
// Versions are kept as their canonical semver text.
struct AttributeValue {
  enum class Kind : uint8_t { kBool, kInt, kString, kVersion, kBools, kInts, kStrings, kVersions };
  Kind kind = Kind::kString;
  bool b = false;
  int64_t i = 0;
  std::string s;
  std::vector<bool> bools;
  std::vector<int64_t> ints;
  std::vector<std::string> strs;  // kStrings, kVersions
};

// A compiled derived-attribute expression. Immutable, thread-safe.
class DerivedExpression {
 public:
  explicit DerivedExpression(std::shared_ptr<const cel::Program> program)
      : program_(std::move(program)) {}
  // The value, or an error for any runtime failure or a result that is not a scalar (bool, int,
  // string, semver) or a list of one of them (an empty list is an empty string list).
  StatusOr<AttributeValue> Evaluate(const DeviceData& device,
                                    uint64_t cost_limit = kSelectorMaxCost) const;

 private:
  std::shared_ptr<const cel::Program> program_;
};

// Compiles a derived attribute's expression (as upstream's GetOrCompileDerivedAttribute for stored
// expressions: the result type must be bool, int, string, semver, dyn or a list of those).
StatusOr<std::shared_ptr<const DerivedExpression>> CompileDerived(std::string_view expr);

struct SelectorOptions {
  // Enforce the API's 10 KiB length limit (the scheduler itself does not re-validate).
  bool enforce_length_limit = true;
};

// Compiles a selector (through a process-wide program cache). A compile error is returned as
// InvalidArgument with cel-go style caret messages; the result type must be bool (or dyn).
StatusOr<std::shared_ptr<const Selector>> CompileSelector(std::string_view expr,
                                                          const SelectorOptions& options = {});

}  // namespace draco::celenv
