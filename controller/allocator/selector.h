// The allocator's narrow seam to CEL. The allocator never sees a CEL implementation directly: it
// compiles selector expressions through a SelectorCompiler and evaluates the compiled selectors on
// a DeviceView. NewCelSelectorCompiler() (below, in celenv_selector.cc) adapts draco::celenv; tests
// use fakes.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "controller/allocator/compute_model.h"

namespace draco::alloc {

// What a selector may look at: upstream's cel.Device. Borrowed pointers; valid for the duration
// of one Matches call.
struct DeviceView {
  std::string_view driver;
  const std::vector<std::pair<std::string, Attribute>>* attributes = nullptr;
  const std::vector<std::pair<std::string, DeviceCapacity>>* capacity = nullptr;
  bool allow_multiple_allocations = false;
};

// A device converted once into whatever the CEL implementation evaluates against (upstream
// builds these maps per evaluation; draco builds them once per device and snapshot).
class PreparedDevice {
 public:
  virtual ~PreparedDevice() = default;
};

// A compiled selector. Thread-safe: Matches may be called concurrently.
class CompiledSelector {
 public:
  virtual ~CompiledSelector() = default;
  // true/false, or a runtime error (message as upstream's cel-go text, e.g. "no such key: x").
  virtual StatusOr<bool> Matches(const PreparedDevice& device) const = 0;
};

// A compiled derived-attribute expression (DRADerivedAttributes). Thread-safe.
class CompiledAttribute {
 public:
  virtual ~CompiledAttribute() = default;
  // The attribute value (scalar or list), or a runtime error (upstream's message).
  virtual StatusOr<Attribute> Evaluate(const PreparedDevice& device) const = 0;
};

// Compiles selector expressions and prepares devices. Thread-safe.
class SelectorCompiler {
 public:
  virtual ~SelectorCompiler() = default;
  // Compiles a derived attribute's expression; compilers without support say so.
  virtual StatusOr<std::shared_ptr<const CompiledAttribute>> CompileAttribute(
      std::string_view /*expr*/) {
    return UnimplementedError("derived attributes are not supported by this CEL compiler");
  }
  // A compile error is returned as a non-OK status whose message is the compiler's diagnostic.
  virtual StatusOr<std::shared_ptr<const CompiledSelector>> Compile(std::string_view expr) = 0;
  // Converts a device for evaluation. The view's pointers are only valid during the call.
  virtual std::shared_ptr<const PreparedDevice> Prepare(const DeviceView& device) = 0;
};

// The default compiler, NewCelSelectorCompiler() (declared in allocator.h): draco's own CEL
// (controller/celenv). Null when draco_celenv is not built. It keeps successful compilations
// (bounded) so that allocators sharing it compile each expression once, like the scheduler's CEL
// cache.

}  // namespace draco::alloc
