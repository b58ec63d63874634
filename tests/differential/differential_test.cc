// Differential test: draco's allocator vs. the upstream Go allocator (tests/oracle, DRA v0.37.2).
//
// 1. `oracle gen-alloc -n N -seed S` (N = $DRACO_DIFF_N, default 10000; S = $DRACO_DIFF_SEED,
//    default 1) produces random scenarios with upstream's expected output; draco must give the
//    same outcome class (results / unsatisfiable / error) and identical results, device for device.
// 2. Hand-written edge cases (tests/differential/cases.jsonl) are run through `oracle allocate`
//    and draco; same comparison.
// Mismatching scenarios are written to differential_mismatches.jsonl in the working directory.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "controller/allocator/scenario.h"

namespace draco::alloc {
namespace {

std::string Serialize(const rapidjson::Value& v) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  v.Accept(w);
  return buf.GetString();
}

std::string Kind(const rapidjson::Value& v) {
  if (v.HasMember("results")) return "results";
  if (v.HasMember("timeout")) return "timeout";
  if (v.HasMember("error")) return "error";
  if (v.HasMember("unsatisfiable")) return "unsatisfiable";
  if (v.HasMember("fillUp")) return "fillUp";
  if (v.HasMember("inputError")) return "inputError";
  return "?";
}

bool HaveGo() { return std::system("command -v go >/dev/null 2>&1") == 0; }

// Returns the oracle binary path, building it when needed; "" when impossible.
std::string Oracle() {
  if (const char* env = std::getenv("DRACO_ORACLE"); env != nullptr && *env != '\0') {
    if (std::filesystem::exists(env)) return env;
  }
  std::string path = std::string(DRACO_BINARY_DIR) + "/oracle/oracle";
  if (std::filesystem::exists(path)) return path;
  if (!HaveGo()) return "";
  std::string cmd = std::string(DRACO_SOURCE_DIR) + "/tests/oracle/build.sh " + path + " >&2";
  if (std::system(cmd.c_str()) != 0) return "";
  return std::filesystem::exists(path) ? path : "";
}

struct Tally {
  int total = 0;
  int mismatches = 0;
  std::map<std::string, int> kinds;
};

// Compares draco's output for `scenario` with `want`; records mismatches.
void Check(const std::string& scenario, const rapidjson::Value& want, const RunOptions& opts,
           std::ofstream& bad, Tally& t) {
  std::string out = RunScenarioLine(scenario, opts);
  rapidjson::Document got;
  got.Parse(out.c_str());
  ++t.total;
  ++t.kinds[Kind(want)];
  bool same = !got.HasParseError() && Kind(got) == Kind(want);
  if (same && Kind(want) == "results") same = got["results"] == want["results"];
  if (same && Kind(want) == "fillUp") same = got["fillUp"] == want["fillUp"];
  if (!same) {
    ++t.mismatches;
    bad << "{\"scenario\":" << scenario << ",\"expected\":" << Serialize(want)
        << ",\"draco\":" << out << "}\n";
    if (t.mismatches <= 5) {
      ADD_FAILURE() << "mismatch: expected " << Serialize(want).substr(0, 2000) << "\n draco "
                    << out.substr(0, 2000);
    }
  }
}

RunOptions Options() {
  RunOptions opts;
  opts.selectors = NewCelSelectorCompiler();
  return opts;
}

TEST(AllocatorDifferentialTest, GeneratedScenariosMatchUpstream) {
  std::string oracle = Oracle();
  if (oracle.empty()) GTEST_SKIP() << "Go toolchain not available: cannot build tests/oracle";
  ASSERT_NE(NewCelSelectorCompiler(), nullptr);
  int n = 10000;
  if (const char* env = std::getenv("DRACO_DIFF_N")) n = std::atoi(env);
  std::string seed = "1";
  if (const char* env = std::getenv("DRACO_DIFF_SEED")) seed = env;
  std::string cmd = oracle + " gen-alloc -n " + std::to_string(n) + " -seed " + seed;
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::ofstream bad("differential_mismatches.jsonl");
  RunOptions opts = Options();
  Tally t;
  std::string line;
  char buf[1 << 16];
  while (fgets(buf, sizeof(buf), p) != nullptr) {
    line += buf;
    if (line.empty() || line.back() != '\n') continue;
    rapidjson::Document doc;
    doc.Parse(line.c_str());
    line.clear();
    ASSERT_FALSE(doc.HasParseError());
    Check(Serialize(doc["scenario"]), doc["expected"], opts, bad, t);
  }
  ASSERT_EQ(pclose(p), 0) << "oracle gen-alloc failed";
  std::cout << "differential: " << t.total << " generated scenarios (seed " << seed << "), "
            << t.mismatches << " mismatches; outcomes:";
  for (const auto& [k, v] : t.kinds) std::cout << " " << k << "=" << v;
  std::cout << std::endl;
  EXPECT_EQ(t.total, n);
  EXPECT_EQ(t.mismatches, 0) << "see differential_mismatches.jsonl";
}

TEST(AllocatorDifferentialTest, HandWrittenCasesMatchUpstream) {
  std::string oracle = Oracle();
  if (oracle.empty()) GTEST_SKIP() << "Go toolchain not available: cannot build tests/oracle";
  std::string cases = std::string(DRACO_SOURCE_DIR) + "/tests/differential/cases.jsonl";
  std::string expected_file = "differential_cases_expected.jsonl";
  std::string cmd = oracle + " allocate < " + cases + " > " + expected_file;
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  std::ifstream in(cases), exp(expected_file);
  std::ofstream bad("differential_cases_mismatches.jsonl");
  RunOptions opts = Options();
  Tally t;
  std::string scenario, want_line;
  while (std::getline(in, scenario)) {
    if (scenario.empty()) continue;
    ASSERT_TRUE(std::getline(exp, want_line));
    rapidjson::Document want;
    want.Parse(want_line.c_str());
    ASSERT_FALSE(want.HasParseError());
    ASSERT_NE(Kind(want), "inputError") << want_line;
    Check(scenario, want, opts, bad, t);
  }
  std::cout << "differential: " << t.total << " hand-written cases, " << t.mismatches
            << " mismatches; outcomes:";
  for (const auto& [k, v] : t.kinds) std::cout << " " << k << "=" << v;
  std::cout << std::endl;
  EXPECT_GT(t.total, 0);
  EXPECT_EQ(t.mismatches, 0) << "see differential_cases_mismatches.jsonl";
}

}  // namespace
}  // namespace draco::alloc
