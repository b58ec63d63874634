#include "controller/celenv/dra_env.h"

#include <cmath>
#include <memory>

#include "controller/api/semver.h"
#include "controller/cel/program.h"
#include "controller/cel/stdlib.h"
#include "controller/celenv/net_lib.h"

namespace draco::celenv {
namespace {

using cel::EvalContext;
using cel::Type;
using cel::Value;

constexpr const char* kQuantityType = "kubernetes.Quantity";
constexpr const char* kSemverType = "kubernetes.Semver";

class QuantityValue final : public cel::OpaqueValue {
 public:
  explicit QuantityValue(api::Quantity q, bool computed = false)
      : q_(std::move(q)), computed_(computed) {}
  std::string_view TypeName() const override { return kQuantityType; }
  // upstream: Quantity.Equal accepts only a Quantity value, not the *Quantity that add()/sub()
  // return, so comparing with a computed quantity on the right is "no such overload".
  std::optional<bool> Equals(const cel::OpaqueValue& o) const override {
    auto* other = dynamic_cast<const QuantityValue*>(&o);
    if (other == nullptr || other->computed_) return std::nullopt;
    return q_.Compare(other->q_) == 0;
  }
  std::string DebugString() const override { return "quantity(" + q_.ToString() + ")"; }
  const api::Quantity& q() const { return q_; }

 private:
  api::Quantity q_;
  bool computed_;
};

class SemverValue final : public cel::OpaqueValue {
 public:
  explicit SemverValue(api::SemVer v) : v_(std::move(v)) {}
  std::string_view TypeName() const override { return kSemverType; }
  std::optional<bool> Equals(const cel::OpaqueValue& o) const override {
    auto* other = dynamic_cast<const SemverValue*>(&o);
    if (other == nullptr) return std::nullopt;
    return v_.Compare(other->v_) == 0;
  }
  std::string DebugString() const override { return "semver(" + v_.ToString() + ")"; }
  const api::SemVer& v() const { return v_; }

 private:
  api::SemVer v_;
};

Value Q(api::Quantity q) {
  return Value::Opaque(std::make_shared<const QuantityValue>(std::move(q)));
}
// The result of add()/sub(): upstream returns a *Quantity there.
Value QComputed(api::Quantity q) {
  return Value::Opaque(std::make_shared<const QuantityValue>(std::move(q), true));
}
const api::Quantity& AsQ(const Value& v) {
  return static_cast<const QuantityValue&>(v.opaque()).q();
}
const api::SemVer& AsV(const Value& v) { return static_cast<const SemverValue&>(v.opaque()).v(); }

uint64_t StringArgCost(const Value* a, size_t, const Value&) {
  return static_cast<uint64_t>(std::ceil(static_cast<double>(cel::ActualSize(a[0])) * 0.1));
}

Value QuantityFn(const Value* a, EvalContext&) {
  auto q = api::Quantity::Parse(a[0].str());
  if (!q.ok()) return Value::Error(q.status().message());
  return Q(*q);
}
Value IsQuantity(const Value* a, EvalContext&) {
  return Value::Bool(api::Quantity::Parse(a[0].str()).ok());
}
Value QSign(const Value* a, EvalContext&) { return Value::Int(AsQ(a[0]).Sign()); }
Value QIsInteger(const Value* a, EvalContext&) { return Value::Bool(AsQ(a[0]).IsInteger()); }
Value QAsInteger(const Value* a, EvalContext&) {
  auto i = AsQ(a[0]).AsInt64();
  if (!i) return Value::Error("cannot convert value to integer");
  return Value::Int(*i);
}
Value QAsFloat(const Value* a, EvalContext&) {
  return Value::Double(AsQ(a[0]).AsApproximateFloat64());
}
Value QAdd(const Value* a, EvalContext&) { return QComputed(AsQ(a[0]).Add(AsQ(a[1]))); }
Value QAddInt(const Value* a, EvalContext&) {
  return QComputed(AsQ(a[0]).Add(api::Quantity::FromInt64(a[1].int_value())));
}
Value QSub(const Value* a, EvalContext&) { return QComputed(AsQ(a[0]).Sub(AsQ(a[1]))); }
Value QSubInt(const Value* a, EvalContext&) {
  return QComputed(AsQ(a[0]).Sub(api::Quantity::FromInt64(a[1].int_value())));
}
Value QGreater(const Value* a, EvalContext&) {
  return Value::Bool(AsQ(a[0]).Compare(AsQ(a[1])) > 0);
}
Value QLess(const Value* a, EvalContext&) { return Value::Bool(AsQ(a[0]).Compare(AsQ(a[1])) < 0); }
Value QCompare(const Value* a, EvalContext&) { return Value::Int(AsQ(a[0]).Compare(AsQ(a[1]))); }

Value SemverParse(std::string_view s, bool normalize) {
  auto v = api::SemVer::Parse(s, normalize);
  if (!v.ok()) return Value::Error("could not parse semver: " + v.status().message());
  return Value::Opaque(std::make_shared<const SemverValue>(*v));
}
Value SemverFn(const Value* a, EvalContext&) { return SemverParse(a[0].str(), false); }
Value SemverNorm(const Value* a, EvalContext&) {
  return SemverParse(a[0].str(), a[1].bool_value());
}
Value IsSemver(const Value* a, EvalContext&) {
  return Value::Bool(api::SemVer::Parse(a[0].str()).ok());
}
Value IsSemverNorm(const Value* a, EvalContext&) {
  return Value::Bool(api::SemVer::Parse(a[0].str(), a[1].bool_value()).ok());
}
Value VMajor(const Value* a, EvalContext&) {
  return Value::Int(static_cast<int64_t>(AsV(a[0]).major()));
}
Value VMinor(const Value* a, EvalContext&) {
  return Value::Int(static_cast<int64_t>(AsV(a[0]).minor()));
}
Value VPatch(const Value* a, EvalContext&) {
  return Value::Int(static_cast<int64_t>(AsV(a[0]).patch()));
}
Value VGreater(const Value* a, EvalContext&) {
  return Value::Bool(AsV(a[0]).Compare(AsV(a[1])) > 0);
}
Value VLess(const Value* a, EvalContext&) { return Value::Bool(AsV(a[0]).Compare(AsV(a[1])) < 0); }
Value VCompare(const Value* a, EvalContext&) { return Value::Int(AsV(a[0]).Compare(AsV(a[1]))); }

void Add(cel::Env& env, const std::string& fn, const std::string& id, bool member,
         std::vector<Type> args, Type result, cel::FunctionImpl impl,
         cel::CostFunction cost = nullptr) {
  cel::Overload o;
  o.id = id;
  o.member = member;
  o.args = std::move(args);
  o.result = std::move(result);
  o.impl = impl;
  o.cost = cost;
  env.AddOverload(fn, std::move(o));
}

std::unique_ptr<cel::Env> BuildEnv() {
  auto env = std::make_unique<cel::Env>();
  cel::AddStandardLibrary(*env);
  AddNetLibraries(*env);
  const Type S = Type::String(), I = Type::Int(), B = Type::Bool(), D = Type::Double();
  const Type Qt = Type::Opaque(kQuantityType), Vt = Type::Opaque(kSemverType);
  Add(*env, "quantity", "string_to_quantity", false, {S}, Qt, QuantityFn, StringArgCost);
  Add(*env, "isQuantity", "is_quantity_string", false, {S}, B, IsQuantity, StringArgCost);
  Add(*env, "sign", "quantity_sign", false, {Qt}, I, QSign);
  Add(*env, "isInteger", "quantity_is_integer", true, {Qt}, B, QIsInteger);
  Add(*env, "asInteger", "quantity_as_integer", true, {Qt}, I, QAsInteger);
  Add(*env, "asApproximateFloat", "quantity_as_float", true, {Qt}, D, QAsFloat);
  Add(*env, "add", "quantity_add", true, {Qt, Qt}, Qt, QAdd);
  Add(*env, "add", "quantity_add_int", true, {Qt, I}, Qt, QAddInt);
  Add(*env, "sub", "quantity_sub", true, {Qt, Qt}, Qt, QSub);
  Add(*env, "sub", "quantity_sub_int", true, {Qt, I}, Qt, QSubInt);
  Add(*env, "isGreaterThan", "quantity_is_greater_than", true, {Qt, Qt}, B, QGreater);
  Add(*env, "isLessThan", "quantity_is_less_than", true, {Qt, Qt}, B, QLess);
  Add(*env, "compareTo", "quantity_compare_to", true, {Qt, Qt}, I, QCompare);
  Add(*env, "semver", "string_to_semver", false, {S}, Vt, SemverFn, StringArgCost);
  Add(*env, "semver", "string_bool_to_semver", false, {S, B}, Vt, SemverNorm, StringArgCost);
  Add(*env, "isSemver", "is_semver_string", false, {S}, B, IsSemver, StringArgCost);
  Add(*env, "isSemver", "is_semver_string_bool", false, {S, B}, B, IsSemverNorm, StringArgCost);
  Add(*env, "major", "semver_major", true, {Vt}, I, VMajor);
  Add(*env, "minor", "semver_minor", true, {Vt}, I, VMinor);
  Add(*env, "patch", "semver_patch", true, {Vt}, I, VPatch);
  Add(*env, "isGreaterThan", "semver_is_greater_than", true, {Vt, Vt}, B, VGreater);
  Add(*env, "isLessThan", "semver_is_less_than", true, {Vt, Vt}, B, VLess);
  Add(*env, "compareTo", "semver_compare_to", true, {Vt, Vt}, I, VCompare);

  cel::ObjectType device;
  device.name = "kubernetes.DRADevice";
  device.fields["driver"] = S;
  device.fields["attributes"] = Type::Map(S, Type::Map(S, Type::Dyn()));
  device.fields["capacity"] = Type::Map(S, Type::Map(S, Qt));
  device.fields["allowMultipleAllocations"] = B;
  env->AddObjectType(device);
  env->AddVariable("device", Type::Object("kubernetes.DRADevice"));
  return env;
}

// The outer attributes/capacity map: an unknown domain yields an empty map (upstream's
// mapper.Find), while `in` and iteration see only real domains.
class DomainMap final : public cel::MapValue {
 public:
  explicit DomainMap(std::vector<std::pair<Value, Value>> e) : entries_(std::move(e)) {}
  size_t size() const override { return entries_.size(); }
  const Value& KeyAt(size_t i) const override { return entries_[i].first; }
  const Value& ValueAt(size_t i) const override { return entries_[i].second; }
  const Value* Find(const Value& key) const override {
    const Value* v = Exact(key);
    return v ? v : &EmptyMap();
  }
  bool Contains(const Value& key) const override { return Exact(key) != nullptr; }

 private:
  const Value* Exact(const Value& key) const {
    if (key.kind() != cel::Kind::kString) return FindLinear(key);
    for (const auto& [k, v] : entries_) {
      if (k.str() == key.str()) return &v;
    }
    return nullptr;
  }
  static const Value& EmptyMap() {
    static const Value* empty = new Value(Value::Map(
        std::make_shared<const cel::MapValueImpl>(std::vector<std::pair<Value, Value>>{})));
    return *empty;
  }
  std::vector<std::pair<Value, Value>> entries_;
};

}  // namespace

const cel::Env& DraEnv() {
  static const cel::Env* env = BuildEnv().release();  // never destroyed
  return *env;
}

void DeviceDataBuilder::Put(
    std::vector<std::pair<std::string, std::vector<std::pair<std::string, Value>>>>& m,
    std::string_view name, Value v) {
  std::string domain = driver_, id(name);
  size_t slash = name.find('/');
  if (slash != std::string_view::npos) {
    domain = std::string(name.substr(0, slash));
    id = std::string(name.substr(slash + 1));
  }
  for (auto& [d, entries] : m) {
    if (d != domain) continue;
    for (auto& [k, old] : entries) {
      if (k == id) {
        old = std::move(v);
        return;
      }
    }
    entries.emplace_back(id, std::move(v));
    return;
  }
  m.push_back({domain, {{id, std::move(v)}}});
}

DeviceDataBuilder& DeviceDataBuilder::Int(std::string_view n, int64_t v) {
  Put(attrs_, n, Value::Int(v));
  return *this;
}
DeviceDataBuilder& DeviceDataBuilder::Bool(std::string_view n, bool v) {
  Put(attrs_, n, Value::Bool(v));
  return *this;
}
DeviceDataBuilder& DeviceDataBuilder::String(std::string_view n, std::string v) {
  Put(attrs_, n, Value::String(std::move(v)));
  return *this;
}
DeviceDataBuilder& DeviceDataBuilder::Version(std::string_view n, std::string_view v) {
  auto parsed = api::SemVer::Parse(v);
  if (!parsed.ok()) {
    if (error_.ok()) {
      error_ = InvalidArgumentError("attribute " + std::string(n) +
                                    ": parse semantic version: " + parsed.status().message());
    }
    return *this;
  }
  Put(attrs_, n, Value::Opaque(std::make_shared<const SemverValue>(*parsed)));
  return *this;
}
DeviceDataBuilder& DeviceDataBuilder::IntList(std::string_view n, const std::vector<int64_t>& v) {
  std::vector<Value> l;
  l.reserve(v.size());
  for (int64_t x : v) l.push_back(Value::Int(x));
  Put(attrs_, n, Value::List(std::move(l)));
  return *this;
}
DeviceDataBuilder& DeviceDataBuilder::BoolList(std::string_view n, const std::vector<bool>& v) {
  std::vector<Value> l;
  l.reserve(v.size());
  for (bool x : v) l.push_back(Value::Bool(x));
  Put(attrs_, n, Value::List(std::move(l)));
  return *this;
}
DeviceDataBuilder& DeviceDataBuilder::StringList(std::string_view n,
                                                 const std::vector<std::string>& v) {
  std::vector<Value> l;
  l.reserve(v.size());
  for (const auto& x : v) l.push_back(Value::String(x));
  Put(attrs_, n, Value::List(std::move(l)));
  return *this;
}
DeviceDataBuilder& DeviceDataBuilder::VersionList(std::string_view n,
                                                  const std::vector<std::string>& v) {
  std::vector<Value> l;
  for (const auto& x : v) {
    auto parsed = api::SemVer::Parse(x);
    if (!parsed.ok()) {
      if (error_.ok()) {
        error_ = InvalidArgumentError("attribute " + std::string(n) +
                                      ": parse semantic version: " + parsed.status().message());
      }
      return *this;
    }
    l.push_back(Value::Opaque(std::make_shared<const SemverValue>(*parsed)));
  }
  Put(attrs_, n, Value::List(std::move(l)));
  return *this;
}
DeviceDataBuilder& DeviceDataBuilder::Unsupported(std::string_view n) {
  if (error_.ok()) {
    error_ = InvalidArgumentError("attribute " + std::string(n) + ": unsupported attribute value");
  }
  return *this;
}
DeviceDataBuilder& DeviceDataBuilder::Capacity(std::string_view n, const api::Quantity& q) {
  Put(caps_, n, Q(q));
  return *this;
}

std::shared_ptr<const DeviceData> DeviceDataBuilder::Build() const {
  auto to_outer = [](const auto& m) {
    std::vector<std::pair<Value, Value>> outer;
    for (const auto& [domain, entries] : m) {
      std::vector<std::pair<Value, Value>> inner;
      for (const auto& [id, v] : entries) inner.emplace_back(Value::String(id), v);
      outer.emplace_back(Value::String(domain),
                         Value::Map(std::make_shared<const cel::MapValueImpl>(std::move(inner))));
    }
    return Value::Map(std::make_shared<const DomainMap>(std::move(outer)));
  };
  auto data = std::make_shared<DeviceData>();
  std::vector<std::pair<Value, Value>> fields;
  fields.emplace_back(Value::String("driver"), Value::String(driver_));
  fields.emplace_back(Value::String("allowMultipleAllocations"), Value::Bool(allow_multiple_));
  fields.emplace_back(Value::String("attributes"), to_outer(attrs_));
  fields.emplace_back(Value::String("capacity"), to_outer(caps_));
  data->device_ = Value::Map(std::make_shared<const cel::MapValueImpl>(std::move(fields)));
  data->conversion_error_ = error_;
  return data;
}

namespace {

class DeviceActivation final : public cel::Activation {
 public:
  explicit DeviceActivation(const Value& device) : device_(device) {}
  const Value* Find(std::string_view name) const override {
    return name == "device" ? &device_ : nullptr;
  }

 private:
  const Value& device_;
};

}  // namespace

StatusOr<bool> Selector::Matches(const DeviceData& device, uint64_t* cost,
                                 uint64_t cost_limit) const {
  MatchResult r = Evaluate(device, cost_limit);
  if (cost && r.cost) *cost = *r.cost;
  return std::move(r.matched);
}

MatchResult Selector::Evaluate(const DeviceData& device, uint64_t cost_limit) const {
  MatchResult out;
  if (!device.conversion_error().ok()) {
    out.matched = device.conversion_error();
    return out;
  }
  DeviceActivation act(device.device());
  cel::EvalOptions opts;
  opts.cost_limit = cost_limit;
  cel::EvalResult r = program_->Run(act, opts);
  out.cost = r.cost;
  if (r.cost_limit_exceeded) {
    out.matched = ResourceExhaustedError("operation cancelled: actual cost limit exceeded");
  } else if (r.value.IsError()) {
    out.matched = InvalidArgumentError(r.value.error_message());
  } else if (!r.value.IsBool()) {
    out.matched = InvalidArgumentError("CEL result of type " + r.value.TypeName() +
                                       " could not be converted to bool");
  } else {
    out.matched = r.value.bool_value();
  }
  return out;
}

namespace {

cel::ProgramCache& Programs() {
  static auto* cache = std::make_unique<cel::ProgramCache>(DraEnv(), 4096).release();
  return *cache;
}

bool DerivedElementType(const Type& t) {
  return t.k == Type::K::kBool || t.k == Type::K::kInt || t.k == Type::K::kString ||
         t.k == Type::K::kDyn || (t.k == Type::K::kOpaque && t.name == kSemverType);
}

bool IsSemver(const Value& v) {
  return v.kind() == cel::Kind::kOpaque && v.opaque().TypeName() == kSemverType;
}

// upstream valToDeviceAttribute
StatusOr<AttributeValue> ToAttribute(const Value& v) {
  using K = AttributeValue::Kind;
  AttributeValue a;
  switch (v.kind()) {
    case cel::Kind::kBool:
      a.kind = K::kBool;
      a.b = v.bool_value();
      return a;
    case cel::Kind::kInt:
      a.kind = K::kInt;
      a.i = v.int_value();
      return a;
    case cel::Kind::kString:
      a.kind = K::kString;
      a.s = v.str();
      return a;
    case cel::Kind::kList:
      break;
    default:
      if (IsSemver(v)) {
        a.kind = K::kVersion;
        a.s = AsV(v).ToString();
        return a;
      }
      return InvalidArgumentError("unsupported CEL return type: " + v.TypeName());
  }
  const auto& elems = v.list().elems();
  a.kind = K::kStrings;
  if (elems.empty()) return a;
  const Value& first = elems[0];
  const char* want = "string";
  if (first.IsBool()) {
    a.kind = K::kBools;
    want = "bool";
  } else if (first.kind() == cel::Kind::kInt) {
    a.kind = K::kInts;
    want = "int";
  } else if (IsSemver(first)) {
    a.kind = K::kVersions;
    want = "semver";
  } else if (first.kind() != cel::Kind::kString) {
    return InvalidArgumentError("unsupported list element type: " + first.TypeName());
  }
  for (size_t i = 0; i < elems.size(); ++i) {
    const Value& e = elems[i];
    bool ok = false;
    switch (a.kind) {
      case K::kBools:
        ok = e.IsBool();
        if (ok) a.bools.push_back(e.bool_value());
        break;
      case K::kInts:
        ok = e.kind() == cel::Kind::kInt;
        if (ok) a.ints.push_back(e.int_value());
        break;
      case K::kVersions:
        ok = IsSemver(e);
        if (ok) a.strs.push_back(AsV(e).ToString());
        break;
      default:
        ok = e.kind() == cel::Kind::kString;
        if (ok) a.strs.push_back(e.str());
        break;
    }
    if (!ok) {
      return InvalidArgumentError("expected list element at index " + std::to_string(i) +
                                  " to be " + want + ", got " + e.TypeName());
    }
  }
  return a;
}

}  // namespace

StatusOr<AttributeValue> DerivedExpression::Evaluate(const DeviceData& device,
                                                     uint64_t cost_limit) const {
  if (!device.conversion_error().ok()) return device.conversion_error();
  DeviceActivation act(device.device());
  cel::EvalOptions opts;
  opts.cost_limit = cost_limit;
  cel::EvalResult r = program_->Run(act, opts);
  if (r.cost_limit_exceeded) {
    return ResourceExhaustedError("operation cancelled: actual cost limit exceeded");
  }
  if (r.value.IsError()) return InvalidArgumentError(r.value.error_message());
  return ToAttribute(r.value);
}

StatusOr<std::shared_ptr<const DerivedExpression>> CompileDerived(std::string_view expr) {
  cel::CompileResult c = Programs().Get(expr);
  if (!c.program) return InvalidArgumentError("compilation failed: " + c.error);
  const Type& t = c.program->result_type();
  bool ok = DerivedElementType(t) ||
            (t.k == Type::K::kList && t.params.size() == 1 && DerivedElementType(t.params[0]));
  if (!ok) {
    return InvalidArgumentError(
        "must evaluate to a primitive scalar (string, integer, boolean, semver) or a list of "
        "these scalars, not " +
        t.ToString());
  }
  return std::make_shared<const DerivedExpression>(c.program);
}

StatusOr<std::shared_ptr<const Selector>> CompileSelector(std::string_view expr,
                                                          const SelectorOptions& options) {
  if (options.enforce_length_limit && expr.size() > kSelectorMaxLength) {
    return InvalidArgumentError("expression too long: " + std::to_string(expr.size()) +
                                " bytes, limit " + std::to_string(kSelectorMaxLength));
  }
  cel::CompileResult c = Programs().Get(expr);
  if (!c.program) return InvalidArgumentError("compilation failed: " + c.error);
  const Type& t = c.program->result_type();
  if (t.k != Type::K::kBool && t.k != Type::K::kDyn) {
    return InvalidArgumentError("must evaluate to bool or the unknown type, not " + t.ToString());
  }
  return std::make_shared<const Selector>(c.program);
}

}  // namespace draco::celenv
