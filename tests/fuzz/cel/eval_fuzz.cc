// libFuzzer target: parse + plan + evaluate against a fixed device under a runtime cost limit of
// 100,000 (a tenth of upstream's 1,000,000: sanitizer builds run ~100x slower, and the limit path
// itself is what matters), so every evaluation is bounded. Checks that evaluation is deterministic
// and that a cost-limited evaluation never reports a cost far beyond the limit.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "controller/api/quantity.h"
#include "controller/cel/program.h"
#include "controller/celenv/dra_env.h"

namespace {

const draco::celenv::DeviceData& Device() {
  static const auto* d = [] {
    draco::celenv::DeviceDataBuilder b("dra.example.com");
    b.String("model", "a100")
        .Int("index", 3)
        .Bool("healthy", true)
        .Version("driverVersion", "1.2.3-rc.1+build")
        .IntList("links", {1, 2, 3})
        .StringList("names", {"x", "y"})
        .VersionList("versions", {"1.0.0", "2.0.0"})
        .String("ext.example.com/family", "gpu")
        .Capacity("memory", *draco::api::Quantity::Parse("40Gi"))
        .Capacity("cores", *draco::api::Quantity::Parse("8"))
        .AllowMultipleAllocations(true);
    return new std::shared_ptr<const draco::celenv::DeviceData>(b.Build());
  }();
  return **d;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 4096) return 0;  // keep inputs small; length limits are tested elsewhere
  std::string_view src(reinterpret_cast<const char*>(data), size);
  draco::cel::CompileResult c = draco::cel::Compile(draco::celenv::DraEnv(), src);
  if (c.program == nullptr) return 0;
  draco::celenv::Selector sel(c.program);
  constexpr uint64_t kLimit = 100000;
  draco::celenv::MatchResult a = sel.Evaluate(Device(), kLimit);
  draco::celenv::MatchResult b = sel.Evaluate(Device(), kLimit);
  if (a.matched.ok() != b.matched.ok() || a.cost != b.cost) __builtin_trap();
  if (a.matched.ok() && *a.matched != *b.matched) __builtin_trap();
  // Cancellation happens right after the cost passes the limit; one call's cost can overshoot by
  // at most the cost of that call, which is bounded by the traversal of bounded values.
  if (a.cost && *a.cost > 4 * kLimit + 1000) __builtin_trap();
  return 0;
}
