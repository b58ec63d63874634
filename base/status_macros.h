// Propagation helpers for Status and StatusOr.
//
//   DRACO_RETURN_IF_ERROR(DoThing());
//   DRACO_ASSIGN_OR_RETURN(auto value, ComputeThing());
#pragma once

#include "base/status.h"

#define DRACO_STATUS_CONCAT_INNER_(a, b) a##b
#define DRACO_STATUS_CONCAT_(a, b) DRACO_STATUS_CONCAT_INNER_(a, b)

#define DRACO_RETURN_IF_ERROR(expr)                        \
  do {                                                     \
    ::draco::Status draco_status_tmp_ = (expr);            \
    if (!draco_status_tmp_.ok()) return draco_status_tmp_; \
  } while (0)

// `tmp` is a generated name and `lhs` may be a declaration ("auto x"); parentheses around either
// would not compile.
// NOLINTBEGIN(bugprone-macro-parentheses): tmp and lhs are declarators, not expressions
#define DRACO_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                 \
  if (!tmp.ok()) return tmp.status();                \
  lhs = std::move(tmp).value()
// NOLINTEND(bugprone-macro-parentheses)

#define DRACO_ASSIGN_OR_RETURN(lhs, expr) \
  DRACO_ASSIGN_OR_RETURN_IMPL_(DRACO_STATUS_CONCAT_(draco_statusor_, __LINE__), lhs, expr)
