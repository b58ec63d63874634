// RE2 helpers with Go regexp (RE2 syntax) semantics, used by `matches`, `find` and `findAll`.
#pragma once

#include <memory>
#include <string>

#include <re2/re2.h>

#include "controller/cel/value.h"

namespace draco::cel {

// Compiles `pattern` as Go's regexp.Compile would; nullptr if invalid.
std::unique_ptr<RE2> CompileRegex(const std::string& pattern);

// The leftmost match of `re` in `s` as a string value ("" if none).
Value RegexFind(const RE2& re, const std::string& s);

// All non-overlapping matches (at most `limit` if limit >= 0).
Value RegexFindAll(const RE2& re, const std::string& s, int64_t limit);

}  // namespace draco::cel
