#include "controller/cel/regex.h"

#include <vector>

namespace draco::cel {

std::unique_ptr<RE2> CompileRegex(const std::string& pattern) {
  RE2::Options opts;
  opts.set_log_errors(false);
  opts.set_encoding(RE2::Options::EncodingUTF8);
  auto re = std::make_unique<RE2>(pattern, opts);
  if (!re->ok()) return nullptr;
  return re;
}

Value RegexFind(const RE2& re, const std::string& s) {
  re2::StringPiece match;
  if (re.Match(s, 0, s.size(), RE2::UNANCHORED, &match, 1)) {
    return Value::String(std::string(match.data(), match.size()));
  }
  return Value::String("");
}

Value RegexFindAll(const RE2& re, const std::string& s, int64_t limit) {
  std::vector<Value> out;
  size_t pos = 0;
  size_t prev_end = std::string::npos;
  while (pos <= s.size() && (limit < 0 || static_cast<int64_t>(out.size()) < limit)) {
    re2::StringPiece m;
    if (!re.Match(s, pos, s.size(), RE2::UNANCHORED, &m, 1)) break;
    auto start = static_cast<size_t>(m.data() - s.data());
    size_t end = start + m.size();
    if (m.empty() && start == prev_end) {
      // Go skips an empty match immediately after the previous match.
      if (start >= s.size()) break;
      pos = start + 1;
      while (pos < s.size() && (static_cast<unsigned char>(s[pos]) & 0xC0) == 0x80) ++pos;
      continue;
    }
    out.push_back(Value::String(std::string(m.data(), m.size())));
    prev_end = end;
    if (m.empty()) {
      pos = end + 1;
      while (pos < s.size() && (static_cast<unsigned char>(s[pos]) & 0xC0) == 0x80) ++pos;
    } else {
      pos = end;
    }
  }
  return Value::List(std::move(out));
}

}  // namespace draco::cel
