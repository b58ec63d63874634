// Runs draco's DRA CEL engine on `oracle cel` input lines (tests/oracle/README.md section 1) and
// renders the outcome in the oracle's output shape, so draco and upstream can be compared line by
// line. Shared by the differential test, the `cel_lines` tool and the benchmark script.
//
// Thread-safety: the functions are reentrant (the compiled-program cache they use is shared and
// thread-safe). Nothing blocks.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <rapidjson/document.h>

#include "base/status.h"
#include "controller/celenv/dra_env.h"

namespace draco::celdiff {

// The outcome classes compared by the differential test.
enum class Outcome { kCompileError, kEvalError, kTrue, kFalse, kInputError };
std::string_view OutcomeName(Outcome o);

struct CelOutput {
  std::string id;
  Outcome outcome = Outcome::kInputError;
  std::string message;      // compile/eval/input error text
  std::string error_class;  // oracle classification of an eval error
  std::optional<uint64_t> cost;
  bool cost_varies = false;  // only set on oracle outputs
};

// Builds the CEL view of the `device` object of a cel input line (upstream attribute precedence:
// list values before scalars; an attribute with no value is a conversion error).
StatusOr<std::shared_ptr<const celenv::DeviceData>> DeviceFromJson(const rapidjson::Value& device);

// Evaluates one parsed input line with draco (compile through the shared cache, the scheduler's
// options: no length limit, cost limit 1,000,000).
CelOutput RunDraco(const rapidjson::Value& input);

// Parses an oracle output object.
CelOutput ParseOracleOutput(const rapidjson::Value& output);

// The oracle's coarse classification of an evaluation error message.
std::string ClassifyEvalError(std::string_view message);

// Renders `out` as one JSON line in the oracle's output format.
std::string ToJson(const CelOutput& out);

}  // namespace draco::celdiff
