// Internal to the evaluator (program.cc, program_nodes.cc): the evaluation node classes a
// Program is planned into. Not part of the draco_cel API; include only from
// controller/cel/program*.cc. Nodes are immutable after planning and evaluated concurrently.
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <re2/re2.h>

#include "controller/cel/env.h"
#include "controller/cel/program.h"
#include "controller/cel/value.h"

namespace draco::cel {

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

using NodePtr = std::unique_ptr<const Node>;

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
  Value Run(EvalContext& ctx, bool skip_root_cost) const;

 private:
  static Value ApplyQualifierOptional(const Value& obj, const Value& key, bool field);

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
  Value Eval(EvalContext& ctx) const override;

 private:
  bool and_;
  NodePtr a_, b_;
};

class TernaryNode final : public Node {
 public:
  TernaryNode(int64_t id, NodePtr c, NodePtr t, NodePtr f)
      : Node(id), c_(std::move(c)), t_(std::move(t)), f_(std::move(f)) {}
  Value Eval(EvalContext& ctx) const override;

 private:
  NodePtr c_, t_, f_;
};

// `opt.orValue(v)` / `opt.or(o)`: cel-go special-cases these to short-circuit the right-hand side;
// the node itself has no cost.
class OptionalOrNode final : public Node {
 public:
  OptionalOrNode(int64_t id, bool or_value, NodePtr lhs, NodePtr rhs)
      : Node(id), or_value_(or_value), lhs_(std::move(lhs)), rhs_(std::move(rhs)) {}
  Value Eval(EvalContext& ctx) const override;

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

  Value Eval(EvalContext& ctx) const override;

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
  Value Eval(EvalContext& ctx) const override;

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
  Value Eval(EvalContext& ctx) const override;

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
  Value Eval(EvalContext& ctx) const override;

 private:
  std::vector<NodePtr> elems_;
  std::set<int> optional_;
};

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

  Value Build(EvalContext& ctx) const;

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

  Value Eval(EvalContext& ctx) const override;

 private:
  Value Fold(const Value& range, EvalContext& ctx) const;

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
  Value Eval(EvalContext& ctx) const override;

 private:
  static void AppendTo(ListValue& l, Value v) {
    auto& elems = const_cast<std::vector<Value>&>(l.elems());
    elems.push_back(std::move(v));
  }
  NodePtr accu_owner_;
  NodePtr elem_;
  size_t slot_;
};

}  // namespace draco::cel
