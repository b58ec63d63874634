// The CEL abstract syntax tree, produced by the parser (with macros expanded into comprehensions,
// as cel-go does) and annotated by the checker.
//
// Every node carries a unique id; SourceInfo maps ids to source offsets so that diagnostics can
// point at the input. Operators are calls with cel-go's internal function names ("_+_", "_[_]",
// "_?_:_", "_&&_", "@in", "!_", "-_", "_?._", "_[?_]").
//
// Thread-safety: an Ast is immutable after checking and may be read from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "controller/cel/value.h"

namespace draco::cel {

enum class ExprKind : uint8_t {
  kConst,
  kIdent,
  kSelect,
  kCall,
  kList,
  kMap,
  kComprehension,
};

struct Expr {
  int64_t id = 0;
  ExprKind kind = ExprKind::kConst;

  // kConst
  Value const_value;
  // kIdent: the name. kSelect: the field. kCall: the function name.
  std::string name;
  // kSelect: the operand. kCall: the receiver (member call) or null (global call).
  std::unique_ptr<Expr> operand;
  // kSelect: a presence test (from has()).
  bool test_only = false;
  // kCall: arguments. kList: elements. kMap: keys.
  std::vector<std::unique_ptr<Expr>> args;
  // kMap: values (parallel to args).
  std::vector<std::unique_ptr<Expr>> values;
  // kList: indices of optional elements (`[?x]`). kMap: indices of optional entries (`{?k: v}`).
  std::vector<int> optional_indices;

  // kComprehension.
  std::string iter_var;
  std::string iter_var2;  // empty for one-variable comprehensions
  std::string accu_var;
  std::unique_ptr<Expr> iter_range;
  std::unique_ptr<Expr> accu_init;
  std::unique_ptr<Expr> loop_cond;
  std::unique_ptr<Expr> loop_step;
  std::unique_ptr<Expr> result;
};

// Offsets of nodes and lines in the source text.
struct SourceInfo {
  std::string description = "<input>";
  // Byte offsets at which each line (after the first) starts.
  std::vector<int32_t> line_offsets;
  // Node id -> byte offset in the source.
  std::unordered_map<int64_t, int32_t> positions;
  // For ids created by macro expansion, the id of the original call.
  std::unordered_map<int64_t, int64_t> macro_calls;

  // 1-based line and column (in code points) of a byte offset.
  std::pair<int, int> LineColumn(const std::string& source, int32_t offset) const;
};

struct Ast {
  std::string source;
  std::unique_ptr<Expr> root;
  SourceInfo source_info;
};

// Renders the AST in cel-go's debug style with node ids, e.g. `_+_(a^#1:ident#,
// 1^#2:int64#)^#3:call#`.
std::string AstDebugString(const Expr& expr);

}  // namespace draco::cel
