// cel-go's standard timestamp and duration support: `timestamp(...)`, `duration(...)`,
// arithmetic, comparison, conversions and the get* accessors (UTC or a fixed "+hh:mm" offset;
// IANA zone names are not supported and evaluate to an error), plus the literal validators
// Kubernetes enables (a literal that does not parse is a compile error).
//
// Values are opaque host values of type google.protobuf.Timestamp / google.protobuf.Duration.
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>

#include "controller/cel/env.h"

namespace draco::cel {

void AddTimeLibrary(Env& env);

// For the literal validators: the parse error of duration(s) / timestamp(s), or nullopt.
std::optional<std::string> DurationLiteralError(const std::string& s);
std::optional<std::string> TimestampLiteralError(const std::string& s);

}  // namespace draco::cel
