#include "controller/allocator/node_selector.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <string>

namespace draco::alloc {
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

bool ParseInt64(std::string_view s, int64_t* out) {
  if (s.empty()) return false;
  std::string str(s);
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(str.c_str(), &end, 10);
  if (errno != 0 || end != str.c_str() + str.size()) return false;
  // strconv.ParseInt rejects leading blanks, which strtoll accepts.
  if (str[0] == ' ' || str[0] == '\t' || str[0] == '\n') return false;
  *out = v;
  return true;
}

Status ValidateExpression(const NodeSelectorRequirement& r) {
  static const char* kOps[] = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"};
  if (std::find(std::begin(kOps), std::end(kOps), r.op) == std::end(kOps)) {
    return InvalidArgumentError("Unsupported value: \"" + r.op + "\" for operator");
  }
  if (!IsQualifiedName(r.key)) return InvalidArgumentError("invalid label key \"" + r.key + "\"");
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
    int64_t unused;
    for (const auto& v : r.values) {
      if (!ParseInt64(v, &unused)) {
        return InvalidArgumentError("for 'Gt', 'Lt' operators, the value must be an integer");
      }
    }
  }
  for (const auto& v : r.values) {
    if (!IsLabelValue(v)) return InvalidArgumentError("invalid label value \"" + v + "\"");
  }
  return OkStatus();
}

Status ValidateField(const NodeSelectorRequirement& r) {
  if (r.op != "In" && r.op != "NotIn") {
    return InvalidArgumentError("Unsupported value: \"" + r.op + "\" for field operator");
  }
  if (r.values.size() != 1) return InvalidArgumentError("values: must have one element");
  return OkStatus();
}

bool ExpressionMatches(const NodeSelectorRequirement& r, const Node& node) {
  auto it = node.labels.find(r.key);
  bool exists = it != node.labels.end();
  auto has = [&](const std::string& v) {
    return std::find(r.values.begin(), r.values.end(), v) != r.values.end();
  };
  if (r.op == "In") return exists && has(it->second);
  if (r.op == "NotIn") return !exists || !has(it->second);
  if (r.op == "Exists") return exists;
  if (r.op == "DoesNotExist") return !exists;
  if (r.op == "Gt" || r.op == "Lt") {
    if (!exists) return false;
    int64_t lv, rv;
    if (!ParseInt64(it->second, &lv) || !ParseInt64(r.values[0], &rv)) return false;
    return r.op == "Gt" ? lv > rv : lv < rv;
  }
  return false;
}

bool FieldMatches(const NodeSelectorRequirement& r, const Node& node) {
  // fields.Set lookup: only metadata.name is present; a missing key reads as "".
  std::string value = r.key == "metadata.name" ? node.name : std::string();
  return r.op == "In" ? value == r.values[0] : value != r.values[0];
}

}  // namespace

Status ValidateNodeSelector(const NodeSelector& ns) {
  for (const auto& t : ns.terms) {
    for (const auto& r : t.match_expressions) {
      if (Status s = ValidateExpression(r); !s.ok()) return s;
    }
    for (const auto& r : t.match_fields) {
      if (Status s = ValidateField(r); !s.ok()) return s;
    }
  }
  return OkStatus();
}

StatusOr<bool> NodeMatches(const Node& node, std::string_view node_name, bool all_nodes,
                           const NodeSelector* selector) {
  if (!node_name.empty()) return node.name == node_name;
  if (all_nodes) return true;
  if (selector == nullptr) return false;
  if (Status s = ValidateNodeSelector(*selector); !s.ok()) return s;
  for (const auto& t : selector->terms) {
    if (t.match_expressions.empty() && t.match_fields.empty()) continue;
    bool ok = std::all_of(t.match_expressions.begin(), t.match_expressions.end(),
                          [&](const auto& r) { return ExpressionMatches(r, node); });
    // Field requirements are only consulted when the node has fields (a name).
    if (ok && !node.name.empty()) {
      ok = std::all_of(t.match_fields.begin(), t.match_fields.end(),
                       [&](const auto& r) { return FieldMatches(r, node); });
    }
    if (ok) return true;
  }
  return false;
}

}  // namespace draco::alloc
