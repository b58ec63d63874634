// libFuzzer target: the CEL parser and checker (DRA environment) on arbitrary input. Any input
// must either compile or produce diagnostics; nothing may crash, hang or grow without bound.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "controller/cel/parser.h"
#include "controller/cel/program.h"
#include "controller/celenv/dra_env.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view src(reinterpret_cast<const char*>(data), size);
  draco::cel::Issues issues;
  auto ast = draco::cel::Parse(src, issues);
  if (ast != nullptr) (void)draco::cel::AstDebugString(*ast->root);
  (void)issues.ToString(src);
  // Parse + check + plan against the DRA environment (no cache: every input is compiled).
  draco::cel::CompileResult r = draco::cel::Compile(draco::celenv::DraEnv(), src);
  if (r.program == nullptr && r.error.empty()) __builtin_trap();
  return 0;
}
