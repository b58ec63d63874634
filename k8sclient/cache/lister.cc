#include "k8sclient/cache/lister.h"

#include <algorithm>
#include <cctype>
#include <optional>

namespace draco::k8s::cache {
namespace {

std::string Trim(std::string_view s) {
  size_t b = 0;
  size_t e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

// Splits on commas that are not inside parentheses.
std::vector<std::string> SplitTopLevel(const std::string& s) {
  std::vector<std::string> out;
  int depth = 0;
  std::string cur;
  for (char c : s) {
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (c == ',' && depth == 0) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  out.push_back(cur);
  return out;
}

}  // namespace

StatusOr<LabelSelector> LabelSelector::Parse(const std::string& selector) {
  LabelSelector sel;
  if (Trim(selector).empty()) return sel;
  for (const std::string& raw : SplitTopLevel(selector)) {
    std::string term = Trim(raw);
    if (term.empty()) return InvalidArgumentError("empty term in selector: " + selector);
    Requirement r;
    auto set_op = [&](const std::string& word, Requirement::Op op) -> std::optional<Status> {
      size_t pos = term.find(" " + word + " ");
      if (pos == std::string::npos) return std::nullopt;
      r.key = Trim(term.substr(0, pos));
      std::string rest = Trim(term.substr(pos + word.size() + 2));
      if (rest.size() < 2 || rest.front() != '(' || rest.back() != ')') {
        return InvalidArgumentError("expected (values) in selector term: " + term);
      }
      for (const auto& v : SplitTopLevel(rest.substr(1, rest.size() - 2))) {
        r.values.push_back(Trim(v));
      }
      r.op = op;
      return OkStatus();
    };
    if (auto s = set_op("notin", Requirement::Op::kNotIn); s.has_value()) {
      if (!s->ok()) return *s;
    } else if (auto s2 = set_op("in", Requirement::Op::kIn); s2.has_value()) {
      if (!s2->ok()) return *s2;
    } else if (size_t ne = term.find("!="); ne != std::string::npos) {
      r.key = Trim(term.substr(0, ne));
      r.op = Requirement::Op::kNotIn;
      r.values = {Trim(term.substr(ne + 2))};
    } else if (size_t eq = term.find('='); eq != std::string::npos) {
      r.key = Trim(term.substr(0, eq));
      size_t vstart = (eq + 1 < term.size() && term[eq + 1] == '=') ? eq + 2 : eq + 1;
      r.op = Requirement::Op::kIn;
      r.values = {Trim(term.substr(vstart))};
    } else if (term.front() == '!') {
      r.key = Trim(term.substr(1));
      r.op = Requirement::Op::kDoesNotExist;
    } else {
      r.key = term;
      r.op = Requirement::Op::kExists;
    }
    if (r.key.empty()) return InvalidArgumentError("missing key in selector term: " + term);
    sel.requirements_.push_back(std::move(r));
  }
  return sel;
}

bool LabelSelector::Matches(const std::map<std::string, std::string>& labels) const {
  for (const auto& r : requirements_) {
    auto it = labels.find(r.key);
    const bool has = it != labels.end();
    switch (r.op) {
      case Requirement::Op::kExists:
        if (!has) return false;
        break;
      case Requirement::Op::kDoesNotExist:
        if (has) return false;
        break;
      case Requirement::Op::kIn:
        if (!has || std::find(r.values.begin(), r.values.end(), it->second) == r.values.end()) {
          return false;
        }
        break;
      case Requirement::Op::kNotIn:
        if (has && std::find(r.values.begin(), r.values.end(), it->second) != r.values.end()) {
          return false;
        }
        break;
    }
  }
  return true;
}

ObjectPtr Lister::Get(const std::string& ns, const std::string& name) const {
  return indexer_.GetByKey(ns.empty() ? name : ns + "/" + name);
}

std::vector<ObjectPtr> Lister::List(const LabelSelector& selector) const {
  std::vector<ObjectPtr> out;
  for (auto& obj : indexer_.List()) {
    if (selector.Matches(obj->labels())) out.push_back(std::move(obj));
  }
  return out;
}

std::vector<ObjectPtr> Lister::ListNamespace(const std::string& ns,
                                             const LabelSelector& selector) const {
  std::vector<ObjectPtr> candidates;
  auto by_index = indexer_.ByIndex(kNamespaceIndex, ns);
  if (by_index.ok()) {
    candidates = std::move(by_index).value();
  } else {
    for (auto& obj : indexer_.List()) {
      if (obj->namespace_name() == ns) candidates.push_back(std::move(obj));
    }
  }
  std::vector<ObjectPtr> out;
  for (auto& obj : candidates) {
    if (selector.Matches(obj->labels())) out.push_back(std::move(obj));
  }
  return out;
}

}  // namespace draco::k8s::cache
