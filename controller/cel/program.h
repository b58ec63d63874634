// Planning and evaluation: a checked Ast is compiled once into an immutable Program (a tree of
// small evaluation nodes with functions and variables resolved at plan time), which any number of
// threads may evaluate concurrently.
//
// Error tiers (as in cel-cpp): diagnostics come from Compile; Evaluate returns a non-OK Status only
// when evaluation cannot complete (the runtime cost limit was exceeded); any other runtime failure
// is an error Value (EvalResult::value.IsError()).
//
// Runtime cost follows cel-go's CostTracker with the Kubernetes CostEstimator: identifiers and
// each select/index cost 1, constants 0, list/map literals 10/30 (folded away when constant),
// calls by their overload's cost function (default 1); has() tests cost only their qualifiers.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "controller/cel/ast.h"
#include "controller/cel/checker.h"
#include "controller/cel/env.h"
#include "controller/cel/value.h"

namespace draco::cel {

// Supplies variable values for one evaluation. Not retained after Evaluate returns.
class Activation {
 public:
  virtual ~Activation() = default;
  // Returns the value of a declared variable, or nullptr if unbound.
  virtual const Value* Find(std::string_view name) const = 0;
};

// An Activation over a fixed list of (name, value) pairs.
class SimpleActivation final : public Activation {
 public:
  void Bind(std::string name, Value v) { vars_.emplace_back(std::move(name), std::move(v)); }
  const Value* Find(std::string_view name) const override {
    for (const auto& [n, v] : vars_) {
      if (n == name) return &v;
    }
    return nullptr;
  }

 private:
  std::vector<std::pair<std::string, Value>> vars_;
};

struct EvalOptions {
  // Runtime cost limit (cel-go units); 0 means unlimited.
  uint64_t cost_limit = 0;
};

struct EvalResult {
  Value value;
  uint64_t cost = 0;
  // Set by Run when evaluation was cancelled for exceeding the cost limit (value is then an
  // error and cost the total at cancellation).
  bool cost_limit_exceeded = false;
};

class Node;

// Per-evaluation state handed to nodes and function implementations.
class EvalContext {
 public:
  EvalContext(Value* slots, uint64_t cost_limit) : slots_(slots), limit_(cost_limit) {}
  void AddCost(uint64_t c) {
    cost_ += c;
    if (limit_ != 0 && cost_ > limit_) cancelled_ = true;
  }
  bool cancelled() const { return cancelled_; }
  uint64_t cost() const { return cost_; }
  Value& slot(size_t i) { return slots_[i]; }

 private:
  Value* slots_;
  uint64_t limit_;
  uint64_t cost_ = 0;
  bool cancelled_ = false;
};

class Program {
 public:
  ~Program();
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  // Evaluates the program. Thread-safe. Returns ResourceExhausted if the cost limit is exceeded.
  StatusOr<EvalResult> Evaluate(const Activation& activation,
                                const EvalOptions& options = EvalOptions()) const;
  // As Evaluate, but reports cancellation in the result (keeping the cost). Thread-safe.
  EvalResult Run(const Activation& activation, const EvalOptions& options = EvalOptions()) const;

  // The static type of the whole expression.
  const Type& result_type() const { return result_type_; }

 private:
  friend class Planner;
  Program() = default;
  std::unique_ptr<const Node> root_;
  // Names of declared variables referenced, in slot order (slots [0, n)).
  std::vector<std::string> variables_;
  size_t slot_count_ = 0;
  Type result_type_;
};

// The outcome of Compile: a program or diagnostics (compile errors).
struct CompileResult {
  std::shared_ptr<const Program> program;
  std::string error;  // caret-annotated issues when program is null
};

// Parses, checks and plans `source` against `env`. Thread-safe for a frozen env.
// `env` must outlive the program (programs point at its overloads).
CompileResult Compile(const Env& env, std::string_view source,
                      const ParserOptions& parser_options = ParserOptions());

}  // namespace draco::cel
