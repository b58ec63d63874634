// Adapter from the allocator's selector seam to draco's CEL (controller/celenv).
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

class CelCompiler : public SelectorCompiler {
 public:
  StatusOr<std::shared_ptr<const CompiledSelector>> Compile(std::string_view expr) override {
    // The scheduler does not re-validate stored expressions (no length limit, no cost estimate).
    celenv::SelectorOptions opts;
    opts.enforce_length_limit = false;
    auto sel = celenv::CompileSelector(expr, opts);
    if (!sel.ok()) return sel.status();
    return std::shared_ptr<const CompiledSelector>(
        std::make_shared<CelSelector>(std::move(sel).value()));
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
        case K::kNone:
          break;
      }
    }
    for (const auto& [name, c] : *d.capacity) b.Capacity(name, c.value.q);
    b.AllowMultipleAllocations(d.allow_multiple_allocations);
    return std::make_shared<CelPrepared>(b.Build());
  }
};

}  // namespace

std::shared_ptr<SelectorCompiler> NewCelSelectorCompiler() {
  return std::make_shared<CelCompiler>();
}

}  // namespace draco::alloc
