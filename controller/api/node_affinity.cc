#include "controller/api/node_affinity.h"

#include <array>
#include <cstdint>
#include <optional>

namespace draco::api {
namespace {

bool IsAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]
bool IsQualifiedNamePart(std::string_view s) {
  if (s.empty() || s.size() > 63) return false;
  if (!IsAlnum(s.front()) || !IsAlnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return IsAlnum(c) || c == '-' || c == '_' || c == '.'; });
}

bool IsDns1123Subdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  size_t start = 0;
  while (true) {
    size_t dot = s.find('.', start);
    std::string_view label = s.substr(start, dot == std::string_view::npos ? dot : dot - start);
    if (label.empty()) return false;
    auto lower_alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
    if (!lower_alnum(label.front()) || !lower_alnum(label.back())) return false;
    for (char c : label) {
      if (!lower_alnum(c) && c != '-') return false;
    }
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

bool IsQualifiedName(std::string_view key) {
  size_t slash = key.find('/');
  if (slash == std::string_view::npos) return IsQualifiedNamePart(key);
  std::string_view prefix = key.substr(0, slash);
  std::string_view name = key.substr(slash + 1);
  if (name.find('/') != std::string_view::npos) return false;
  return IsDns1123Subdomain(prefix) && IsQualifiedNamePart(name);
}

bool IsLabelValue(std::string_view v) { return v.empty() || IsQualifiedNamePart(v); }

// Go strconv.ParseInt(s, 10, 64).
std::optional<int64_t> ParseInt64(std::string_view s) {
  bool neg = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s.empty()) return std::nullopt;
  const uint64_t limit = neg ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    auto d = static_cast<uint64_t>(c - '0');
    if (v > (limit - d) / 10) return std::nullopt;
    v = v * 10 + d;
  }
  return neg ? static_cast<int64_t>(0 - v) : static_cast<int64_t>(v);
}

std::string Quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }

}  // namespace

Status ValidateLabelRequirement(const NodeRequirementView& r) {
  static constexpr auto kOps =
      std::to_array<std::string_view>({"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"});
  if (std::find(kOps.begin(), kOps.end(), r.op) == kOps.end()) {
    return InvalidArgumentError("Unsupported value: " + Quoted(r.op) + " for operator");
  }
  if (!IsQualifiedName(r.key)) return InvalidArgumentError("invalid label key " + Quoted(r.key));
  if ((r.op == "In" || r.op == "NotIn") && r.values.empty()) {
    return InvalidArgumentError("for 'in', 'notin' operators, values set can't be empty");
  }
  if ((r.op == "Exists" || r.op == "DoesNotExist") && !r.values.empty()) {
    return InvalidArgumentError("values set must be empty for exists and does not exist");
  }
  if (r.op == "Gt" || r.op == "Lt") {
    if (r.values.size() != 1) {
      return InvalidArgumentError("for 'Gt', 'Lt' operators, exactly one value is required");
    }
    for (const auto& v : r.values) {
      if (!ParseInt64(v)) {
        return InvalidArgumentError("for 'Gt', 'Lt' operators, the value must be an integer");
      }
    }
  }
  for (const auto& v : r.values) {
    if (!IsLabelValue(v)) return InvalidArgumentError("invalid label value " + Quoted(v));
  }
  return OkStatus();
}

Status ValidateFieldRequirement(const NodeRequirementView& r) {
  if (r.op != "In" && r.op != "NotIn") {
    return InvalidArgumentError("Unsupported value: " + Quoted(r.op) + " for field operator");
  }
  if (r.values.size() != 1) return InvalidArgumentError("values: must have one element");
  return OkStatus();
}

bool LabelRequirementMatches(const NodeRequirementView& r, const StringMap& labels) {
  auto it = labels.find(r.key);
  const bool exists = it != labels.end();
  auto has = [&](const std::string& v) {
    return std::find(r.values.begin(), r.values.end(), v) != r.values.end();
  };
  if (r.op == "In") return exists && has(it->second);
  if (r.op == "NotIn") return !exists || !has(it->second);
  if (r.op == "Exists") return exists;
  if (r.op == "DoesNotExist") return !exists;
  if (r.op == "Gt" || r.op == "Lt") {
    if (!exists) return false;
    std::optional<int64_t> label = ParseInt64(it->second);
    std::optional<int64_t> bound = ParseInt64(r.values[0]);
    if (!label || !bound) return false;
    return r.op == "Gt" ? *label > *bound : *label < *bound;
  }
  return false;
}

bool FieldRequirementMatches(const NodeRequirementView& r, std::string_view node_name) {
  std::string_view value = r.key == "metadata.name" ? node_name : std::string_view();
  return r.op == "In" ? value == r.values[0] : value != r.values[0];
}

}  // namespace draco::api
