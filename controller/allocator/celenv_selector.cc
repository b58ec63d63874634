// Adapter from the allocator's selector seam to draco's CEL (controller/celenv).
#include <mutex>
#include <string>
#include <unordered_map>

#include "controller/allocator/allocator.h"
#include "controller/allocator/selector.h"
#include "controller/celenv/dra_env.h"

namespace draco::alloc {
namespace {

class CelPrepared : public PreparedDevice {
 public:
  explicit CelPrepared(std::shared_ptr<const celenv::DeviceData> data) : data_(std::move(data)) {}
  const celenv::DeviceData& data() const { return *data_; }

 private:
  std::shared_ptr<const celenv::DeviceData> data_;
};

class CelSelector : public CompiledSelector {
 public:
  explicit CelSelector(std::shared_ptr<const celenv::Selector> sel) : sel_(std::move(sel)) {}
  StatusOr<bool> Matches(const PreparedDevice& device) const override {
    return sel_->Matches(static_cast<const CelPrepared&>(device).data());
  }

 private:
  std::shared_ptr<const celenv::Selector> sel_;
};

class CelAttribute : public CompiledAttribute {
 public:
  explicit CelAttribute(std::shared_ptr<const celenv::DerivedExpression> expr)
      : expr_(std::move(expr)) {}
  StatusOr<Attribute> Evaluate(const PreparedDevice& device) const override {
    auto v = expr_->Evaluate(static_cast<const CelPrepared&>(device).data());
    if (!v.ok()) return v.status();
    using K = celenv::AttributeValue::Kind;
    Attribute a;
    switch (v->kind) {
      case K::kBool:
        a.kind = Attribute::Kind::kBool;
        a.b = v->b;
        break;
      case K::kInt:
        a.kind = Attribute::Kind::kInt;
        a.i = v->i;
        break;
      case K::kString:
        a.kind = Attribute::Kind::kString;
        a.s = std::move(v->s);
        break;
      case K::kVersion:
        a.kind = Attribute::Kind::kVersion;
        a.s = std::move(v->s);
        break;
      case K::kBools:
        a.kind = Attribute::Kind::kBools;
        a.bools = std::move(v->bools);
        break;
      case K::kInts:
        a.kind = Attribute::Kind::kInts;
        a.ints = std::move(v->ints);
        break;
      case K::kStrings:
        a.kind = Attribute::Kind::kStrings;
        a.strs = std::move(v->strs);
        break;
      case K::kVersions:
        a.kind = Attribute::Kind::kVersions;
        a.strs = std::move(v->strs);
        break;
    }
    return a;
  }

 private:
  std::shared_ptr<const celenv::DerivedExpression> expr_;
};

// Compiles and caches successful compilations (like the scheduler's CEL cache, which also keeps
// compiled expressions across allocators); errors are recompiled each time. Thread-safe.
class CelCompiler : public SelectorCompiler {
 public:
  StatusOr<std::shared_ptr<const CompiledSelector>> Compile(std::string_view expr) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = cache_.find(std::string(expr));
      if (it != cache_.end()) return it->second;
    }
    // The scheduler does not re-validate stored expressions (no length limit, no cost estimate).
    celenv::SelectorOptions opts;
    opts.enforce_length_limit = false;
    auto sel = celenv::CompileSelector(expr, opts);
    if (!sel.ok()) return sel.status();
    auto compiled = std::shared_ptr<const CompiledSelector>(
        std::make_shared<CelSelector>(std::move(sel).value()));
    std::lock_guard<std::mutex> lock(mu_);
    if (cache_.size() >= kMaxCached) cache_.clear();  // bounded; rarely hit
    cache_.emplace(std::string(expr), compiled);
    return compiled;
  }

  StatusOr<std::shared_ptr<const CompiledAttribute>> CompileAttribute(
      std::string_view expr) override {
    auto e = celenv::CompileDerived(expr);
    if (!e.ok()) return e.status();
    return std::shared_ptr<const CompiledAttribute>(
        std::make_shared<CelAttribute>(std::move(e).value()));
  }

  std::shared_ptr<const PreparedDevice> Prepare(const DeviceView& d) override {
    celenv::DeviceDataBuilder b{std::string(d.driver)};
    using K = Attribute::Kind;
    for (const auto& [name, a] : *d.attributes) {
      switch (a.kind) {
        case K::kInt:
          b.Int(name, a.i);
          break;
        case K::kBool:
          b.Bool(name, a.b);
          break;
        case K::kString:
          b.String(name, a.s);
          break;
        case K::kVersion:
          b.Version(name, a.s);
          break;
        case K::kInts:
          b.IntList(name, a.ints);
          break;
        case K::kBools:
          b.BoolList(name, a.bools);
          break;
        case K::kStrings:
          b.StringList(name, a.strs);
          break;
        case K::kVersions:
          b.VersionList(name, a.strs);
          break;
        case K::kNone:  // no value: every evaluation fails, as upstream's
          b.Unsupported(name);
          break;
      }
    }
    for (const auto& [name, c] : *d.capacity) b.Capacity(name, c.value.q);
    b.AllowMultipleAllocations(d.allow_multiple_allocations);
    return std::make_shared<CelPrepared>(b.Build());
  }

 private:
  static constexpr size_t kMaxCached = 4096;
  std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<const CompiledSelector>> cache_;
};

}  // namespace

std::shared_ptr<SelectorCompiler> NewCelSelectorCompiler() {
  return std::make_shared<CelCompiler>();
}

}  // namespace draco::alloc
