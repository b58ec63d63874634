// The evaluation nodes' Eval implementations: attribute chains, logic, calls, literals and folds.
#include <array>
#include <cmath>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <re2/re2.h>

#include "controller/cel/program_internal.h"
#include "controller/cel/regex.h"

namespace draco::cel {
namespace {

Value Cancelled() { return Value::Error("operation cancelled: actual cost limit exceeded"); }

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

bool ValidMapKey(const Value& k) {
  return k.kind() == Kind::kString || k.kind() == Kind::kInt || k.kind() == Kind::kUint ||
         k.kind() == Kind::kBool;
}

}  // namespace

Value ChainNode::Run(EvalContext& ctx, bool skip_root_cost) const {
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

Value ChainNode::ApplyQualifierOptional(const Value& obj, const Value& key, bool field) {
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

Value LogicNode::Eval(EvalContext& ctx) const {
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

Value TernaryNode::Eval(EvalContext& ctx) const {
  Value c = c_->Eval(ctx);
  if (ctx.cancelled()) return Cancelled();
  if (c.IsError()) return c;
  if (!c.IsBool()) return NoSuchOverload("_?_:_");
  return c.bool_value() ? t_->Eval(ctx) : f_->Eval(ctx);
}

Value OptionalOrNode::Eval(EvalContext& ctx) const {
  Value l = lhs_->Eval(ctx);
  if (ctx.cancelled()) return Cancelled();
  if (l.IsError()) return l;
  if (l.kind() != Kind::kOptional) return Value::Error("no such overload");
  if (l.optional_value() != nullptr) return or_value_ ? *l.optional_value() : l;
  return rhs_->Eval(ctx);
}

Value CallNode::Eval(EvalContext& ctx) const {
  std::array<Value, 4> local;
  std::vector<Value> heap;
  Value* vals = local.data();
  if (args_.size() > local.size()) {
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
  ctx.AddCost(
      priced == nullptr || priced->cost == nullptr ? 1 : priced->cost(vals, args_.size(), result));
  return result;
}

Value SetMembershipNode::Eval(EvalContext& ctx) const {
  Value v = arg_->Eval(ctx);
  if (ctx.cancelled()) return Cancelled();
  if (v.IsError()) return v;
  for (const Value& e : list_.list().elems()) {
    if (ValueEquals(e, v)) return Value::Bool(true);
  }
  return Value::Bool(false);
}

Value MatchesConstNode::Eval(EvalContext& ctx) const {
  Value s = target_->Eval(ctx);
  if (ctx.cancelled()) return Cancelled();
  auto str_cost = static_cast<uint64_t>(
      std::ceil((1.0 + static_cast<double>(ActualSize(s))) * kStringTraversalCostFactor));
  auto re_cost = static_cast<uint64_t>(
      std::ceil(static_cast<double>(pattern_size_) * kRegexStringLengthCostFactor));
  ctx.AddCost(str_cost * re_cost);
  if (s.IsError()) return s;
  if (s.kind() != Kind::kString) return NoSuchOverload(find_ ? "find" : "matches");
  if (find_) return RegexFind(*re_, s.str());
  return Value::Bool(RE2::PartialMatch(s.str(), *re_));
}

Value ListNode::Eval(EvalContext& ctx) const {
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

Value MapNode::Build(EvalContext& ctx) const {
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

Value ComprehensionNode::Eval(EvalContext& ctx) const {
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

Value ComprehensionNode::Fold(const Value& range, EvalContext& ctx) const {
  size_t n;
  if (range.kind() == Kind::kList) {
    n = range.list().size();
  } else if (range.kind() == Kind::kMap) {
    n = range.map().size();
  } else {
    if (two_var_) return Value::Error("unsupported comprehension range type: " + range.TypeName());
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

Value AccuAppendNode::Eval(EvalContext& ctx) const {
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

}  // namespace draco::cel
