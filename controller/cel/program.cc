#include "controller/cel/program.h"

#include <cmath>
#include <map>
#include <set>

#include <re2/re2.h>

#include "controller/cel/regex.h"
#include "controller/cel/stdlib.h"

namespace draco::cel {

// ---- nodes ----------------------------------------------------------------------------------

class Node {
 public:
  explicit Node(int64_t id) : id_(id) {}
  virtual ~Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;
  virtual Value Eval(EvalContext& ctx) const = 0;
  // Non-null for constant nodes.
  virtual const Value* ConstValue() const { return nullptr; }
  int64_t id() const { return id_; }

 private:
  int64_t id_;
};

Program::~Program() = default;

namespace {

using NodePtr = std::unique_ptr<const Node>;

Value Cancelled() { return Value::Error("operation cancelled: actual cost limit exceeded"); }

class ConstNode final : public Node {
 public:
  ConstNode(int64_t id, Value v) : Node(id), v_(std::move(v)) {}
  Value Eval(EvalContext&) const override { return v_; }
  const Value* ConstValue() const override { return &v_; }

 private:
  Value v_;
};

// A variable or comprehension variable: costs 1 (cel-go SelectAndIdentCost).
class SlotNode final : public Node {
 public:
  SlotNode(int64_t id, size_t slot) : Node(id), slot_(slot) {}
  Value Eval(EvalContext& ctx) const override {
    ctx.AddCost(1);
    return ctx.slot(slot_);
  }
  size_t slot() const { return slot_; }

 private:
  size_t slot_;
};

// A comprehension accumulator, initialised lazily on first reference as cel-go's folder does.
class AccuNode final : public Node {
 public:
  AccuNode(int64_t id, size_t slot, size_t flag_slot, const Node* init)
      : Node(id), slot_(slot), flag_slot_(flag_slot), init_(init) {}
  Value Eval(EvalContext& ctx) const override {
    ctx.AddCost(1);
    return Get(ctx);
  }
  Value Get(EvalContext& ctx) const {
    if (ctx.slot(flag_slot_).kind() != Kind::kBool) {
      ctx.slot(flag_slot_) = Value::Bool(true);
      ctx.slot(slot_) = init_->Eval(ctx);
    }
    return ctx.slot(slot_);
  }

 private:
  size_t slot_;
  size_t flag_slot_;
  const Node* init_;
};

// ---- attribute chains: ident/expr followed by field selections and indexes -----------------

struct Qualifier {
  enum class K : uint8_t { kConst, kNode, kAttr } k = K::kConst;
  Value key;                   // kConst
  const Node* node = nullptr;  // kNode / kAttr (owned by ChainNode::owned_)
  bool optional = false;       // `.?` / `[?]`
  bool field = false;          // a field selection (string key)
};

Value ApplyQualifier(const Value& obj, const Value& key, bool field) {
  switch (obj.kind()) {
    case Kind::kError:
      return obj;
    case Kind::kOptional: {
      // Qualifying an optional value: none stays none, a missing key becomes none.
      if (obj.optional_value() == nullptr) return obj;
      const Value& inner = *obj.optional_value();
      if (inner.kind() == Kind::kMap) {
        const Value* v = inner.map().Find(key);
        return v ? Value::Optional(*v) : Value::Optional(std::nullopt);
      }
      Value v = ApplyQualifier(inner, key, field);
      return v.IsError() ? v : Value::Optional(v);
    }
    case Kind::kMap: {
      if (!field &&
          !(key.kind() == Kind::kString || key.kind() == Kind::kInt || key.kind() == Kind::kUint ||
            key.kind() == Kind::kBool || key.kind() == Kind::kDouble)) {
        return Value::Error("unsupported key type");
      }
      const Value* v = obj.map().Find(key);
      if (v == nullptr) return NoSuchKey(key);
      return *v;
    }
    case Kind::kList: {
      if (field) return Value::Error("unsupported index type 'string' in list");
      int64_t idx;
      if (key.kind() == Kind::kInt) {
        idx = key.int_value();
      } else if (key.kind() == Kind::kUint) {
        if (key.uint_value() > static_cast<uint64_t>(INT64_MAX)) {
          return Value::Error("index out of range: " + std::to_string(key.uint_value()));
        }
        idx = static_cast<int64_t>(key.uint_value());
      } else if (key.kind() == Kind::kDouble) {
        double d = key.double_value();
        if (d != std::trunc(d) || !std::isfinite(d)) {
          return Value::Error("unsupported index value " + key.DebugString() + " in list");
        }
        idx = static_cast<int64_t>(d);
      } else {
        return Value::Error("unsupported index type '" + key.TypeName() + "' in list");
      }
      if (idx < 0 || static_cast<uint64_t>(idx) >= obj.list().size()) {
        return Value::Error("index out of bounds: " + std::to_string(idx));
      }
      return obj.list().Get(static_cast<size_t>(idx));
    }
    default:
      if (field) return Value::Error("no such key: " + key.str());
      return Value::Error("no such key: " + key.DebugString());
  }
}

// Presence test for has(obj.field).
Value PresenceTest(const Value& obj, const Value& key) {
  switch (obj.kind()) {
    case Kind::kError:
      return obj;
    case Kind::kMap:
      return Value::Bool(obj.map().Find(key) != nullptr);
    default:
      return Value::Error("invalid type for field selection.");
  }
}

class ChainNode final : public Node {
 public:
  ChainNode(int64_t id, bool root_is_slot, size_t slot, NodePtr root)
      : Node(id), root_is_slot_(root_is_slot), slot_(slot), root_(std::move(root)) {}

  void AddConst(Value key, bool field, bool optional) {
    Qualifier q;
    q.k = Qualifier::K::kConst;
    q.key = std::move(key);
    q.field = field;
    q.optional = optional;
    quals_.push_back(std::move(q));
  }
  void AddNode(NodePtr n, bool attr, bool optional) {
    Qualifier q;
    q.k = attr ? Qualifier::K::kAttr : Qualifier::K::kNode;
    q.node = n.get();
    q.optional = optional;
    owned_.push_back(std::move(n));
    quals_.push_back(std::move(q));
  }
  void SetTestOnly() { test_only_ = true; }
  bool test_only() const { return test_only_; }
  bool has_quals() const { return !quals_.empty(); }

  Value Eval(EvalContext& ctx) const override { return Run(ctx, false); }

  // Evaluates with or without charging the root's own cost (a chain used as an index qualifier
  // is not charged for its root, as in cel-go's attribute qualifiers).
  Value Run(EvalContext& ctx, bool skip_root_cost) const {
    Value obj;
    if (root_is_slot_) {
      obj = ctx.slot(slot_);
    } else if (const auto* accu = dynamic_cast<const AccuNode*>(root_.get())) {
      obj = accu->Get(ctx);
    } else {
      obj = root_->Eval(ctx);
      if (ctx.cancelled()) return Cancelled();
    }
    if (!skip_root_cost && !test_only_) ctx.AddCost(1);
    if (obj.IsError()) return obj;
    bool in_optional = false;
    for (size_t i = 0; i < quals_.size(); ++i) {
      const Qualifier& q = quals_[i];
      Value key;
      if (q.k == Qualifier::K::kConst) {
        key = q.key;
      } else if (q.k == Qualifier::K::kAttr) {
        key = static_cast<const ChainNode*>(q.node)->Run(ctx, true);
      } else {
        key = q.node->Eval(ctx);
      }
      if (ctx.cancelled()) return Cancelled();
      bool last = i + 1 == quals_.size();
      if (key.IsError()) {
        ctx.AddCost(1);
        return key;
      }
      if (in_optional) {
        if (obj.kind() == Kind::kOptional) {
          if (obj.optional_value() == nullptr) return obj;  // none stays none; not charged
          obj = *obj.optional_value();
        }
      }
      if (q.optional || in_optional) {
        if (obj.kind() == Kind::kOptional && !in_optional) {
          if (obj.optional_value() == nullptr) return obj;
          obj = *obj.optional_value();
        }
        in_optional = true;
        Value v = ApplyQualifierOptional(obj, key, q.field);
        if (v.IsError()) {
          ctx.AddCost(1);
          return v;
        }
        ctx.AddCost(1);
        obj = std::move(v);
        continue;
      }
      if (last && test_only_) {
        ctx.AddCost(1);
        return PresenceTest(obj, key);
      }
      Value v = ApplyQualifier(obj, key, q.field);
      ctx.AddCost(1);
      if (v.IsError()) return v;
      obj = std::move(v);
    }
    return obj;
  }

 private:
  static Value ApplyQualifierOptional(const Value& obj, const Value& key, bool field) {
    if (obj.kind() == Kind::kMap) {
      const Value* v = obj.map().Find(key);
      return v ? Value::Optional(*v) : Value::Optional(std::nullopt);
    }
    if (obj.kind() == Kind::kList) {
      Value v = ApplyQualifier(obj, key, field);
      if (v.IsError()) {
        if (v.error_message().rfind("index out of bounds", 0) == 0) {
          return Value::Optional(std::nullopt);
        }
        return v;
      }
      return Value::Optional(v);
    }
    return ApplyQualifier(obj, key, field);
  }

  bool root_is_slot_;
  size_t slot_;
  NodePtr root_;
  std::vector<Qualifier> quals_;
  std::vector<NodePtr> owned_;
  bool test_only_ = false;
};

// ---- logic ------------------------------------------------------------------------------------

class LogicNode final : public Node {
 public:
  LogicNode(int64_t id, bool is_and, NodePtr a, NodePtr b)
      : Node(id), and_(is_and), a_(std::move(a)), b_(std::move(b)) {}
  Value Eval(EvalContext& ctx) const override {
    Value err;
    bool have_err = false;
    for (const Node* n : {a_.get(), b_.get()}) {
      Value v = n->Eval(ctx);
      if (ctx.cancelled()) return Cancelled();
      if (v.IsBool()) {
        if (v.bool_value() != and_) return v;
        continue;
      }
      if (!have_err) {
        have_err = true;
        err = v.IsError() ? v : NoSuchOverload(and_ ? "_&&_" : "_||_");
      }
    }
    if (have_err) return err;
    return Value::Bool(and_);
  }

 private:
  bool and_;
  NodePtr a_, b_;
};

class TernaryNode final : public Node {
 public:
  TernaryNode(int64_t id, NodePtr c, NodePtr t, NodePtr f)
      : Node(id), c_(std::move(c)), t_(std::move(t)), f_(std::move(f)) {}
  Value Eval(EvalContext& ctx) const override {
    Value c = c_->Eval(ctx);
    if (ctx.cancelled()) return Cancelled();
    if (c.IsError()) return c;
    if (!c.IsBool()) return NoSuchOverload("_?_:_");
    return c.bool_value() ? t_->Eval(ctx) : f_->Eval(ctx);
  }

 private:
  NodePtr c_, t_, f_;
};

// `opt.orValue(v)` / `opt.or(o)`: cel-go special-cases these to short-circuit the right-hand side;
// the node itself has no cost.
class OptionalOrNode final : public Node {
 public:
  OptionalOrNode(int64_t id, bool or_value, NodePtr lhs, NodePtr rhs)
      : Node(id), or_value_(or_value), lhs_(std::move(lhs)), rhs_(std::move(rhs)) {}
  Value Eval(EvalContext& ctx) const override {
    Value l = lhs_->Eval(ctx);
    if (ctx.cancelled()) return Cancelled();
    if (l.IsError()) return l;
    if (l.kind() != Kind::kOptional) return Value::Error("no such overload");
    if (l.optional_value() != nullptr) return or_value_ ? *l.optional_value() : l;
    return rhs_->Eval(ctx);
  }

 private:
  bool or_value_;
  NodePtr lhs_, rhs_;
};

// ---- calls ------------------------------------------------------------------------------------

class CallNode final : public Node {
 public:
  CallNode(int64_t id, std::string function, std::vector<const Overload*> overloads,
           std::vector<NodePtr> args, bool non_strict)
      : Node(id),
        function_(std::move(function)),
        overloads_(std::move(overloads)),
        args_(std::move(args)),
        non_strict_(non_strict) {}

  Value Eval(EvalContext& ctx) const override {
    Value local[4];
    std::vector<Value> heap;
    Value* vals = local;
    if (args_.size() > 4) {
      heap.resize(args_.size());
      vals = heap.data();
    }
    for (size_t i = 0; i < args_.size(); ++i) {
      vals[i] = args_[i]->Eval(ctx);
      if (ctx.cancelled()) return Cancelled();
    }
    // Resolve the overload once: it both runs the call and prices it (cel-go costs by the
    // dispatched overload id).
    const Overload* chosen = nullptr;
    for (const Overload* o : overloads_) {
      bool ok = true;
      for (size_t i = 0; i < args_.size() && ok; ++i) ok = RuntimeAssignable(o->args[i], vals[i]);
      if (ok) {
        chosen = o;
        break;
      }
    }
    Value result;
    bool arg_error = false;
    if (!non_strict_) {
      for (size_t i = 0; i < args_.size(); ++i) {
        if (vals[i].IsError()) {
          result = vals[i];
          arg_error = true;
          break;
        }
      }
    }
    if (!arg_error) {
      if (non_strict_ && !overloads_.empty()) {
        result = overloads_[0]->impl(vals, ctx);
      } else if (chosen != nullptr) {
        result = chosen->impl(vals, ctx);
      } else {
        result = NoSuchOverload(function_);
      }
    }
    if (ctx.cancelled()) return Cancelled();
    const Overload* priced = chosen ? chosen : (overloads_.empty() ? nullptr : overloads_[0]);
    ctx.AddCost(priced == nullptr || priced->cost == nullptr
                    ? 1
                    : priced->cost(vals, args_.size(), result));
    return result;
  }

 private:
  std::string function_;
  std::vector<const Overload*> overloads_;
  std::vector<NodePtr> args_;
  bool non_strict_;

 public:
  bool AllArgsConst() const {
    if (args_.empty()) return false;
    for (const auto& a : args_) {
      if (a->ConstValue() == nullptr) return false;
    }
    return true;
  }
};

// A call on constant arguments folded at plan time: returns the precomputed value and charges the
// call's runtime cost, so costs match an unfolded evaluation.
class FoldedCallNode final : public Node {
 public:
  FoldedCallNode(int64_t id, Value v, uint64_t cost) : Node(id), v_(std::move(v)), cost_(cost) {}
  Value Eval(EvalContext& ctx) const override {
    ctx.AddCost(cost_);
    return v_;
  }

 private:
  Value v_;
  uint64_t cost_;
};

// `x in <constant list>`: cel-go's set-membership optimisation (costs nothing itself).
class SetMembershipNode final : public Node {
 public:
  SetMembershipNode(int64_t id, NodePtr arg, Value list)
      : Node(id), arg_(std::move(arg)), list_(std::move(list)) {}
  Value Eval(EvalContext& ctx) const override {
    Value v = arg_->Eval(ctx);
    if (ctx.cancelled()) return Cancelled();
    if (v.IsError()) return v;
    for (const Value& e : list_.list().elems()) {
      if (ValueEquals(e, v)) return Value::Bool(true);
    }
    return Value::Bool(false);
  }

 private:
  NodePtr arg_;
  Value list_;
};

class MatchesConstNode final : public Node {
 public:
  MatchesConstNode(int64_t id, NodePtr target, std::unique_ptr<RE2> re, uint64_t pattern_size,
                   bool find_mode)
      : Node(id),
        target_(std::move(target)),
        re_(std::move(re)),
        pattern_size_(pattern_size),
        find_(find_mode) {}
  Value Eval(EvalContext& ctx) const override {
    Value s = target_->Eval(ctx);
    if (ctx.cancelled()) return Cancelled();
    uint64_t str_cost = static_cast<uint64_t>(
        std::ceil((1.0 + static_cast<double>(ActualSize(s))) * kStringTraversalCostFactor));
    uint64_t re_cost = static_cast<uint64_t>(
        std::ceil(static_cast<double>(pattern_size_) * kRegexStringLengthCostFactor));
    ctx.AddCost(str_cost * re_cost);
    if (s.IsError()) return s;
    if (s.kind() != Kind::kString) return NoSuchOverload(find_ ? "find" : "matches");
    if (find_) return RegexFind(*re_, s.str());
    return Value::Bool(RE2::PartialMatch(s.str(), *re_));
  }

 private:
  NodePtr target_;
  std::unique_ptr<RE2> re_;
  uint64_t pattern_size_;
  bool find_;
};

class ListNode final : public Node {
 public:
  ListNode(int64_t id, std::vector<NodePtr> elems, std::set<int> optional)
      : Node(id), elems_(std::move(elems)), optional_(std::move(optional)) {}
  Value Eval(EvalContext& ctx) const override {
    std::vector<Value> out;
    out.reserve(elems_.size());
    for (size_t i = 0; i < elems_.size(); ++i) {
      Value v = elems_[i]->Eval(ctx);
      if (ctx.cancelled()) return Cancelled();
      if (v.IsError()) {
        ctx.AddCost(kListCreateBaseCost);
        return v;
      }
      if (optional_.count(static_cast<int>(i))) {
        if (v.kind() != Kind::kOptional) {
          ctx.AddCost(kListCreateBaseCost);
          return NoSuchOverload("optional element");
        }
        if (v.optional_value()) out.push_back(*v.optional_value());
        continue;
      }
      out.push_back(std::move(v));
    }
    ctx.AddCost(kListCreateBaseCost);
    return Value::List(std::move(out));
  }

 private:
  std::vector<NodePtr> elems_;
  std::set<int> optional_;
};

bool ValidMapKey(const Value& k) {
  return k.kind() == Kind::kString || k.kind() == Kind::kInt || k.kind() == Kind::kUint ||
         k.kind() == Kind::kBool;
}

class MapNode final : public Node {
 public:
  MapNode(int64_t id, std::vector<NodePtr> keys, std::vector<NodePtr> values,
          std::set<int> optional)
      : Node(id),
        keys_(std::move(keys)),
        values_(std::move(values)),
        optional_(std::move(optional)) {}
  Value Eval(EvalContext& ctx) const override {
    Value r = Build(ctx);
    ctx.AddCost(kMapCreateBaseCost);
    return r;
  }

  Value Build(EvalContext& ctx) const {
    std::vector<std::pair<Value, Value>> entries;
    for (size_t i = 0; i < keys_.size(); ++i) {
      Value k = keys_[i]->Eval(ctx);
      if (ctx.cancelled()) return Cancelled();
      if (k.IsError()) return k;
      Value v = values_[i]->Eval(ctx);
      if (ctx.cancelled()) return Cancelled();
      if (v.IsError()) return v;
      if (!ValidMapKey(k)) return Value::Error("unsupported key type");
      if (optional_.count(static_cast<int>(i))) {
        if (v.kind() != Kind::kOptional) return NoSuchOverload("optional entry");
        if (!v.optional_value()) continue;
        v = *v.optional_value();
      }
      for (const auto& e : entries) {
        if (ValueEquals(e.first, k)) {
          return Value::Error("Failed with repeated key");
        }
      }
      entries.emplace_back(std::move(k), std::move(v));
    }
    return Value::Map(std::make_shared<const MapValueImpl>(std::move(entries)));
  }

 private:
  std::vector<NodePtr> keys_, values_;
  std::set<int> optional_;
};

// A comprehension (fold). Slots: iter var(s), accumulator, accumulator-initialised flag.
class ComprehensionNode final : public Node {
 public:
  ComprehensionNode(int64_t id, NodePtr range, NodePtr init, NodePtr cond, NodePtr step,
                    NodePtr result, size_t iter_slot, size_t iter_slot2, bool two_var,
                    size_t accu_slot, size_t flag_slot, bool append_step)
      : Node(id),
        range_(std::move(range)),
        init_(std::move(init)),
        cond_(std::move(cond)),
        step_(std::move(step)),
        result_(std::move(result)),
        iter_slot_(iter_slot),
        iter_slot2_(iter_slot2),
        two_var_(two_var),
        accu_slot_(accu_slot),
        flag_slot_(flag_slot),
        append_step_(append_step) {}

  const Node* init() const { return init_.get(); }

  Value Eval(EvalContext& ctx) const override {
    Value range = range_->Eval(ctx);
    if (ctx.cancelled()) return Cancelled();
    if (range.IsError()) return range;
    // Save slots so nested/recursive use of the same comprehension node is safe.
    Value saved_flag = ctx.slot(flag_slot_);
    Value saved_accu = ctx.slot(accu_slot_);
    ctx.slot(flag_slot_) = Value();
    Value r = Fold(range, ctx);
    ctx.slot(flag_slot_) = std::move(saved_flag);
    ctx.slot(accu_slot_) = std::move(saved_accu);
    return r;
  }

 private:
  Value Fold(const Value& range, EvalContext& ctx) const {
    size_t n;
    if (range.kind() == Kind::kList) {
      n = range.list().size();
    } else if (range.kind() == Kind::kMap) {
      n = range.map().size();
    } else {
      if (two_var_)
        return Value::Error("unsupported comprehension range type: " + range.TypeName());
      return Value::Error("got '" + range.TypeName() + "', expected iterable type");
    }
    for (size_t i = 0; i < n; ++i) {
      if (range.kind() == Kind::kList) {
        if (two_var_) {
          ctx.slot(iter_slot_) = Value::Int(static_cast<int64_t>(i));
          ctx.slot(iter_slot2_) = range.list().Get(i);
        } else {
          ctx.slot(iter_slot_) = range.list().Get(i);
        }
      } else {
        ctx.slot(iter_slot_) = range.map().KeyAt(i);
        if (two_var_) ctx.slot(iter_slot2_) = range.map().ValueAt(i);
      }
      Value c = cond_->Eval(ctx);
      if (ctx.cancelled()) return Cancelled();
      if (c.IsBool() && !c.bool_value()) break;
      if (!c.IsBool()) break;
      Value next = step_->Eval(ctx);
      if (ctx.cancelled()) return Cancelled();
      ctx.slot(flag_slot_) = Value::Bool(true);
      ctx.slot(accu_slot_) = std::move(next);
    }
    Value r = result_->Eval(ctx);
    if (ctx.cancelled()) return Cancelled();
    return r;
  }

  NodePtr range_, init_, cond_, step_, result_;
  size_t iter_slot_, iter_slot2_;
  bool two_var_;
  size_t accu_slot_, flag_slot_;
  bool append_step_;
};

// `@result + [e]` inside a comprehension: appends in place when the accumulator list is not shared,
// avoiding quadratic copying. Costs exactly what the generic nodes would: accu ident 1, list
// literal 10 (+ element), add 1.
class AccuAppendNode final : public Node {
 public:
  AccuAppendNode(int64_t id, NodePtr accu_owner, NodePtr elem, size_t slot)
      : Node(id), accu_owner_(std::move(accu_owner)), elem_(std::move(elem)), slot_(slot) {}
  Value Eval(EvalContext& ctx) const override {
    Value cur = accu_owner_->Eval(ctx);  // charges 1
    if (ctx.cancelled()) return Cancelled();
    Value e = elem_->Eval(ctx);
    if (ctx.cancelled()) return Cancelled();
    ctx.AddCost(kListCreateBaseCost);
    if (e.IsError()) {
      ctx.AddCost(1);
      return cur.IsError() ? cur : e;
    }
    ctx.AddCost(1);
    if (cur.IsError()) return cur;
    if (cur.kind() != Kind::kList) return NoSuchOverload("_+_");
    // Drop our reference held in the slot so the list may be uniquely owned.
    ctx.slot(slot_) = Value();
    std::shared_ptr<const ListValue> lp = cur.list_ptr();
    cur = Value();
    if (lp.use_count() == 1) {
      auto* mutable_list = const_cast<ListValue*>(lp.get());
      AppendTo(*mutable_list, std::move(e));
      return Value::List(std::move(lp));
    }
    std::vector<Value> elems = lp->elems();
    elems.push_back(std::move(e));
    return Value::List(std::move(elems));
  }

 private:
  static void AppendTo(ListValue& l, Value v) {
    auto& elems = const_cast<std::vector<Value>&>(l.elems());
    elems.push_back(std::move(v));
  }
  NodePtr accu_owner_;
  NodePtr elem_;
  size_t slot_;
};

}  // namespace

// ---- planner ----------------------------------------------------------------------------------

class Planner {
 public:
  Planner(const CheckedInfo& info, std::string& error) : info_(info), error_(error) {}

  NodePtr Plan(const Expr& e) {
    switch (e.kind) {
      case ExprKind::kConst:
        return std::make_unique<ConstNode>(e.id, e.const_value);
      case ExprKind::kIdent:
        return PlanIdent(e);
      case ExprKind::kSelect:
        return PlanSelect(e);
      case ExprKind::kCall:
        return PlanCall(e);
      case ExprKind::kList:
        return PlanList(e);
      case ExprKind::kMap:
        return PlanMap(e);
      case ExprKind::kComprehension:
        return PlanComprehension(e);
    }
    return nullptr;
  }

  size_t slot_count() const { return next_slot_; }
  std::vector<std::string> variables() const { return variables_; }

  void ReserveVariables(const Expr& root) { CollectVariables(root, {}); }

 private:
  struct Scope {
    std::string name;
    size_t slot;
    const AccuNode* accu = nullptr;  // set for accumulators
    size_t flag_slot = 0;
    const Node* init = nullptr;
  };

  void CollectVariables(const Expr& e, std::set<std::string> bound) {
    if (e.kind == ExprKind::kIdent && !info_.type_idents.count(e.id) && !bound.count(e.name)) {
      std::string name = e.name[0] == '.' ? e.name.substr(1) : e.name;
      bool known = false;
      for (const auto& v : variables_) known |= v == name;
      if (!known) {
        variables_.push_back(name);
        var_slots_[name] = next_slot_++;
      }
    }
    if (e.operand) CollectVariables(*e.operand, bound);
    for (const auto& a : e.args) CollectVariables(*a, bound);
    for (const auto& a : e.values) CollectVariables(*a, bound);
    if (e.kind == ExprKind::kComprehension) {
      CollectVariables(*e.iter_range, bound);
      CollectVariables(*e.accu_init, bound);
      std::set<std::string> inner = bound;
      inner.insert(e.accu_var);
      CollectVariables(*e.result, inner);
      inner.insert(e.iter_var);
      if (!e.iter_var2.empty()) inner.insert(e.iter_var2);
      CollectVariables(*e.loop_cond, inner);
      CollectVariables(*e.loop_step, inner);
    }
  }

  const Scope* Lookup(const std::string& name) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      if (it->name == name) return &*it;
    }
    return nullptr;
  }

  NodePtr PlanIdent(const Expr& e) {
    auto ti = info_.type_idents.find(e.id);
    if (ti != info_.type_idents.end())
      return std::make_unique<ConstNode>(e.id, Value::Type(ti->second));
    if (const Scope* s = Lookup(e.name)) {
      if (s->init != nullptr) {
        return std::make_unique<AccuNode>(e.id, s->slot, s->flag_slot, s->init);
      }
      return std::make_unique<SlotNode>(e.id, s->slot);
    }
    std::string name = e.name[0] == '.' ? e.name.substr(1) : e.name;
    return std::make_unique<SlotNode>(e.id, var_slots_.at(name));
  }

  // Starts (or extends) an attribute chain for `operand`.
  std::unique_ptr<ChainNode> ChainFor(const Expr& operand, int64_t id) {
    NodePtr op = Plan(operand);
    if (auto* chain = dynamic_cast<const ChainNode*>(op.get()); chain && !chain->test_only()) {
      return std::unique_ptr<ChainNode>(
          const_cast<ChainNode*>(static_cast<const ChainNode*>(op.release())));
    }
    if (auto* slot = dynamic_cast<const SlotNode*>(op.get())) {
      return std::make_unique<ChainNode>(id, true, slot->slot(), nullptr);
    }
    return std::make_unique<ChainNode>(id, false, 0, std::move(op));
  }

  NodePtr PlanSelect(const Expr& e) {
    auto chain = ChainFor(*e.operand, e.id);
    chain->AddConst(Value::String(e.name), true, false);
    if (e.test_only) chain->SetTestOnly();
    return chain;
  }

  NodePtr PlanIndex(const Expr& e, bool optional) {
    auto chain = ChainFor(*e.args[0], e.id);
    NodePtr idx = Plan(*e.args[1]);
    if (const Value* c = idx->ConstValue()) {
      if (c->kind() == Kind::kList || c->kind() == Kind::kMap) {
        error_ = std::string("program instantiation failed: invalid qualifier type: ") +
                 (c->kind() == Kind::kList ? "*types.baseList" : "*types.baseMap");
        return nullptr;
      }
      chain->AddConst(*c, optional && c->kind() == Kind::kString && false, optional);
    } else {
      bool attr = dynamic_cast<const ChainNode*>(idx.get()) != nullptr &&
                  !static_cast<const ChainNode*>(idx.get())->test_only();
      if (auto* slot = dynamic_cast<const SlotNode*>(idx.get())) {
        auto c2 = std::make_unique<ChainNode>(idx->id(), true, slot->slot(), nullptr);
        idx = std::move(c2);
        attr = true;
      }
      chain->AddNode(std::move(idx), attr, optional);
    }
    return chain;
  }

  NodePtr PlanCall(const Expr& e) {
    const std::string& fn = e.name;
    if (!e.operand) {
      if (fn == "_&&_" || fn == "_||_") {
        return std::make_unique<LogicNode>(e.id, fn == "_&&_", Plan(*e.args[0]), Plan(*e.args[1]));
      }
      if (fn == "_?_:_") {
        return std::make_unique<TernaryNode>(e.id, Plan(*e.args[0]), Plan(*e.args[1]),
                                             Plan(*e.args[2]));
      }
      if (fn == "_[_]") return PlanIndex(e, false);
      if (fn == "_[?_]") return PlanIndex(e, true);
      if (fn == "_?._") {
        auto chain = ChainFor(*e.args[0], e.id);
        chain->AddConst(e.args[1]->const_value, true, true);
        return chain;
      }
    }
    std::vector<NodePtr> args;
    if (e.operand) args.push_back(Plan(*e.operand));
    for (const auto& a : e.args) args.push_back(Plan(*a));
    for (const auto& a : args) {
      if (!a) return nullptr;
    }
    auto ov = info_.overloads.find(e.id);
    std::vector<const Overload*> overloads;
    if (ov != info_.overloads.end()) overloads = ov->second;

    if ((fn == "orValue" || fn == "or") && e.operand && args.size() == 2 && overloads.size() == 1 &&
        (overloads[0]->id == "optional_orValue_value" ||
         overloads[0]->id == "optional_or_optional")) {
      return std::make_unique<OptionalOrNode>(e.id, fn == "orValue", std::move(args[0]),
                                              std::move(args[1]));
    }

    if (fn == "@in" && args.size() == 2 && args[1]->ConstValue() &&
        args[1]->ConstValue()->kind() == Kind::kList && AllPrimitive(*args[1]->ConstValue())) {
      Value list = *args[1]->ConstValue();
      if (list.list().size() == 0) return std::make_unique<ConstNode>(e.id, Value::Bool(false));
      return std::make_unique<SetMembershipNode>(e.id, std::move(args[0]), list);
    }
    if ((fn == "matches" || fn == "find") && args.size() == 2 && args[1]->ConstValue() &&
        args[1]->ConstValue()->kind() == Kind::kString) {
      const std::string& pattern = args[1]->ConstValue()->str();
      auto re = CompileRegex(pattern);
      if (!re) {
        error_ = "invalid regular expression: " + pattern;
        return nullptr;
      }
      return std::make_unique<MatchesConstNode>(e.id, std::move(args[0]), std::move(re),
                                                ActualSize(*args[1]->ConstValue()), fn == "find");
    }
    bool non_strict = fn == "@not_strictly_false";
    bool conversion =
        !e.operand && args.size() == 1 && IsConversion(fn) && args[0]->ConstValue() != nullptr;
    auto call =
        std::make_unique<CallNode>(e.id, fn, std::move(overloads), std::move(args), non_strict);
    if (conversion) {
      // cel-go folds conversions of constants at plan time; a failure is a compile error.
      std::vector<Value> slots(1);
      EvalContext ctx(slots.data(), 0);
      Value v = call->Eval(ctx);
      if (v.IsError()) {
        error_ = "program instantiation failed: " + v.error_message();
        return nullptr;
      }
      return std::make_unique<ConstNode>(e.id, v);
    }
    if (CanFold(fn, *call)) {
      std::vector<Value> slots(1);
      EvalContext ctx(slots.data(), 0);
      Value v = call->Eval(ctx);
      if (!v.IsError()) return std::make_unique<FoldedCallNode>(e.id, std::move(v), ctx.cost());
    }
    return call;
  }

  // Calls whose arguments are all plain constants are evaluated once at plan time (all functions
  // are pure). lists.range is excluded: its result size is bounded only by the runtime cost limit.
  static bool CanFold(const std::string& fn, const CallNode& call) {
    if (fn == "lists.range" || fn == "@not_strictly_false") return false;
    return call.AllArgsConst();
  }

  static bool IsConversion(const std::string& fn) {
    return fn == "int" || fn == "uint" || fn == "double" || fn == "string" || fn == "bytes" ||
           fn == "bool" || fn == "dyn" || fn == "type" || fn == "duration" || fn == "timestamp";
  }

  static bool AllPrimitive(const Value& list) {
    for (const Value& v : list.list().elems()) {
      switch (v.kind()) {
        case Kind::kBool:
        case Kind::kInt:
        case Kind::kUint:
        case Kind::kDouble:
        case Kind::kString:
          break;
        default:
          return false;
      }
    }
    return true;
  }

  NodePtr PlanList(const Expr& e) {
    std::vector<NodePtr> elems;
    bool all_const = e.optional_indices.empty();
    for (const auto& a : e.args) {
      elems.push_back(Plan(*a));
      if (!elems.back()) return nullptr;
      all_const &= elems.back()->ConstValue() != nullptr;
    }
    if (all_const) {
      std::vector<Value> vals;
      for (const auto& n : elems) vals.push_back(*n->ConstValue());
      return std::make_unique<ConstNode>(e.id, Value::List(std::move(vals)));
    }
    return std::make_unique<ListNode>(
        e.id, std::move(elems),
        std::set<int>(e.optional_indices.begin(), e.optional_indices.end()));
  }

  NodePtr PlanMap(const Expr& e) {
    std::vector<NodePtr> keys, values;
    bool all_const = e.optional_indices.empty();
    for (size_t i = 0; i < e.args.size(); ++i) {
      keys.push_back(Plan(*e.args[i]));
      values.push_back(Plan(*e.values[i]));
      if (!keys.back() || !values.back()) return nullptr;
      all_const &= keys.back()->ConstValue() != nullptr && values.back()->ConstValue() != nullptr;
    }
    std::vector<const Node*> node_keys, node_values;
    for (const auto& k : keys) node_keys.push_back(k.get());
    for (const auto& v : values) node_values.push_back(v.get());
    auto node = std::make_unique<MapNode>(
        e.id, std::move(keys), std::move(values),
        std::set<int>(e.optional_indices.begin(), e.optional_indices.end()));
    if (all_const) {
      // cel-go builds constant map literals through a Go map: a repeated key keeps the last value.
      std::vector<std::pair<Value, Value>> entries;
      for (size_t i = 0; i < e.args.size(); ++i) {
        const Value& k = *node_keys[i]->ConstValue();
        const Value& v = *node_values[i]->ConstValue();
        bool replaced = false;
        for (auto& [ek, ev] : entries) {
          if (ValueEquals(ek, k)) {
            ev = v;
            replaced = true;
          }
        }
        if (!replaced) entries.emplace_back(k, v);
      }
      return std::make_unique<ConstNode>(
          e.id, Value::Map(std::make_shared<const MapValueImpl>(std::move(entries))));
    }
    return node;
  }

  NodePtr PlanComprehension(const Expr& e) {
    NodePtr range = Plan(*e.iter_range);
    NodePtr init = Plan(*e.accu_init);
    if (!range || !init) return nullptr;
    size_t iter_slot = next_slot_++;
    size_t iter_slot2 = next_slot_++;
    size_t accu_slot = next_slot_++;
    size_t flag_slot = next_slot_++;
    // Accumulator scope (visible in cond, step and result).
    scopes_.push_back({e.accu_var, accu_slot, nullptr, flag_slot, init.get()});
    const AccuNode* saved_accu = current_accu_;
    size_t saved_accu_slot = current_accu_slot_;
    scopes_.push_back({e.iter_var, iter_slot, nullptr, 0, nullptr});
    if (!e.iter_var2.empty()) scopes_.push_back({e.iter_var2, iter_slot2, nullptr, 0, nullptr});
    NodePtr cond = Plan(*e.loop_cond);
    // Enable the in-place append fast path for the step's `@result + [x]`.
    current_accu_ = nullptr;
    NodePtr step = PlanStep(*e.loop_step, e.accu_var, accu_slot);
    if (!e.iter_var2.empty()) scopes_.pop_back();
    scopes_.pop_back();
    NodePtr result = Plan(*e.result);
    scopes_.pop_back();
    current_accu_ = saved_accu;
    current_accu_slot_ = saved_accu_slot;
    if (!cond || !step || !result) return nullptr;
    return std::make_unique<ComprehensionNode>(e.id, std::move(range), std::move(init),
                                               std::move(cond), std::move(step), std::move(result),
                                               iter_slot, iter_slot2, !e.iter_var2.empty(),
                                               accu_slot, flag_slot, false);
  }

  // Plans a loop step; `@result + [x]` (optionally under a filter ternary) gets the append node.
  NodePtr PlanStep(const Expr& step, const std::string& accu_var, size_t accu_slot) {
    const Expr* add = &step;
    if (step.kind == ExprKind::kCall && step.name == "_?_:_" && !step.operand) {
      add = step.args[1].get();
    }
    bool is_append = add->kind == ExprKind::kCall && add->name == "_+_" && !add->operand &&
                     add->args[0]->kind == ExprKind::kIdent && add->args[0]->name == accu_var &&
                     add->args[1]->kind == ExprKind::kList && add->args[1]->args.size() == 1 &&
                     add->args[1]->optional_indices.empty();
    if (!is_append) return Plan(step);
    append_target_ = add;
    append_slot_ = accu_slot;
    NodePtr n = PlanWithAppend(step);
    append_target_ = nullptr;
    return n;
  }

  NodePtr PlanWithAppend(const Expr& e) {
    if (&e == append_target_) {
      NodePtr accu = Plan(*e.args[0]);
      auto* accu_node = dynamic_cast<const AccuNode*>(accu.get());
      if (accu_node == nullptr) return Plan(e);
      NodePtr elem = Plan(*e.args[1]->args[0]);
      if (!elem) return nullptr;
      return std::make_unique<AccuAppendNode>(e.id, std::move(accu), std::move(elem), append_slot_);
    }
    // The filter ternary around the append.
    NodePtr c = Plan(*e.args[0]);
    NodePtr t = PlanWithAppend(*e.args[1]);
    NodePtr f = Plan(*e.args[2]);
    if (!c || !t || !f) return nullptr;
    return std::make_unique<TernaryNode>(e.id, std::move(c), std::move(t), std::move(f));
  }

  const CheckedInfo& info_;
  std::string& error_;
  std::vector<Scope> scopes_;
  std::vector<std::string> variables_;
  std::map<std::string, size_t> var_slots_;
  size_t next_slot_ = 0;
  const AccuNode* current_accu_ = nullptr;
  size_t current_accu_slot_ = 0;
  const Expr* append_target_ = nullptr;
  size_t append_slot_ = 0;

 public:
  static StatusOr<std::shared_ptr<const Program>> Build(const Ast& ast, const CheckedInfo& info,
                                                        std::string& error) {
    Planner p(info, error);
    p.ReserveVariables(*ast.root);
    NodePtr root = p.Plan(*ast.root);
    if (!root || !error.empty()) {
      return InvalidArgumentError(error.empty() ? "program planning failed" : error);
    }
    auto prog = std::shared_ptr<Program>(new Program());
    prog->root_ = std::move(root);
    prog->variables_ = p.variables();
    prog->slot_count_ = p.slot_count();
    auto it = info.types.find(ast.root->id);
    if (it != info.types.end()) prog->result_type_ = it->second;
    return std::shared_ptr<const Program>(std::move(prog));
  }
};

EvalResult Program::Run(const Activation& activation, const EvalOptions& options) const {
  Value inline_slots[16];
  std::unique_ptr<Value[]> heap_slots;
  Value* slots = inline_slots;
  if (slot_count_ > 16) {
    heap_slots = std::make_unique<Value[]>(slot_count_);
    slots = heap_slots.get();
  }
  for (size_t i = 0; i < variables_.size(); ++i) {
    const Value* v = activation.Find(variables_[i]);
    slots[i] = v ? *v : Value::Error("no such attribute: " + variables_[i]);
  }
  EvalContext ctx(slots, options.cost_limit);
  EvalResult result;
  result.value = root_->Eval(ctx);
  result.cost = ctx.cost();
  result.cost_limit_exceeded = ctx.cancelled();
  return result;
}

StatusOr<EvalResult> Program::Evaluate(const Activation& activation,
                                       const EvalOptions& options) const {
  EvalResult result = Run(activation, options);
  if (result.cost_limit_exceeded) {
    return ResourceExhaustedError("operation cancelled: actual cost limit exceeded");
  }
  return result;
}

CompileResult Compile(const Env& env, std::string_view source,
                      const ParserOptions& parser_options) {
  CompileResult out;
  Issues issues;
  auto ast = Parse(source, issues, parser_options);
  if (!ast) {
    out.error = issues.ToString(source);
    return out;
  }
  CheckedInfo info;
  if (!Check(env, *ast, info, issues)) {
    out.error = issues.ToString(source);
    return out;
  }
  std::string error;
  auto prog = Planner::Build(*ast, info, error);
  if (!prog.ok()) {
    out.error = prog.status().message();
    return out;
  }
  out.program = *prog;
  return out;
}

}  // namespace draco::cel
