// The CEL parser: text -> Ast with node ids, source positions and expanded macros.
//
// Grammar and macro expansions follow cel-spec and cel-go v0.29 (has, all, exists, exists_one,
// map (2 and 3 arguments), filter, cel.bind, two-variable comprehensions, optMap, optFlatMap,
// optional selection `.?` / `[?]` and optional list/map entries).
//
// Errors are returned as data (Issues) with caret-annotated messages, never thrown. Parse is a pure
// function: thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "controller/cel/ast.h"

namespace draco::cel {

// Parser limits (cel-go defaults).
struct ParserOptions {
  // Maximum nesting depth of the expression grammar.
  int max_recursion_depth = 250;
  // Maximum input size in code points.
  int64_t expression_size_code_point_limit = 100000;
  // Number of errors reported at most.
  int max_errors = 100;
};

// One diagnostic with a byte offset into the source.
struct Issue {
  std::string message;
  int32_t offset = 0;
};

// A list of diagnostics with caret rendering in cel-go's format:
//   ERROR: <input>:1:5: undeclared reference to 'x'
//    | a + x
//    | ....^
class Issues {
 public:
  void Add(std::string message, int32_t offset) { issues_.push_back({std::move(message), offset}); }
  bool empty() const { return issues_.empty(); }
  size_t size() const { return issues_.size(); }
  const std::vector<Issue>& issues() const { return issues_; }
  std::string ToString(std::string_view source, const std::string& description = "<input>") const;

 private:
  std::vector<Issue> issues_;
};

// Parses `source`. On success returns an Ast; on failure fills `issues` and returns nullptr.
std::unique_ptr<Ast> Parse(std::string_view source, Issues& issues,
                           const ParserOptions& options = ParserOptions());

}  // namespace draco::cel
