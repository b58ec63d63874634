// Benchmark of DRA selector compilation and per-device evaluation.
//
// Without arguments it runs the typical selectors of scenario S3c (driver equality, string
// attribute equality, semver compare, quantity compare, list membership) against a built-in
// device. With DRACO_CEL_BENCH_INPUT=<file of `oracle cel` input lines> (e.g. the output of
// `oracle gen-perf -scenario S3c`) it registers one compile and one evaluation benchmark per line,
// named by the line's id, so tests/bench/cel_vs_oracle.sh can pair them with `oracle bench-cel`.
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <rapidjson/document.h>

#include "controller/api/quantity.h"
#include "controller/cel/program.h"
#include "controller/celenv/dra_env.h"
#include "tests/differential/cel/cel_harness.h"

namespace {

using draco::celenv::DeviceData;

struct Case {
  std::string id;
  std::string expr;
  std::shared_ptr<const DeviceData> device;
};

std::vector<Case> BuiltinCases() {
  draco::celenv::DeviceDataBuilder b("test-driver.cdi.k8s.io");
  b.Int("dra.example.com/numa", 0)
      .Version("driverVersion", "1.2.3")
      .String("family", "GPU")
      .String("model", "A100")
      .Capacity("memory", *draco::api::Quantity::Parse("1Gi"));
  auto dev = b.Build();
  const std::string a = R"(device.attributes["test-driver.cdi.k8s.io"])";
  const std::string c = R"(device.capacity["test-driver.cdi.k8s.io"])";
  return {
      {"S3c-0", R"(device.driver == "test-driver.cdi.k8s.io")", dev},
      {"S3c-1", a + R"(.model == "A100")", dev},
      {"S3c-2", a + R"(.driverVersion.isGreaterThan(semver("1.0.0")))", dev},
      {"S3c-3", c + R"(.memory.compareTo(quantity("512Mi")) >= 0)", dev},
      {"S3c-4", a + R"(.family in ["GPU", "FPGA"])", dev},
  };
}

std::vector<Case> FileCases(const char* path) {
  std::vector<Case> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    rapidjson::Document d;
    d.Parse(line.c_str());
    if (d.HasParseError() || !d.IsObject()) continue;
    auto dev = draco::celdiff::DeviceFromJson(d["device"]);
    if (!dev.ok()) continue;
    out.push_back({d["id"].GetString(), d["expr"].GetString(), *dev});
  }
  return out;
}

void BM_Compile(benchmark::State& state, const Case* c) {
  for (auto _ : state) {
    // A fresh compile (parse, check, plan), bypassing the program cache.
    draco::cel::CompileResult r = draco::cel::Compile(draco::celenv::DraEnv(), c->expr);
    benchmark::DoNotOptimize(r.program);
    if (!r.program) state.SkipWithError(r.error.c_str());
  }
}

void BM_Eval(benchmark::State& state, const Case* c) {
  draco::celenv::SelectorOptions opts;
  opts.enforce_length_limit = false;
  auto sel = draco::celenv::CompileSelector(c->expr, opts);
  if (!sel.ok()) {
    state.SkipWithError(sel.status().message().c_str());
    return;
  }
  for (auto _ : state) {
    auto m = (*sel)->Matches(*c->device);
    benchmark::DoNotOptimize(m);
  }
}

}  // namespace

int main(int argc, char** argv) {
  static std::vector<Case> cases;
  if (const char* in = std::getenv("DRACO_CEL_BENCH_INPUT"); in != nullptr && *in != '\0') {
    cases = FileCases(in);
  } else {
    cases = BuiltinCases();
  }
  for (const Case& c : cases) {
    benchmark::RegisterBenchmark(("BM_Compile/" + c.id).c_str(), BM_Compile, &c);
    benchmark::RegisterBenchmark(("BM_Eval/" + c.id).c_str(), BM_Eval, &c);
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
