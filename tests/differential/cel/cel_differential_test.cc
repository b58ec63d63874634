// Differential conformance of draco's DRA CEL engine (controller/celenv) against upstream
// (tests/oracle: k8s.io/dynamic-resource-allocation/cel v0.37.2 on cel-go v0.29.2).
//
// Inputs: the hand-written corpus tests/golden/cel/corpus.jsonl (run through `oracle cel`) and
// `oracle gen-cel -n N -seed S` (N = $DRACO_CEL_DIFF_N, default 2000; S = $DRACO_CEL_DIFF_SEED,
// default 1). Per expression the outcome class (compile error / runtime error / true / false) and,
// for runtime errors, the oracle's error class must agree; runtime cost is compared wherever the
// oracle reports a reproducible cost. Disagreements are written to
// <build>/tests/differential/cel/cel_mismatches.jsonl.
//
// The oracle is $DRACO_ORACLE, else <build>/oracle/oracle, built with tests/oracle/build.sh when
// missing or older than its sources; the test skips only when Go is unavailable.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "tests/differential/cel/cel_harness.h"

namespace draco::celdiff {
namespace {

namespace fs = std::filesystem;

bool HaveGo() { return std::system("command -v go >/dev/null 2>&1") == 0; }

bool OracleStale(const fs::path& bin) {
  if (!fs::exists(bin)) return true;
  auto built = fs::last_write_time(bin);
  for (const auto& e : fs::directory_iterator(fs::path(DRACO_SOURCE_DIR) / "tests/oracle")) {
    auto ext = e.path().extension();
    if ((ext == ".go" || e.path().filename() == "go.mod" || e.path().filename() == "go.sum") &&
        fs::last_write_time(e.path()) > built) {
      return true;
    }
  }
  return false;
}

// Returns the oracle binary path, building it when needed; "" when impossible.
std::string Oracle() {
  if (const char* env = std::getenv("DRACO_ORACLE"); env != nullptr && *env != '\0') {
    if (fs::exists(env)) return env;
  }
  fs::path path = fs::path(DRACO_BINARY_DIR) / "oracle/oracle";
  if (!OracleStale(path)) return path.string();
  if (!HaveGo()) return fs::exists(path) ? path.string() : "";
  std::string cmd =
      std::string(DRACO_SOURCE_DIR) + "/tests/oracle/build.sh " + path.string() + " >&2";
  if (std::system(cmd.c_str()) != 0) return "";
  return fs::exists(path) ? path.string() : "";
}

std::vector<std::string> ReadLines(const fs::path& p) {
  std::ifstream in(p);
  std::vector<std::string> out;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

std::string Serialize(const rapidjson::Value& v) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  v.Accept(w);
  return buf.GetString();
}

struct Tally {
  int total = 0;
  int outcome_agree = 0;
  int eval_errors = 0;
  int class_agree = 0;
  int cost_comparable = 0;
  int cost_agree = 0;
  std::map<std::string, int> by_outcome;  // oracle outcome -> count
  std::vector<std::string> failures;      // first few, for the log
};

void Compare(const rapidjson::Value& input, const rapidjson::Value& expected, std::ofstream& bad,
             std::ofstream& cost_bad, Tally& t) {
  CelOutput want = ParseOracleOutput(expected);
  CelOutput got = RunDraco(input);
  ++t.total;
  std::string key(OutcomeName(want.outcome));
  if (want.outcome == Outcome::kEvalError) key += ":" + want.error_class;
  ++t.by_outcome[key];
  bool outcome_ok = got.outcome == want.outcome;
  bool class_ok = true;
  if (outcome_ok) ++t.outcome_agree;
  if (want.outcome == Outcome::kEvalError) {
    ++t.eval_errors;
    class_ok = outcome_ok && got.error_class == want.error_class;
    if (class_ok) ++t.class_agree;
  }
  if (!outcome_ok || !class_ok) {
    std::string rec = "{\"input\":" + Serialize(input) + ",\"expected\":" + Serialize(expected) +
                      ",\"draco\":" + ToJson(got) + "}";
    bad << rec << "\n";
    if (t.failures.size() < 20) t.failures.push_back(rec);
  }
  if (outcome_ok && want.cost && !want.cost_varies) {
    ++t.cost_comparable;
    if (got.cost == want.cost) {
      ++t.cost_agree;
    } else {
      cost_bad << "{\"input\":" << Serialize(input) << ",\"expected\":" << Serialize(expected)
               << ",\"draco\":" << ToJson(got) << "}\n";
    }
  }
}

TEST(CelDifferential, DracoAgreesWithUpstream) {
  std::string oracle = Oracle();
  if (oracle.empty()) GTEST_SKIP() << "Go toolchain not available: cannot build tests/oracle";
  fs::path out_dir = fs::path(DRACO_BINARY_DIR) / "tests/differential/cel";
  fs::create_directories(out_dir);

  // 1. Hand-written corpus through `oracle cel`.
  fs::path corpus = fs::path(DRACO_SOURCE_DIR) / "tests/golden/cel/corpus.jsonl";
  std::vector<std::string> corpus_lines = ReadLines(corpus);
  ASSERT_GE(corpus_lines.size(), 300u) << "corpus missing or too small: " << corpus;
  fs::path corpus_expected = out_dir / "corpus_expected.jsonl";
  std::string cmd = oracle + " cel < " + corpus.string() + " > " + corpus_expected.string();
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::vector<std::string> expected_lines = ReadLines(corpus_expected);
  ASSERT_EQ(expected_lines.size(), corpus_lines.size());

  // 2. Generated lines.
  int n = 2000;
  std::string seed = "1";
  if (const char* env = std::getenv("DRACO_CEL_DIFF_N")) n = std::atoi(env);
  if (const char* env = std::getenv("DRACO_CEL_DIFF_SEED")) seed = env;
  fs::path generated = out_dir / "generated.jsonl";
  cmd = oracle + " gen-cel -n " + std::to_string(n) + " -seed " + seed + " > " + generated.string();
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::vector<std::string> gen_lines = ReadLines(generated);
  ASSERT_EQ(gen_lines.size(), static_cast<size_t>(n));

  std::ofstream bad(out_dir / "cel_mismatches.jsonl");
  std::ofstream cost_bad(out_dir / "cel_cost_mismatches.jsonl");
  Tally hand, gen;
  for (size_t i = 0; i < corpus_lines.size(); ++i) {
    rapidjson::Document in, want;
    in.Parse(corpus_lines[i].c_str());
    want.Parse(expected_lines[i].c_str());
    ASSERT_FALSE(in.HasParseError()) << "corpus line " << i + 1 << ": " << corpus_lines[i];
    ASSERT_FALSE(want.HasParseError()) << expected_lines[i];
    ASSERT_FALSE(want.HasMember("inputError"))
        << "corpus line " << i + 1 << " rejected by the oracle: " << expected_lines[i];
    Compare(in, want, bad, cost_bad, hand);
  }
  for (const std::string& line : gen_lines) {
    rapidjson::Document doc;
    doc.Parse(line.c_str());
    ASSERT_FALSE(doc.HasParseError()) << line;
    Compare(doc["input"], doc["expected"], bad, cost_bad, gen);
  }

  auto report = [](const char* name, const Tally& t) {
    std::cout << "  " << name << ": " << t.total << " expressions, " << t.outcome_agree
              << " agree on outcome; " << t.eval_errors << " runtime errors, " << t.class_agree
              << " agree on error class; cost: " << t.cost_comparable << " comparable, "
              << t.cost_agree << " agree exactly\n";
  };
  int total = hand.total + gen.total;
  int agree = hand.outcome_agree + gen.outcome_agree;
  int class_agree = hand.class_agree + gen.class_agree;
  int errors = hand.eval_errors + gen.eval_errors;
  std::cout << "CEL differential: " << total << " expressions, " << agree << " agree ("
            << class_agree << "/" << errors << " runtime error classes agree; cost "
            << hand.cost_agree + gen.cost_agree << "/" << hand.cost_comparable + gen.cost_comparable
            << " exact)\n";
  report("hand-written corpus", hand);
  report("generated (gen-cel)", gen);
  std::cout << "  oracle outcomes:";
  std::map<std::string, int> all = hand.by_outcome;
  for (const auto& [k, v] : gen.by_outcome) all[k] += v;
  for (const auto& [k, v] : all) std::cout << " " << k << "=" << v;
  std::cout << "\n";
  for (const auto& f : hand.failures) ADD_FAILURE() << "mismatch: " << f;
  for (const auto& f : gen.failures) ADD_FAILURE() << "mismatch: " << f;
  EXPECT_GE(total, 1000);
  EXPECT_EQ(agree, total) << "outcome mismatches; see " << (out_dir / "cel_mismatches.jsonl");
  EXPECT_EQ(class_agree, errors) << "error class mismatches; see "
                                 << (out_dir / "cel_mismatches.jsonl");
}

}  // namespace
}  // namespace draco::celdiff
