// Internal to the net library (net_lib.cc, net_url.cc): the registration helper and costs they
// share. Not part of the draco_celenv API; include only from controller/celenv/net_*.cc.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "controller/cel/env.h"

namespace draco::celenv::net_internal {

// Registers one overload of `fn` on `env`.
void Add(cel::Env& env, const std::string& fn, const std::string& id, bool member,
         std::vector<cel::Type> args, cel::Type result, cel::FunctionImpl impl,
         cel::CostFunction cost = nullptr);

// Cost of a function linear in its string argument (0.1 per code point, rounded up).
uint64_t StrCost(const cel::Value* a, size_t, const cel::Value&);
// Unit cost.
uint64_t UnitCost(const cel::Value*, size_t, const cel::Value&);

// Adds the URL library (url(), isURL() and the URL member functions).
void AddUrlFunctions(cel::Env& env);

}  // namespace draco::celenv::net_internal
