// See group.h.
#include "controller/group/group.h"

#include <algorithm>
#include <charconv>
#include <map>

namespace draco::group {
namespace {

const std::string* Find(const api::StringMap& m, std::string_view key) {
  auto it = m.find(std::string(key));
  return it == m.end() ? nullptr : &it->second;
}

// A positive count from a label or annotation value; 0 when absent or malformed.
int64_t Count(const std::string* v) {
  if (!v) return 0;
  int64_t n = 0;
  auto [p, ec] = std::from_chars(v->data(), v->data() + v->size(), n);
  if (ec != std::errc() || p != v->data() + v->size() || n < 0) return 0;
  return n;
}

int64_t MinOverride(const api::ObjectMeta& m) {
  if (const auto* v = Find(m.labels, kMinMembersKey)) return Count(v);
  return Count(Find(m.annotations, kMinMembersKey));
}

std::string SourceName(Source s) {
  switch (s) {
    case Source::kPodGroup:
      return "PodGroup";
    case Source::kLabel:
      return "group";
    case Source::kLeaderWorkerSet:
      return "LeaderWorkerSet group";
    case Source::kJobSet:
      return "JobSet";
    case Source::kKueue:
      return "Kueue pod group";
  }
  return "group";
}

std::optional<std::pair<Source, std::string>> SourceOf(const api::Pod& pod) {
  const auto& labels = pod.metadata.labels;
  if (pod.spec.scheduling_group && pod.spec.scheduling_group->pod_group_name) {
    return std::make_pair(Source::kPodGroup, *pod.spec.scheduling_group->pod_group_name);
  }
  if (const auto* v = Find(labels, kGroupLabel)) return std::make_pair(Source::kLabel, *v);
  if (const auto* v = Find(labels, kLwsGroupKeyLabel)) {
    return std::make_pair(Source::kLeaderWorkerSet, *v);
  }
  if (const auto* v = Find(labels, kJobSetNameLabel)) return std::make_pair(Source::kJobSet, *v);
  if (const auto* v = Find(labels, kKueueGroupLabel)) return std::make_pair(Source::kKueue, *v);
  return std::nullopt;
}

// The attribute's domain and name: "gpu.example.com/clique" -> {"gpu.example.com", "clique"}.
std::optional<std::pair<std::string, std::string>> Split(std::string_view qualified) {
  size_t slash = qualified.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == qualified.size()) {
    return std::nullopt;
  }
  return std::make_pair(std::string(qualified.substr(0, slash)),
                        std::string(qualified.substr(slash + 1)));
}

const api::DeviceAttribute* Lookup(const api::Device& d, const std::string& driver,
                                   const std::pair<std::string, std::string>& qn) {
  if (auto it = d.attributes.find(qn.first + "/" + qn.second); it != d.attributes.end()) {
    return &it->second;
  }
  if (driver != qn.first) return nullptr;
  auto it = d.attributes.find(qn.second);
  return it == d.attributes.end() ? nullptr : &it->second;
}

// The value as text and as a CEL literal; nullopt for kinds that do not form domains (the
// first member set decides, in the allocator's order: int, bool, string, then the others).
std::optional<std::pair<std::string, std::string>> Value(const api::DeviceAttribute& a) {
  if (a.int_value) {
    return std::make_pair(std::to_string(*a.int_value), std::to_string(*a.int_value));
  }
  if (a.bool_value) {
    std::string v = *a.bool_value ? "true" : "false";
    return std::make_pair(v, v);
  }
  if (a.string_value) {
    std::string lit = "\"";
    for (char c : *a.string_value) {
      if (c == '"' || c == '\\') lit += '\\';
      lit += c;
    }
    return std::make_pair(*a.string_value, lit + "\"");
  }
  return std::nullopt;
}

void AddSelector(std::vector<api::DeviceSelector>& selectors, const std::string& cel) {
  api::DeviceSelector s;
  s.cel = api::CELDeviceSelector{cel, {}};
  selectors.push_back(std::move(s));
}

}  // namespace

std::string GroupKeyOf(const api::Pod& pod) {
  auto src = SourceOf(pod);
  if (!src) return "";
  return pod.metadata.namespace_ + "/" + SourceName(src->first) + "/" + src->second;
}

std::optional<GroupRef> GroupOf(const api::Pod& pod, const api::PodGroup* pod_group) {
  auto src = SourceOf(pod);
  if (!src) return std::nullopt;
  GroupRef g;
  g.source = src->first;
  g.name = src->second;
  g.key = pod.metadata.namespace_ + "/" + SourceName(g.source) + "/" + g.name;
  g.display = SourceName(g.source) + " " + g.name;
  const auto& m = pod.metadata;
  switch (g.source) {
    case Source::kPodGroup:
      if (pod_group) {
        const auto& policy = pod_group->spec.scheduling_policy;
        if (!policy || !policy->gang) return std::nullopt;  // basic: pod by pod
        g.min_members = policy->gang->min_count;
        if (const auto* v = Find(pod_group->metadata.annotations, kMatchAttributeKey)) {
          g.match_attribute = *v;
        }
      }
      break;
    case Source::kLabel:
      g.min_members = MinOverride(m);
      break;
    case Source::kLeaderWorkerSet:
      if (const auto* lws = Find(m.labels, kLwsNameLabel)) {
        const auto* index = Find(m.labels, kLwsGroupIndexLabel);
        g.display = "LeaderWorkerSet " + *lws + (index ? " group " + *index : "");
      }
      g.min_members = MinOverride(m);
      if (g.min_members == 0) g.min_members = Count(Find(m.annotations, kLwsSizeAnnotation));
      break;
    case Source::kJobSet:
      g.min_members = MinOverride(m);
      if (g.min_members == 0) g.min_members = Count(Find(m.annotations, kJobSetGlobalReplicasKey));
      if (g.min_members == 0) g.min_members = Count(Find(m.labels, kJobSetGlobalReplicasKey));
      break;
    case Source::kKueue:
      g.min_members = MinOverride(m);
      if (g.min_members == 0) {
        g.min_members = Count(Find(m.annotations, kKueueTotalCountAnnotation));
      }
      break;
  }
  if (const auto* v = Find(m.annotations, kMatchAttributeKey)) g.match_attribute = *v;
  return g;
}

StatusOr<std::vector<Domain>> DomainsOf(const std::vector<SlicePtr>& slices,
                                        std::string_view attribute) {
  auto qn = Split(attribute);
  if (!qn) {
    return InvalidArgumentError("group match attribute \"" + std::string(attribute) +
                                "\" is not <domain>/<name>");
  }
  std::map<std::string, Domain> by_value;
  for (const auto& s : slices) {
    for (const auto& d : s->spec.devices) {
      const api::DeviceAttribute* a = Lookup(d, s->spec.driver, *qn);
      if (!a) continue;
      auto v = Value(*a);
      if (!v) continue;
      Domain& dom = by_value[v->first];
      if (dom.selector.empty()) {
        std::string attrs = "device.attributes[\"" + qn->first + "\"]";
        dom.value = v->first;
        dom.selector = "\"" + qn->second + "\" in ";
        dom.selector += attrs;
        dom.selector += " && ";
        dom.selector += attrs;
        dom.selector += "[\"";
        dom.selector += qn->second;
        dom.selector += "\"] == ";
        dom.selector += v->second;
      }
      ++dom.devices;
    }
  }
  std::vector<Domain> out;
  out.reserve(by_value.size());
  for (auto& [v, d] : by_value) out.push_back(std::move(d));
  std::stable_sort(out.begin(), out.end(),
                   [](const Domain& a, const Domain& b) { return a.devices < b.devices; });
  return out;
}

std::optional<std::string> DeviceDomain(const std::vector<SlicePtr>& slices,
                                        std::string_view attribute, std::string_view driver,
                                        std::string_view pool, std::string_view device) {
  auto qn = Split(attribute);
  if (!qn) return std::nullopt;
  for (const auto& s : slices) {
    if (s->spec.driver != driver || s->spec.pool.name != pool) continue;
    for (const auto& d : s->spec.devices) {
      if (d.name != device) continue;
      const api::DeviceAttribute* a = Lookup(d, s->spec.driver, *qn);
      if (!a) return std::nullopt;
      auto v = Value(*a);
      if (v) return v->first;
      return std::nullopt;
    }
  }
  return std::nullopt;
}

api::ResourceClaim Constrained(const api::ResourceClaim& claim, const std::string& selector) {
  api::ResourceClaim c = claim;
  for (auto& r : c.spec.devices.requests) {
    if (r.exactly) AddSelector(r.exactly->selectors, selector);
    for (auto& sub : r.first_available) AddSelector(sub.selectors, selector);
  }
  return c;
}

PlanOutcome PlanGroup(
    size_t members, size_t need, const std::vector<Domain>& domains, bool constrained,
    const std::function<MemberOutcome(size_t, const Domain*, const std::string&)>& try_member,
    const std::function<void()>& undo) {
  PlanOutcome out;
  const size_t attempts = constrained ? domains.size() : 1;
  bool have_failure = false;
  for (size_t a = 0; a < attempts; ++a) {
    const Domain* dom = constrained ? &domains[a] : nullptr;
    ++out.attempts;
    std::vector<size_t> placed;
    size_t failed = 0;
    std::string prefer;
    std::optional<std::pair<size_t, std::string>> first_failure;
    for (size_t i = 0; i < members && placed.size() < members; ++i) {
      if (members - failed < need) break;
      MemberOutcome m = try_member(i, dom, prefer);
      if (m.placed) {
        placed.push_back(i);
        prefer = m.node;
        continue;
      }
      ++failed;
      if (!first_failure) first_failure = std::make_pair(i, m.message);
      if (members - failed < need) break;
    }
    if (placed.size() >= need) {
      out.ok = true;
      if (constrained) out.domain = a;
      out.placed = std::move(placed);
      return out;
    }
    if (!have_failure || placed.size() > out.placed_before_failure) {
      have_failure = true;
      out.failed_domain = constrained ? std::optional<size_t>(a) : std::nullopt;
      out.placed_before_failure = placed.size();
      if (first_failure) {
        out.failed_member = first_failure->first;
        out.message = first_failure->second;
      }
    }
    undo();
  }
  if (constrained && domains.empty()) out.message = "no device carries the match attribute";
  return out;
}

std::string DescribeFailure(const GroupRef& g, const PlanOutcome& out,
                            const std::vector<Domain>& domains, const std::string& member_name) {
  std::string msg =
      g.display + " needs " + std::to_string(g.min_members) + " member(s) placed at once";
  if (!g.match_attribute.empty()) {
    msg += " with one " + g.match_attribute;
    if (domains.empty()) return msg + ": no device carries that attribute";
    msg += " (" + std::to_string(out.attempts) + " value(s) tried";
    if (out.failed_domain) {
      msg += "; closest: " + g.match_attribute + "=" + domains[*out.failed_domain].value;
    }
    msg += ")";
  }
  msg += ": " + std::to_string(out.placed_before_failure) + " placed, then member " + member_name +
         " fits nowhere: " + out.message;
  return msg;
}

}  // namespace draco::group
