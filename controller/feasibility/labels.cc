#include "controller/feasibility/labels.h"

#include <algorithm>

namespace draco::feasibility {

StatusOr<Selector> Selector::Parse(const std::optional<api::LabelSelector>& s,
                                   const std::string& field) {
  Selector out;
  if (!s) return out;
  out.nothing_ = false;
  for (const auto& [k, v] : s->match_labels) {
    out.reqs_.push_back(api::LabelSelectorRequirement{k, "In", {v}, {}});
  }
  for (size_t i = 0; i < s->match_expressions.size(); ++i) {
    const auto& r = s->match_expressions[i];
    std::string where = field + ".matchExpressions[" + std::to_string(i) + "]";
    if (r.key.empty()) return InvalidArgumentError(where + ".key: must be non-empty");
    if (r.operator_ == "In" || r.operator_ == "NotIn") {
      if (r.values.empty()) {
        return InvalidArgumentError(where + ".values: must be specified when `operator` is '" +
                                    r.operator_ + "'");
      }
    } else if (r.operator_ == "Exists" || r.operator_ == "DoesNotExist") {
      if (!r.values.empty()) {
        return InvalidArgumentError(where + ".values: may not be specified when `operator` is '" +
                                    r.operator_ + "'");
      }
    } else {
      return InvalidArgumentError(where + ".operator: \"" + r.operator_ +
                                  "\" is not a valid label selector operator");
    }
    out.reqs_.push_back(r);
  }
  return out;
}

void Selector::AddEquals(const std::string& key, const std::string& value) {
  if (nothing_) return;
  reqs_.push_back(api::LabelSelectorRequirement{key, "In", {value}, {}});
}

bool Selector::Matches(const api::StringMap& labels) const {
  if (nothing_) return false;
  for (const auto& r : reqs_) {
    auto it = labels.find(r.key);
    bool has = it != labels.end();
    bool in = has && std::find(r.values.begin(), r.values.end(), it->second) != r.values.end();
    if (r.operator_ == "In" && !in) return false;
    if (r.operator_ == "NotIn" && in) return false;
    if (r.operator_ == "Exists" && !has) return false;
    if (r.operator_ == "DoesNotExist" && has) return false;
  }
  return true;
}

bool MatchTopologySelectorTerms(const std::vector<api::TopologySelectorTerm>& terms,
                                const api::StringMap& labels) {
  if (terms.empty()) return true;
  for (const auto& term : terms) {
    if (term.match_label_expressions.empty()) continue;  // an empty term matches nothing
    bool all = true;
    for (const auto& r : term.match_label_expressions) {
      auto it = labels.find(r.key);
      if (it == labels.end() ||
          std::find(r.values.begin(), r.values.end(), it->second) == r.values.end()) {
        all = false;
        break;
      }
    }
    if (all) return true;
  }
  return false;
}

}  // namespace draco::feasibility
