// Parser macro expansion: has(), the comprehension macros, cel.bind, sortBy and optMap.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "controller/cel/parser_internal.h"

namespace draco::cel::parser_internal {

std::unique_ptr<Expr> Parser::GlobalCall(std::string name, int32_t off,
                                         std::vector<std::unique_ptr<Expr>> args) {
  if (name == "has" && args.size() == 1) {
    if (args[0]->kind != ExprKind::kSelect) {
      Error(ast_.source_info.positions[args[0]->id], "invalid argument to has() macro");
      return Dummy();
    }
    args[0]->test_only = true;
    return std::move(args[0]);
  }
  return NewCall(std::move(name), off, std::move(args));
}

bool Parser::SimpleName(const std::unique_ptr<Expr>& e, std::string& out) {
  if (e->kind != ExprKind::kIdent) {
    Error(ast_.source_info.positions[e->id], "argument must be a simple name");
    return false;
  }
  out = e->name;
  if (out == kAccuVar) {
    Error(ast_.source_info.positions[e->id], "iteration variable overwrites accumulator variable");
    return false;
  }
  return true;
}

std::unique_ptr<Expr> Parser::Comprehension(int32_t off, std::unique_ptr<Expr> range,
                                            std::string v1, std::string v2,
                                            std::unique_ptr<Expr> init, std::unique_ptr<Expr> cond,
                                            std::unique_ptr<Expr> step,
                                            std::unique_ptr<Expr> result, std::string accu) {
  auto c = NewExpr(ExprKind::kComprehension, off);
  c->iter_range = std::move(range);
  c->iter_var = std::move(v1);
  c->iter_var2 = std::move(v2);
  c->accu_var = std::move(accu);
  c->accu_init = std::move(init);
  c->loop_cond = std::move(cond);
  c->loop_step = std::move(step);
  c->result = std::move(result);
  return c;
}

std::unique_ptr<Expr> Parser::Accu(int32_t off) { return NewIdent(kAccuVar, off); }

std::unique_ptr<Expr> Parser::MemberCall(std::unique_ptr<Expr> target, const std::string& name,
                                         int32_t off, std::vector<std::unique_ptr<Expr>> args) {
  size_t n = args.size();
  bool quant = name == "all" || name == "exists" || name == "exists_one" || name == "existsOne";
  if (quant && (n == 2 || n == 3)) {
    return ExpandQuantifierMacro(std::move(target), name, off, std::move(args));
  }
  if ((name == "map" && (n == 2 || n == 3)) || (name == "filter" && n == 2)) {
    return ExpandMapMacro(std::move(target), name, off, std::move(args));
  }
  if ((name == "transformList" || name == "transformMap" || name == "transformMapEntry") &&
      (n == 3 || n == 4)) {
    return ExpandTransformMacro(std::move(target), name, off, std::move(args));
  }
  if (name == "bind" && n == 3 && target->kind == ExprKind::kIdent && target->name == "cel") {
    return ExpandBindMacro(off, std::move(args));
  }
  if (name == "sortBy" && n == 2) {
    return ExpandSortByMacro(std::move(target), off, std::move(args));
  }
  if ((name == "optMap" || name == "optFlatMap") && n == 2) {
    return ExpandOptMapMacro(std::move(target), name, off, std::move(args));
  }
  return PlainMemberCall(std::move(target), name, off, std::move(args));
}

// all, exists, exists_one / existsOne (one or two iteration variables).
std::unique_ptr<Expr> Parser::ExpandQuantifierMacro(std::unique_ptr<Expr> target,
                                                    const std::string& name, int32_t off,
                                                    std::vector<std::unique_ptr<Expr>> args) {
  size_t n = args.size();
  std::string v1, v2;
  if (!SimpleName(args[0], v1)) return Dummy();
  if (n == 3 && !SimpleName(args[1], v2)) return Dummy();
  if (n == 3 && v1 == v2) {
    Error(off, "duplicate variable name: " + v1);
    return Dummy();
  }
  if (n == 2 && name == "existsOne") {
    return PlainMemberCall(std::move(target), name, off, std::move(args));
  }
  auto pred = std::move(args[n - 1]);
  if (name == "all") {
    return Comprehension(off, std::move(target), v1, v2, NewConst(Value::Bool(true), off),
                         Call("@not_strictly_false", off, Accu(off)),
                         Call("_&&_", off, Accu(off), std::move(pred)), Accu(off));
  }
  if (name == "exists") {
    return Comprehension(off, std::move(target), v1, v2, NewConst(Value::Bool(false), off),
                         Call("@not_strictly_false", off, Call("!_", off, Accu(off))),
                         Call("_||_", off, Accu(off), std::move(pred)), Accu(off));
  }
  return Comprehension(off, std::move(target), v1, v2, NewConst(Value::Int(0), off),
                       NewConst(Value::Bool(true), off),
                       Call("_?_:_", off, std::move(pred),
                            Call("_+_", off, Accu(off), NewConst(Value::Int(1), off)), Accu(off)),
                       Call("_==_", off, Accu(off), NewConst(Value::Int(1), off)));
}

// map (2 or 3 arguments) and filter.
std::unique_ptr<Expr> Parser::ExpandMapMacro(std::unique_ptr<Expr> target, const std::string& name,
                                             int32_t off, std::vector<std::unique_ptr<Expr>> args) {
  size_t n = args.size();
  std::string v;
  if (!SimpleName(args[0], v)) return Dummy();
  std::unique_ptr<Expr> filter;
  std::unique_ptr<Expr> fn;
  if (name == "filter") {
    filter = std::move(args[1]);
    fn = NewIdent(v, off);
  } else if (n == 3) {
    filter = std::move(args[1]);
    fn = std::move(args[2]);
  } else {
    fn = std::move(args[1]);
  }
  auto list = NewExpr(ExprKind::kList, off);
  list->args.push_back(std::move(fn));
  std::unique_ptr<Expr> step = Call("_+_", off, Accu(off), std::move(list));
  if (filter) step = Call("_?_:_", off, std::move(filter), std::move(step), Accu(off));
  return Comprehension(off, std::move(target), v, "", NewExpr(ExprKind::kList, off),
                       NewConst(Value::Bool(true), off), std::move(step), Accu(off));
}

// transformList, transformMap and transformMapEntry (3 or 4 arguments).
std::unique_ptr<Expr> Parser::ExpandTransformMacro(std::unique_ptr<Expr> target,
                                                   const std::string& name, int32_t off,
                                                   std::vector<std::unique_ptr<Expr>> args) {
  size_t n = args.size();
  std::string v1, v2;
  if (!SimpleName(args[0], v1) || !SimpleName(args[1], v2)) return Dummy();
  if (v1 == v2) {
    Error(off, "duplicate variable name: " + v1);
    return Dummy();
  }
  std::unique_ptr<Expr> filter = n == 4 ? std::move(args[2]) : nullptr;
  std::unique_ptr<Expr> fn = std::move(args[n - 1]);
  std::unique_ptr<Expr> step;
  std::unique_ptr<Expr> init;
  if (name == "transformList") {
    auto list = NewExpr(ExprKind::kList, off);
    list->args.push_back(std::move(fn));
    step = Call("_+_", off, Accu(off), std::move(list));
    init = NewExpr(ExprKind::kList, off);
  } else if (name == "transformMap") {
    step = Call("cel.@mapInsert", off, Accu(off), NewIdent(v1, off), std::move(fn));
    init = NewExpr(ExprKind::kMap, off);
  } else {
    step = Call("cel.@mapInsert", off, Accu(off), std::move(fn));
    init = NewExpr(ExprKind::kMap, off);
  }
  if (filter) step = Call("_?_:_", off, std::move(filter), std::move(step), Accu(off));
  return Comprehension(off, std::move(target), v1, v2, std::move(init),
                       NewConst(Value::Bool(true), off), std::move(step), Accu(off));
}

// cel.bind(var, init, expr).
std::unique_ptr<Expr> Parser::ExpandBindMacro(int32_t off,
                                              std::vector<std::unique_ptr<Expr>> args) {
  std::string v;
  if (args[0]->kind != ExprKind::kIdent) {
    Error(ast_.source_info.positions[args[0]->id],
          "cel.bind() variable names must be simple identifiers");
    return Dummy();
  }
  v = args[0]->name;
  return Comprehension(off, NewExpr(ExprKind::kList, off), "#unused", "", std::move(args[1]),
                       NewConst(Value::Bool(false), off), NewIdent(v, off), std::move(args[2]), v);
}

// sortBy (ext.Lists v3).
std::unique_ptr<Expr> Parser::ExpandSortByMacro(std::unique_ptr<Expr> target, int32_t off,
                                                std::vector<std::unique_ptr<Expr>> args) {
  // ext.Lists v3: cel.bind(@__sortBy_input__, target,
  //   @__sortBy_input__.@sortByAssociatedKeys(@__sortBy_input__.map(v, key)))
  if (!(target->kind == ExprKind::kList || target->kind == ExprKind::kSelect ||
        target->kind == ExprKind::kIdent || target->kind == ExprKind::kComprehension ||
        target->kind == ExprKind::kCall)) {
    Error(ast_.source_info.positions[target->id],
          "sortBy can only be applied to a list, identifier, comprehension, call or select "
          "expression");
    return Dummy();
  }
  const std::string var = "@__sortBy_input__";
  auto mapped = MemberCall(NewIdent(var, off), "map", off, std::move(args));
  auto sorted = PlainMemberCall(NewIdent(var, off), "@sortByAssociatedKeys", off, {});
  sorted->args.push_back(std::move(mapped));
  return Comprehension(off, NewExpr(ExprKind::kList, off), "#unused", "", std::move(target),
                       NewConst(Value::Bool(false), off), NewIdent(var, off), std::move(sorted),
                       var);
}

// optMap and optFlatMap.
std::unique_ptr<Expr> Parser::ExpandOptMapMacro(std::unique_ptr<Expr> target,
                                                const std::string& name, int32_t off,
                                                std::vector<std::unique_ptr<Expr>> args) {
  std::string v;
  if (args[0]->kind != ExprKind::kIdent) {
    Error(ast_.source_info.positions[args[0]->id],
          name + "() variable name must be a simple identifier");
    return Dummy();
  }
  v = args[0]->name;
  // target.hasValue() ? <bind v = target.value() in fn> : optional.none()
  int32_t t_off = ast_.source_info.positions[target->id];
  auto copy = CloneExpr(*target);
  auto has_value = NewExpr(ExprKind::kCall, t_off);
  has_value->name = "hasValue";
  has_value->operand = std::move(target);
  auto value = NewExpr(ExprKind::kCall, t_off);
  value->name = "value";
  value->operand = std::move(copy);
  auto bound =
      Comprehension(off, NewExpr(ExprKind::kList, off), "#unused", "", std::move(value),
                    NewConst(Value::Bool(false), off), NewIdent(v, off), std::move(args[1]), v);
  if (name == "optMap") bound = Call("optional.of", off, std::move(bound));
  return Call("_?_:_", off, std::move(has_value), std::move(bound), Call("optional.none", off));
}
std::unique_ptr<Expr> Parser::PlainMemberCall(std::unique_ptr<Expr> target, const std::string& name,
                                              int32_t off,
                                              std::vector<std::unique_ptr<Expr>> args) {
  auto call = NewCall(name, off, std::move(args));
  call->operand = std::move(target);
  return call;
}

std::unique_ptr<Expr> Parser::CloneExpr(const Expr& e) {
  auto c = NewExpr(e.kind, ast_.source_info.positions[e.id]);
  c->const_value = e.const_value;
  c->name = e.name;
  c->test_only = e.test_only;
  c->optional_indices = e.optional_indices;
  c->iter_var = e.iter_var;
  c->iter_var2 = e.iter_var2;
  c->accu_var = e.accu_var;
  if (e.operand) c->operand = CloneExpr(*e.operand);
  for (const auto& a : e.args) c->args.push_back(CloneExpr(*a));
  for (const auto& a : e.values) c->values.push_back(CloneExpr(*a));
  if (e.iter_range) c->iter_range = CloneExpr(*e.iter_range);
  if (e.accu_init) c->accu_init = CloneExpr(*e.accu_init);
  if (e.loop_cond) c->loop_cond = CloneExpr(*e.loop_cond);
  if (e.loop_step) c->loop_step = CloneExpr(*e.loop_step);
  if (e.result) c->result = CloneExpr(*e.result);
  return c;
}

}  // namespace draco::cel::parser_internal
