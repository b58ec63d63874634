#include "controller/api/types.h"

#include <algorithm>

namespace draco::api {
namespace {

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
    uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (limit - d) / 10) return std::nullopt;
    v = v * 10 + d;
  }
  return neg ? static_cast<int64_t>(0 - v) : static_cast<int64_t>(v);
}

bool Contains(const std::vector<std::string>& values, std::string_view v) {
  return std::find(values.begin(), values.end(), v) != values.end();
}

// A requirement that labels.NewRequirement would reject never matches.
bool RequirementValid(const NodeSelectorRequirement& r) {
  const std::string& op = r.operator_;
  if (op == "In" || op == "NotIn") return !r.values.empty();
  if (op == "Exists" || op == "DoesNotExist") return r.values.empty();
  if (op == "Gt" || op == "Lt") return r.values.size() == 1 && ParseInt64(r.values[0]);
  return false;
}

bool FieldRequirementMatches(const NodeSelectorRequirement& r, std::string_view node_name) {
  if (r.key != "metadata.name" || r.values.size() != 1) return false;
  if (r.operator_ == "In") return r.values[0] == node_name;
  if (r.operator_ == "NotIn") return r.values[0] != node_name;
  return false;
}

}  // namespace

bool RequirementMatches(const NodeSelectorRequirement& r, const StringMap& labels) {
  if (!RequirementValid(r)) return false;
  auto it = labels.find(r.key);
  const bool has = it != labels.end();
  const std::string& op = r.operator_;
  if (op == "In") return has && Contains(r.values, it->second);
  if (op == "NotIn") return !has || !Contains(r.values, it->second);
  if (op == "Exists") return has;
  if (op == "DoesNotExist") return !has;
  if (!has) return false;
  std::optional<int64_t> label_value = ParseInt64(it->second);
  if (!label_value) return false;
  int64_t bound = *ParseInt64(r.values[0]);
  return op == "Gt" ? *label_value > bound : *label_value < bound;
}

bool TermMatches(const NodeSelectorTerm& term, const StringMap& labels,
                 std::string_view node_name) {
  if (term.match_expressions.empty() && term.match_fields.empty()) return false;
  for (const NodeSelectorRequirement& r : term.match_expressions) {
    if (!RequirementMatches(r, labels)) return false;
  }
  for (const NodeSelectorRequirement& r : term.match_fields) {
    if (!FieldRequirementMatches(r, node_name)) return false;
  }
  return true;
}

bool NodeSelectorMatches(const NodeSelector& selector, const StringMap& labels,
                         std::string_view node_name) {
  return std::any_of(selector.node_selector_terms.begin(), selector.node_selector_terms.end(),
                     [&](const NodeSelectorTerm& t) { return TermMatches(t, labels, node_name); });
}

bool TolerationToleratesTaint(const Toleration& t, const Taint& taint) {
  if (!t.effect.empty() && t.effect != taint.effect) return false;
  if (!t.key.empty() && t.key != taint.key) return false;
  if (t.operator_.empty() || t.operator_ == "Equal") return t.value == taint.value;
  return t.operator_ == "Exists";
}

bool DeviceTolerationToleratesTaint(const DeviceToleration& t, const DeviceTaint& taint) {
  if (!t.effect.empty() && t.effect != taint.effect) return false;
  if (!t.key.empty() && t.key != taint.key) return false;
  if (t.operator_.empty() || t.operator_ == "Equal") return t.value == taint.value;
  return t.operator_ == "Exists";
}

bool Node::IsReady() const {
  return std::any_of(
      status.conditions.begin(), status.conditions.end(),
      [](const NodeCondition& c) { return c.type == "Ready" && c.status == "True"; });
}

bool DeviceTaintSelectorMatches(const DeviceTaintSelector& selector, std::string_view driver,
                                std::string_view pool, std::string_view device) {
  if (selector.driver && !selector.driver->empty() && *selector.driver != driver) return false;
  if (selector.pool && !selector.pool->empty() && *selector.pool != pool) return false;
  if (selector.device && !selector.device->empty() && *selector.device != device) return false;
  return true;
}

}  // namespace draco::api
