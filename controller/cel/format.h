// ext.Strings `<string>.format(<list>)` (cel-go strings extension, version 2 semantics: the
// formatting.go clause set %s %d %f %e %b %x %X %o with optional `.N` precision, `%%`).
//
// FormatStringValue evaluates a call at runtime. ValidateFormat is the compile-time validator
// cel-go runs when the format string is a literal and the argument a list literal: it checks the
// clauses against the arguments' static kinds. Both are pure functions (thread-safe).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "controller/cel/env.h"
#include "controller/cel/value.h"

namespace draco::cel {

// Formats `args` (a list value) per `format`; returns a string or an error value.
Value FormatStringValue(const std::string& format, const Value& args);

// Static form of one list-literal argument for the validator: its type and, for nested list/map
// literals, the types of their elements (keys and values interleaved for maps).
struct FormatArgType {
  Type type;
  bool is_list_literal = false;
  bool is_map_literal = false;
  std::vector<FormatArgType> elems;
};

// Validates a literal format string against literal arguments. Returns the error message and the
// index of the offending argument (-1: the call itself), or nullopt if valid.
std::optional<std::pair<std::string, int>> ValidateFormat(const std::string& format,
                                                          const std::vector<FormatArgType>& args);

}  // namespace draco::cel
