// cel_lines: draco's counterpart of `oracle cel`. Reads cel input lines (or gen-cel lines, whose
// "input" member is used) on stdin and writes one output line per input line in the oracle's
// format. With --compare, gen-cel lines are compared with their "expected" member and only
// disagreements are printed (as {"input":…,"expected":…,"draco":…}).
#include <iostream>
#include <string>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "tests/differential/cel/cel_harness.h"

namespace {

std::string Serialize(const rapidjson::Value& v) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  v.Accept(w);
  return buf.GetString();
}

}  // namespace

int main(int argc, char** argv) {
  bool compare = argc > 1 && std::string(argv[1]) == "--compare";
  std::string line;
  int total = 0, agree = 0;
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    rapidjson::Document doc;
    doc.Parse(line.c_str(), line.size());
    if (doc.HasParseError() || !doc.IsObject()) {
      std::cout << "{\"id\":\"\",\"inputError\":\"invalid JSON\"}\n";
      continue;
    }
    const rapidjson::Value& input = doc.HasMember("input") ? doc["input"] : doc;
    draco::celdiff::CelOutput got = draco::celdiff::RunDraco(input);
    if (!compare) {
      std::cout << draco::celdiff::ToJson(got) << "\n";
      continue;
    }
    if (!doc.HasMember("expected")) continue;
    draco::celdiff::CelOutput want = draco::celdiff::ParseOracleOutput(doc["expected"]);
    ++total;
    bool same = got.outcome == want.outcome && got.error_class == want.error_class;
    bool cost_same = !want.cost || want.cost_varies || got.cost == want.cost;
    if (same && cost_same) {
      ++agree;
      continue;
    }
    std::cout << "{\"input\":" << Serialize(input) << ",\"expected\":" << Serialize(doc["expected"])
              << ",\"draco\":" << draco::celdiff::ToJson(got) << "}\n";
  }
  if (compare) std::cerr << total << " expressions, " << agree << " agree (incl. cost)\n";
  return 0;
}
