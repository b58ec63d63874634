// ast.h definitions: source positions (SourceInfo::LineColumn) and AstDebugString.
#include "controller/cel/ast.h"

#include <string>

namespace draco::cel {

std::pair<int, int> SourceInfo::LineColumn(const std::string& source, int32_t offset) const {
  int line = 1;
  int32_t line_start = 0;
  for (int32_t lo : line_offsets) {
    if (lo > offset) break;
    ++line;
    line_start = lo;
  }
  int col = 1;
  for (int32_t i = line_start; i < offset && static_cast<size_t>(i) < source.size(); ++i) {
    if ((static_cast<unsigned char>(source[static_cast<size_t>(i)]) & 0xC0) != 0x80) ++col;
  }
  return {line, col};
}

namespace {

void DebugInto(const Expr& e, std::string& out) {
  auto tag = [&](const char* kind) { out += "^#" + std::to_string(e.id) + ":" + kind + "#"; };
  switch (e.kind) {
    case ExprKind::kConst:
      out += e.const_value.DebugString();
      tag(e.const_value.kind() == Kind::kInt      ? "int64"
          : e.const_value.kind() == Kind::kUint   ? "uint64"
          : e.const_value.kind() == Kind::kDouble ? "double"
          : e.const_value.kind() == Kind::kString ? "string"
          : e.const_value.kind() == Kind::kBytes  ? "bytes"
          : e.const_value.kind() == Kind::kBool   ? "bool"
                                                  : "null");
      return;
    case ExprKind::kIdent:
      out += e.name;
      tag("ident");
      return;
    case ExprKind::kSelect:
      DebugInto(*e.operand, out);
      out += "." + e.name;
      if (e.test_only) out += "~test-only~";
      tag("select");
      return;
    case ExprKind::kCall:
      if (e.operand) {
        DebugInto(*e.operand, out);
        out += ".";
      }
      out += e.name + "(";
      for (size_t i = 0; i < e.args.size(); ++i) {
        if (i) out += ", ";
        DebugInto(*e.args[i], out);
      }
      out += ")";
      tag("call");
      return;
    case ExprKind::kList:
      out += "[";
      for (size_t i = 0; i < e.args.size(); ++i) {
        if (i) out += ", ";
        DebugInto(*e.args[i], out);
      }
      out += "]";
      tag("list");
      return;
    case ExprKind::kMap:
      out += "{";
      for (size_t i = 0; i < e.args.size(); ++i) {
        if (i) out += ", ";
        DebugInto(*e.args[i], out);
        out += ": ";
        DebugInto(*e.values[i], out);
      }
      out += "}";
      tag("map");
      return;
    case ExprKind::kComprehension:
      out += "__comprehension__(";
      out += e.iter_var + (e.iter_var2.empty() ? "" : "," + e.iter_var2) + ", ";
      DebugInto(*e.iter_range, out);
      out += ", " + e.accu_var + ", ";
      DebugInto(*e.accu_init, out);
      out += ", ";
      DebugInto(*e.loop_cond, out);
      out += ", ";
      DebugInto(*e.loop_step, out);
      out += ", ";
      DebugInto(*e.result, out);
      out += ")";
      tag("comprehension");
      return;
  }
}

}  // namespace

std::string AstDebugString(const Expr& expr) {
  std::string out;
  DebugInto(expr, out);
  return out;
}

}  // namespace draco::cel
