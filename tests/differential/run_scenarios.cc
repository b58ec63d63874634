// alloc_scenarios: reads `oracle allocate` scenario lines (or gen-alloc lines, whose "scenario"
// member is used) on stdin and writes draco's output lines on stdout. With --compare, gen-alloc
// lines are checked against their "expected" member and mismatches are printed to stderr.
//
//   oracle gen-alloc -n 100 -seed 1 | alloc_scenarios --compare
//   alloc_scenarios < scenarios.jsonl > draco.jsonl
#include <cstring>
#include <iostream>
#include <string>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "controller/allocator/scenario.h"

namespace {

std::string Serialize(const rapidjson::Value& v) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  v.Accept(w);
  return buf.GetString();
}

}  // namespace

int main(int argc, char** argv) {
  bool compare = false, no_prune = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--compare") == 0) compare = true;
    if (std::strcmp(argv[i], "--no-prune") == 0) no_prune = true;
  }
  draco::alloc::RunOptions opts;
  opts.selectors = draco::alloc::NewCelSelectorCompiler();
  opts.prune = !no_prune;
  std::string line;
  int total = 0, mismatches = 0;
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    rapidjson::Document doc;
    doc.Parse(line.c_str());
    std::string scenario = line;
    if (!doc.HasParseError() && doc.IsObject() && doc.HasMember("scenario")) {
      scenario = Serialize(doc["scenario"]);
    }
    std::string out = draco::alloc::RunScenarioLine(scenario, opts);
    ++total;
    if (!compare) {
      std::cout << out << "\n";
      continue;
    }
    rapidjson::Document got;
    got.Parse(out.c_str());
    const rapidjson::Value& want = doc["expected"];
    auto kind = [](const rapidjson::Value& v) -> std::string {
      if (v.HasMember("results")) return "results";
      if (v.HasMember("timeout")) return "timeout";
      if (v.HasMember("error")) return "error";
      if (v.HasMember("unsatisfiable")) return "unsatisfiable";
      if (v.HasMember("fillUp")) return "fillUp";
      return "?";
    };
    bool same = kind(got) == kind(want);
    if (same && kind(want) == "results") same = got["results"] == want["results"];
    if (same && kind(want) == "fillUp") same = got["fillUp"] == want["fillUp"];
    if (!same) {
      ++mismatches;
      std::cerr << "MISMATCH " << (want.HasMember("id") ? want["id"].GetString() : "")
                << "\n  want " << Serialize(want) << "\n  got  " << out << "\n";
    }
  }
  if (compare) std::cerr << total << " scenarios, " << mismatches << " mismatches\n";
  return mismatches == 0 ? 0 : 1;
}
