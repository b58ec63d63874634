#include "controller/api/semver.h"

#include <optional>

namespace draco::api {
namespace {

constexpr std::string_view kNumbers = "0123456789";
constexpr std::string_view kAlphaNum =
    "-ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

bool ContainsOnly(std::string_view s, std::string_view set) {
  return s.find_first_not_of(set) == std::string_view::npos;
}
bool HasLeadingZeroes(std::string_view s) { return s.size() > 1 && s[0] == '0'; }

std::string Quoted(std::string_view s) {
  // Go's %q for the ASCII strings that can reach these messages.
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  return out + "\"";
}

// strconv.ParseUint(s, 10, 64) for an all-digit string.
StatusOr<uint64_t> ParseUint(std::string_view s) {
  if (s.empty()) return InvalidArgumentError("strconv.ParseUint: parsing \"\": invalid syntax");
  uint64_t v = 0;
  for (char c : s) {
    auto d = static_cast<uint64_t>(c - '0');
    if (v > (UINT64_MAX - d) / 10) {
      return InvalidArgumentError("strconv.ParseUint: parsing " + Quoted(s) +
                                  ": value out of range");
    }
    v = v * 10 + d;
  }
  return v;
}

std::vector<std::string_view> Split(std::string_view s, char sep, size_t max_parts) {
  std::vector<std::string_view> parts;
  while (parts.size() + 1 < max_parts) {
    size_t i = s.find(sep);
    if (i == std::string_view::npos) break;
    parts.push_back(s.substr(0, i));
    s.remove_prefix(i + 1);
  }
  parts.push_back(s);
  return parts;
}

// Kubernetes' normalizeAndParse pre-processing (apiserver/pkg/cel/library/semverlib.go).
StatusOr<std::string> Normalize(std::string_view s) {
  if (!s.empty() && s[0] == 'v') s.remove_prefix(1);
  std::vector<std::string> parts;
  for (std::string_view p : Split(s, '.', 3)) {
    std::string part(p);
    if (part.size() > 1) {
      size_t nz = part.find_first_not_of('0');
      part = nz == std::string::npos ? std::string() : part.substr(nz);
      if (part.empty() || kNumbers.find(part[0]) == std::string_view::npos) part.insert(0, 1, '0');
    }
    parts.push_back(std::move(part));
  }
  if (parts.size() < 3) {
    if (parts.back().find_first_of("+-") != std::string::npos) {
      return InvalidArgumentError("short version cannot contain PreRelease/Build meta data");
    }
    while (parts.size() < 3) parts.emplace_back("0");
  }
  return parts[0] + "." + parts[1] + "." + parts[2];
}

}  // namespace

StatusOr<SemVer> SemVer::Parse(std::string_view input, bool normalize) {
  std::string normalized;
  std::string_view s = input;
  if (normalize) {
    StatusOr<std::string> n = Normalize(input);
    if (!n.ok()) return n.status();
    normalized = std::move(n).value();
    s = normalized;
  }
  if (s.empty()) return InvalidArgumentError("Version string empty");
  std::vector<std::string_view> parts = Split(s, '.', 3);
  if (parts.size() != 3) return InvalidArgumentError("No Major.Minor.Patch elements found");

  SemVer v;
  if (!ContainsOnly(parts[0], kNumbers)) {
    return InvalidArgumentError("Invalid character(s) found in major number " + Quoted(parts[0]));
  }
  if (HasLeadingZeroes(parts[0])) {
    return InvalidArgumentError("Major number must not contain leading zeroes " + Quoted(parts[0]));
  }
  StatusOr<uint64_t> major = ParseUint(parts[0]);
  if (!major.ok()) return major.status();
  if (!ContainsOnly(parts[1], kNumbers)) {
    return InvalidArgumentError("Invalid character(s) found in minor number " + Quoted(parts[1]));
  }
  if (HasLeadingZeroes(parts[1])) {
    return InvalidArgumentError("Minor number must not contain leading zeroes " + Quoted(parts[1]));
  }
  StatusOr<uint64_t> minor = ParseUint(parts[1]);
  if (!minor.ok()) return minor.status();
  v.major_ = *major;
  v.minor_ = *minor;

  std::string_view patch_str = parts[2];
  std::vector<std::string_view> build, prerelease;
  if (size_t i = patch_str.find('+'); i != std::string_view::npos) {
    build = Split(patch_str.substr(i + 1), '.', SIZE_MAX);
    patch_str = patch_str.substr(0, i);
  }
  if (size_t i = patch_str.find('-'); i != std::string_view::npos) {
    prerelease = Split(patch_str.substr(i + 1), '.', SIZE_MAX);
    patch_str = patch_str.substr(0, i);
  }
  if (!ContainsOnly(patch_str, kNumbers)) {
    return InvalidArgumentError("Invalid character(s) found in patch number " + Quoted(patch_str));
  }
  if (HasLeadingZeroes(patch_str)) {
    return InvalidArgumentError("Patch number must not contain leading zeroes " +
                                Quoted(patch_str));
  }
  StatusOr<uint64_t> patch = ParseUint(patch_str);
  if (!patch.ok()) return patch.status();
  v.patch_ = *patch;

  for (std::string_view pr : prerelease) {
    if (pr.empty()) return InvalidArgumentError("Prerelease is empty");
    PreRelease p;
    if (ContainsOnly(pr, kNumbers)) {
      if (HasLeadingZeroes(pr)) {
        return InvalidArgumentError("Numeric PreRelease version must not contain leading zeroes " +
                                    Quoted(pr));
      }
      StatusOr<uint64_t> num = ParseUint(pr);
      if (!num.ok()) return num.status();
      p.is_num = true;
      p.num = *num;
    } else if (ContainsOnly(pr, kAlphaNum)) {
      p.str = std::string(pr);
    } else {
      return InvalidArgumentError("Invalid character(s) found in prerelease " + Quoted(pr));
    }
    v.pre_.push_back(std::move(p));
  }
  for (std::string_view b : build) {
    if (b.empty()) return InvalidArgumentError("Build meta data is empty");
    if (!ContainsOnly(b, kAlphaNum)) {
      return InvalidArgumentError("Invalid character(s) found in build meta data " + Quoted(b));
    }
    v.build_.emplace_back(b);
  }
  return v;
}

int SemVer::Compare(const SemVer& o) const {
  auto cmp = [](auto a, auto b) { return a == b ? 0 : (a > b ? 1 : -1); };
  if (int c = cmp(major_, o.major_); c != 0) return c;
  if (int c = cmp(minor_, o.minor_); c != 0) return c;
  if (int c = cmp(patch_, o.patch_); c != 0) return c;
  if (pre_.empty() || o.pre_.empty()) {
    if (pre_.empty() && o.pre_.empty()) return 0;
    return pre_.empty() ? 1 : -1;
  }
  size_t i = 0;
  for (; i < pre_.size() && i < o.pre_.size(); ++i) {
    const PreRelease& a = pre_[i];
    const PreRelease& b = o.pre_[i];
    int c;
    if (a.is_num != b.is_num) {
      c = a.is_num ? -1 : 1;
    } else if (a.is_num) {
      c = cmp(a.num, b.num);
    } else {
      c = cmp(a.str, b.str);
    }
    if (c != 0) return c;
  }
  if (i == pre_.size() && i == o.pre_.size()) return 0;
  return i == pre_.size() ? -1 : 1;
}

std::string SemVer::ToString() const {
  std::string out =
      std::to_string(major_) + "." + std::to_string(minor_) + "." + std::to_string(patch_);
  for (size_t i = 0; i < pre_.size(); ++i) {
    out += i == 0 ? "-" : ".";
    out += pre_[i].is_num ? std::to_string(pre_[i].num) : pre_[i].str;
  }
  for (size_t i = 0; i < build_.size(); ++i) {
    out += i == 0 ? "+" : ".";
    out += build_[i];
  }
  return out;
}

}  // namespace draco::api
