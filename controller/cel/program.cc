#include "controller/cel/program.h"

#include <array>
#include <cmath>
#include <map>
#include <ranges>
#include <set>
#include <vector>

#include <re2/re2.h>

#include "controller/cel/program_internal.h"
#include "controller/cel/regex.h"
#include "controller/cel/stdlib.h"

namespace draco::cel {

Program::~Program() = default;

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

  void CollectVariables(const Expr& e, const std::set<std::string>& bound) {
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
    // Innermost scope first. (A reverse index loop: clang 14 cannot build ranges::reverse_view.)
    for (size_t i = scopes_.size(); i-- > 0;) {
      if (scopes_[i].name == name) return &scopes_[i];
    }
    return nullptr;
  }

  NodePtr PlanIdent(const Expr& e) {
    auto ti = info_.type_idents.find(e.id);
    if (ti != info_.type_idents.end()) {
      return std::make_unique<ConstNode>(e.id, Value::Type(ti->second));
    }
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
      vals.reserve(elems.size());
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
  std::array<Value, 16> inline_slots;
  std::vector<Value> heap_slots;
  Value* slots = inline_slots.data();
  if (slot_count_ > inline_slots.size()) {
    heap_slots.resize(slot_count_);
    slots = heap_slots.data();
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
