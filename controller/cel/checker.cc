#include "controller/cel/checker.h"

#include <map>
#include <optional>
#include <ranges>
#include <set>

#include "controller/cel/format.h"
#include "controller/cel/time_lib.h"

namespace draco::cel {

namespace {

using Subst = std::map<std::string, Type>;

const std::map<std::string, Type>& TypeIdents() {
  static const auto* m = new std::map<std::string, Type>{
      {"bool", Type::Bool()},
      {"int", Type::Int()},
      {"uint", Type::Uint()},
      {"double", Type::Double()},
      {"string", Type::String()},
      {"bytes", Type::Bytes()},
      {"null_type", Type::Null()},
      {"dyn", Type::Dyn()},
      {"list", Type::List(Type::Dyn())},
      {"map", Type::Map(Type::Dyn(), Type::Dyn())},
      {"type", Type::TypeOf(Type::Dyn())},
      {"optional_type", Type::Optional(Type::Dyn())},
  };
  return *m;
}

class Checker {
 public:
  Checker(const Env& env, Ast& ast, CheckedInfo& info, Issues& issues)
      : env_(env), ast_(ast), info_(info), issues_(issues) {}

  bool Run() {
    CheckExpr(*ast_.root);
    for (auto& [id, t] : info_.types) t = Finalize(t);
    if (issues_.empty()) {
      ValidateHomogeneous(*ast_.root, false);
      ValidateFormatCalls(*ast_.root);
    }
    return issues_.empty();
  }

 private:
  void Error(const Expr& e, std::string msg) {
    auto it = ast_.source_info.positions.find(e.id);
    issues_.Add(std::move(msg), it == ast_.source_info.positions.end() ? 0 : it->second);
  }

  Type FinalType(const Expr& e, bool optional) const {
    auto it = info_.types.find(e.id);
    Type t = it == info_.types.end() ? Type::Dyn() : it->second;
    if (optional && t.k == Type::K::kOptional && !t.params.empty()) return t.params[0];
    return t;
  }
  void Mismatch(const Expr& at, const Type& want, const Type& got) {
    Error(at, "expected type '" + want.ToString() + "' but found '" + got.ToString() + "'");
  }

  // cel-go's homogeneous aggregate literal validator (literals under a `format` call are exempt).
  void ValidateHomogeneous(const Expr& e, bool exempt) {
    if (!exempt && e.kind == ExprKind::kList) {
      std::set<int> opt(e.optional_indices.begin(), e.optional_indices.end());
      std::optional<Type> elem;
      for (size_t i = 0; i < e.args.size(); ++i) {
        Type t = FinalType(*e.args[i], opt.count(static_cast<int>(i)) > 0);
        if (!elem) {
          elem = t;
        } else if (!(*elem == t)) {
          Mismatch(*e.args[i], *elem, t);
          break;
        }
      }
    }
    if (!exempt && e.kind == ExprKind::kMap) {
      std::set<int> opt(e.optional_indices.begin(), e.optional_indices.end());
      std::optional<Type> kt, vt;
      for (size_t i = 0; i < e.args.size(); ++i) {
        Type k = FinalType(*e.args[i], false);
        Type v = FinalType(*e.values[i], opt.count(static_cast<int>(i)) > 0);
        if (!kt) {
          kt = k;
          vt = v;
          continue;
        }
        if (!(*kt == k)) Mismatch(*e.args[i], *kt, k);
        if (!(*vt == v)) Mismatch(*e.values[i], *vt, v);
      }
    }
    bool inner = exempt || (e.kind == ExprKind::kCall && e.name == "format");
    if (e.operand) ValidateHomogeneous(*e.operand, inner);
    for (const auto& a : e.args) ValidateHomogeneous(*a, inner);
    for (const auto& a : e.values) ValidateHomogeneous(*a, inner);
    for (const Expr* c : {e.iter_range.get(), e.accu_init.get(), e.loop_cond.get(),
                          e.loop_step.get(), e.result.get()}) {
      if (c) ValidateHomogeneous(*c, inner);
    }
  }

  // cel-go's string.format AST validator: a literal format string applied to a list literal.
  void ValidateFormatCalls(const Expr& e) {
    if (e.kind == ExprKind::kCall && !e.operand && e.args.size() == 1 &&
        (e.name == "duration" || e.name == "timestamp") && e.args[0]->kind == ExprKind::kConst &&
        e.args[0]->const_value.kind() == Kind::kString) {
      const std::string& lit = e.args[0]->const_value.str();
      auto err = e.name == "duration" ? DurationLiteralError(lit) : TimestampLiteralError(lit);
      if (err) Error(*e.args[0], e.name + " validation failed: " + *err);
    }
    if (e.kind == ExprKind::kCall && e.name == "format" && e.operand &&
        e.operand->kind == ExprKind::kConst && e.operand->const_value.kind() == Kind::kString &&
        e.args.size() == 1 && e.args[0]->kind == ExprKind::kList) {
      auto ov = info_.overloads.find(e.id);
      bool is_format = ov == info_.overloads.end();
      if (!is_format) {
        for (const Overload* o : ov->second) is_format |= o->id == "string_format";
      }
      if (is_format) {
        std::vector<FormatArgType> args;
        for (const auto& a : e.args[0]->args) args.push_back(FormatArg(*a));
        if (auto err = ValidateFormat(e.operand->const_value.str(), args)) {
          const Expr& at =
              err->second >= 0 ? *e.args[0]->args[static_cast<size_t>(err->second)] : e;
          Error(at, err->first);
        }
      }
    }
    if (e.operand) ValidateFormatCalls(*e.operand);
    for (const auto& a : e.args) ValidateFormatCalls(*a);
    for (const auto& a : e.values) ValidateFormatCalls(*a);
    for (const Expr* c : {e.iter_range.get(), e.accu_init.get(), e.loop_cond.get(),
                          e.loop_step.get(), e.result.get()}) {
      if (c) ValidateFormatCalls(*c);
    }
  }

  FormatArgType FormatArg(const Expr& e) {
    FormatArgType t;
    auto it = info_.types.find(e.id);
    t.type = it == info_.types.end() ? Type::Dyn() : it->second;
    if (e.kind == ExprKind::kList) {
      t.is_list_literal = true;
      for (const auto& a : e.args) t.elems.push_back(FormatArg(*a));
    } else if (e.kind == ExprKind::kMap) {
      t.is_map_literal = true;
      for (size_t i = 0; i < e.args.size(); ++i) {
        t.elems.push_back(FormatArg(*e.args[i]));
        t.elems.push_back(FormatArg(*e.values[i]));
      }
    }
    return t;
  }

  Type NewVar() { return Type::Param("_var" + std::to_string(next_var_++)); }

  // Applies the substitution (following chains).
  Type Resolve(const Type& t, const Subst& s) const {
    if (t.k == Type::K::kParam) {
      auto it = s.find(t.name);
      if (it != s.end()) return Resolve(it->second, s);
      return t;
    }
    if (t.params.empty()) return t;
    Type out = t;
    for (auto& p : out.params) p = Resolve(p, s);
    return out;
  }

  // Final type: unbound variables become dyn.
  Type Finalize(const Type& t) const {
    Type r = Resolve(t, subst_);
    return Unparam(r);
  }
  static Type Unparam(Type t) {
    if (t.k == Type::K::kParam) return Type::Dyn();
    for (auto& p : t.params) p = Unparam(p);
    return t;
  }

  static bool Occurs(const std::string& var, const Type& t) {
    if (t.k == Type::K::kParam) return t.name == var;
    for (const auto& p : t.params) {
      if (Occurs(var, p)) return true;
    }
    return false;
  }

  bool Assignable(const Type& target0, const Type& actual0, Subst& s) const {
    Type target = target0.k == Type::K::kParam ? Resolve(target0, s) : target0;
    Type actual = actual0.k == Type::K::kParam ? Resolve(actual0, s) : actual0;
    if (target.k == Type::K::kParam) {
      if (actual.k == Type::K::kParam && actual.name == target.name) return true;
      if (Occurs(target.name, actual)) return false;
      s[target.name] = actual;
      return true;
    }
    if (actual.k == Type::K::kParam) {
      if (Occurs(actual.name, target)) return false;
      s[actual.name] = target;
      return true;
    }
    if (target.k == Type::K::kDyn || actual.k == Type::K::kDyn) return true;
    if (target.k == Type::K::kError || actual.k == Type::K::kError) return true;
    if (target.k != actual.k) return false;
    if (target.name != actual.name) return false;
    if (target.params.size() != actual.params.size()) return true;
    for (size_t i = 0; i < target.params.size(); ++i) {
      if (!Assignable(target.params[i], actual.params[i], s)) return false;
    }
    return true;
  }

  // cel-go mostGeneral: dyn wins, otherwise the first.
  Type MostGeneral(const Type& a, const Type& b) const {
    Type ra = Resolve(a, subst_), rb = Resolve(b, subst_);
    if (ra.k == Type::K::kDyn || ra.k == Type::K::kError) return ra;
    if (rb.k == Type::K::kDyn || rb.k == Type::K::kError) return rb;
    if (ra.k == Type::K::kParam) return rb;
    return ra;
  }

  void SetType(const Expr& e, Type t) { info_.types[e.id] = std::move(t); }
  Type GetType(const Expr& e) const {
    auto it = info_.types.find(e.id);
    return it == info_.types.end() ? Type::Error() : Resolve(it->second, subst_);
  }

  // Renames the type parameters of an overload signature to fresh variables.
  Type Fresh(const Type& t, std::map<std::string, Type>& renames) {
    if (t.k == Type::K::kParam) {
      auto it = renames.find(t.name);
      if (it != renames.end()) return it->second;
      Type v = NewVar();
      renames[t.name] = v;
      return v;
    }
    Type out = t;
    for (auto& p : out.params) p = Fresh(p, renames);
    return out;
  }

  static std::optional<std::string> QualifiedName(const Expr& e) {
    if (e.kind == ExprKind::kIdent) return e.name;
    if (e.kind == ExprKind::kSelect && !e.test_only) {
      auto prefix = QualifiedName(*e.operand);
      if (prefix) return *prefix + "." + e.name;
    }
    return std::nullopt;
  }

  bool InScope(const std::string& name) const {
    // Innermost scope first. (A reverse index loop: clang 14 cannot build ranges::reverse_view.)
    for (size_t i = scopes_.size(); i-- > 0;) {
      if (scopes_[i].count(name)) return true;
    }
    return false;
  }

  void CheckExpr(Expr& e) {
    switch (e.kind) {
      case ExprKind::kConst:
        SetType(e, ConstType(e.const_value));
        return;
      case ExprKind::kIdent:
        CheckIdent(e);
        return;
      case ExprKind::kSelect:
        CheckSelect(e);
        return;
      case ExprKind::kCall:
        CheckCall(e);
        return;
      case ExprKind::kList:
        CheckList(e);
        return;
      case ExprKind::kMap:
        CheckMap(e);
        return;
      case ExprKind::kComprehension:
        CheckComprehension(e);
        return;
    }
  }

  static Type ConstType(const Value& v) {
    switch (v.kind()) {
      case Kind::kNull:
        return Type::Null();
      case Kind::kBool:
        return Type::Bool();
      case Kind::kInt:
        return Type::Int();
      case Kind::kUint:
        return Type::Uint();
      case Kind::kDouble:
        return Type::Double();
      case Kind::kString:
        return Type::String();
      case Kind::kBytes:
        return Type::Bytes();
      default:
        return Type::Dyn();
    }
  }

  void CheckIdent(Expr& e) {
    std::string name = e.name;
    if (!name.empty() && name[0] == '.') name = name.substr(1);
    for (size_t i = scopes_.size(); i-- > 0;) {
      auto& scope = scopes_[i];
      auto f = scope.find(name);
      if (f != scope.end()) {
        SetType(e, f->second);
        return;
      }
    }
    if (const Type* t = env_.FindVariable(name)) {
      SetType(e, *t);
      return;
    }
    auto ti = TypeIdents().find(name);
    if (ti != TypeIdents().end()) {
      info_.type_idents[e.id] = name;
      SetType(e, Type::TypeOf(ti->second));
      return;
    }
    Error(e, "undeclared reference to '" + name + "' (in container '')");
    SetType(e, Type::Error());
  }

  void CheckSelect(Expr& e) {
    CheckExpr(*e.operand);
    Type op = GetType(*e.operand);
    Type result = SelectType(e, op);
    SetType(e, e.test_only ? Type::Bool() : result);
  }

  Type SelectType(const Expr& e, const Type& op) {
    if (op.k == Type::K::kOptional && !op.params.empty()) {
      // Selection on an optional value yields an optional (cel-go optional field selection).
      Type inner = SelectType(e, Resolve(op.params[0], subst_));
      return inner.k == Type::K::kError ? inner : Type::Optional(inner);
    }
    switch (op.k) {
      case Type::K::kDyn:
      case Type::K::kError:
      case Type::K::kParam:
        return Type::Dyn();
      case Type::K::kMap:
        return op.params[1];
      case Type::K::kObject: {
        const ObjectType* obj = env_.FindObjectType(op.name);
        if (obj) {
          auto f = obj->fields.find(e.name);
          if (f != obj->fields.end()) return f->second;
        }
        Error(e, "undefined field '" + e.name + "'");
        return Type::Error();
      }
      default:
        Error(e, "type '" + op.ToString() + "' does not support field selection");
        return Type::Error();
    }
  }

  void CheckList(Expr& e) {
    std::optional<Type> elem;
    std::set<int> optional(e.optional_indices.begin(), e.optional_indices.end());
    for (size_t i = 0; i < e.args.size(); ++i) {
      CheckExpr(*e.args[i]);
      Type t = GetType(*e.args[i]);
      if (optional.count(static_cast<int>(i))) {
        if (t.k == Type::K::kOptional) {
          t = t.params[0];
        } else if (t.k != Type::K::kDyn && t.k != Type::K::kError) {
          Error(*e.args[i],
                "type mismatch: expected 'optional_type' but found '" + t.ToString() + "'");
        }
      }
      elem = Join(*e.args[i], elem, t);
    }
    SetType(e, Type::List(elem ? *elem : NewVar()));
  }

  Type Join(const Expr& at, const std::optional<Type>& prev, const Type& cur) {
    if (!prev) return cur;
    (void)at;  // homogeneity is enforced by ValidateHomogeneous after checking
    if (Assignable(*prev, cur, subst_)) return MostGeneral(*prev, cur);
    return Type::Dyn();
  }

  void CheckMap(Expr& e) {
    std::optional<Type> kt, vt;
    std::set<int> optional(e.optional_indices.begin(), e.optional_indices.end());
    for (size_t i = 0; i < e.args.size(); ++i) {
      CheckExpr(*e.args[i]);
      CheckExpr(*e.values[i]);
      Type k = GetType(*e.args[i]);
      Type v = GetType(*e.values[i]);
      if (optional.count(static_cast<int>(i))) {
        if (v.k == Type::K::kOptional) {
          v = v.params[0];
        } else if (v.k != Type::K::kDyn && v.k != Type::K::kError) {
          Error(*e.values[i],
                "type mismatch: expected 'optional_type' but found '" + v.ToString() + "'");
        }
      }
      kt = Join(*e.args[i], kt, k);
      vt = Join(*e.values[i], vt, v);
    }
    SetType(e, Type::Map(kt ? *kt : NewVar(), vt ? *vt : NewVar()));
  }

  void CheckComprehension(Expr& e) {
    CheckExpr(*e.iter_range);
    CheckExpr(*e.accu_init);
    Type range = GetType(*e.iter_range);
    Type accu = GetType(*e.accu_init);
    Type v1 = Type::Dyn(), v2 = Type::Dyn();
    bool two = !e.iter_var2.empty();
    switch (range.k) {
      case Type::K::kList:
        if (two) {
          v1 = Type::Int();
          v2 = range.params[0];
        } else {
          v1 = range.params[0];
        }
        break;
      case Type::K::kMap:
        v1 = range.params[0];
        if (two) v2 = range.params[1];
        break;
      case Type::K::kDyn:
      case Type::K::kError:
      case Type::K::kParam:
        break;
      default:
        Error(*e.iter_range,
              "expression of type '" + range.ToString() +
                  "' cannot be range of a comprehension (must be list, map, or dynamic)");
    }
    scopes_.push_back({{e.accu_var, accu}});
    CheckExpr(*e.loop_cond);
    AssignOrError(*e.loop_cond, Type::Bool(), GetType(*e.loop_cond));
    scopes_.push_back({{e.iter_var, v1}});
    if (two) scopes_.back()[e.iter_var2] = v2;
    // Iteration variables are visible in the condition and step (cel-go scoping).
    CheckExpr(*e.loop_step);
    AssignOrError(*e.loop_step, accu, GetType(*e.loop_step));
    scopes_.pop_back();
    CheckExpr(*e.result);
    scopes_.pop_back();
    SetType(e, GetType(*e.result));
  }

  void AssignOrError(const Expr& at, const Type& want, const Type& got) {
    if (!Assignable(want, got, subst_)) {
      Error(at, "type mismatch: expected '" + Finalize(want).ToString() + "' but found '" +
                    Finalize(got).ToString() + "'");
    }
  }

  void CheckCall(Expr& e) {
    // Namespaced functions: rewrite `ns.fn(args)` into the global call "ns.fn".
    if (e.operand) {
      auto q = QualifiedName(*e.operand);
      if (q) {
        std::string root = q->substr(0, q->find('.'));
        std::string full = *q + "." + e.name;
        if (!InScope(root) && env_.FindFunction(full) != nullptr) {
          e.name = full;
          e.operand.reset();
        }
      }
    }
    if (e.operand) CheckExpr(*e.operand);
    for (auto& a : e.args) CheckExpr(*a);
    std::vector<Type> arg_types;
    if (e.operand) arg_types.push_back(GetType(*e.operand));
    for (auto& a : e.args) arg_types.push_back(GetType(*a));

    if (e.name == "_?._" && !e.operand && arg_types.size() == 2) {
      Type op = Resolve(arg_types[0], subst_);
      if (op.k == Type::K::kOptional && !op.params.empty()) op = Resolve(op.params[0], subst_);
      if (op.k != Type::K::kMap && op.k != Type::K::kDyn && op.k != Type::K::kObject &&
          op.k != Type::K::kParam && op.k != Type::K::kError) {
        Error(e, "type '" + Finalize(op).ToString() + "' does not support field selection");
        SetType(e, Type::Error());
        return;
      }
    }
    const std::vector<Overload>* fns = env_.FindFunction(e.name);
    if (fns == nullptr) {
      Error(e, "undeclared reference to '" + e.name + "' (in container '')");
      SetType(e, Type::Error());
      return;
    }
    bool member = e.operand != nullptr;
    std::vector<const Overload*> matched;
    std::optional<Type> result;
    Subst accepted = subst_;
    bool any_error_arg = false;
    for (const auto& t : arg_types) any_error_arg |= t.k == Type::K::kError;
    for (const Overload& o : *fns) {
      if (o.member != member || o.args.size() != arg_types.size()) continue;
      Subst trial = subst_;
      std::map<std::string, Type> renames;
      bool ok = true;
      for (size_t i = 0; i < arg_types.size() && ok; ++i) {
        ok = Assignable(Fresh(o.args[i], renames), arg_types[i], trial);
      }
      if (!ok) continue;
      Type r = Resolve(Fresh(o.result, renames), trial);
      matched.push_back(&o);
      if (!result) {
        result = r;
        accepted = trial;
      } else if (!(Finalize(*result) == Finalize(r))) {
        result = Type::Dyn();
      }
    }
    if (matched.empty()) {
      if (!any_error_arg) {
        std::string sig;
        for (size_t i = (member ? 1 : 0); i < arg_types.size(); ++i) {
          if (!sig.empty()) sig += ", ";
          sig += Finalize(arg_types[i]).ToString();
        }
        std::string display = e.name;
        if (member) {
          Error(e, "found no matching overload for '" + display + "' applied to '" +
                       Finalize(arg_types[0]).ToString() + ".(" + sig + ")'");
        } else {
          Error(e, "found no matching overload for '" + display + "' applied to '(" + sig + ")'");
        }
      }
      SetType(e, Type::Error());
      return;
    }
    if (matched.size() == 1) subst_ = accepted;
    info_.overloads[e.id] = std::move(matched);
    SetType(e, *result);
  }

  const Env& env_;
  Ast& ast_;
  CheckedInfo& info_;
  Issues& issues_;
  Subst subst_;
  int next_var_ = 0;
  std::vector<std::map<std::string, Type>> scopes_;
};

}  // namespace

bool Check(const Env& env, Ast& ast, CheckedInfo& info, Issues& issues) {
  Checker c(env, ast, info, issues);
  return c.Run();
}

}  // namespace draco::cel
