#include "controller/simulate/simulate.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "controller/allocator/allocator.h"
#include "controller/allocator/explain.h"
#include "controller/allocator/features.h"
#include "controller/api/codec.h"
#include "controller/feasibility/feasibility.h"
#include "controller/simulate/engine.h"
#include "controller/simulate/explain_pod.h"
#include "controller/simulate/extended_resources.h"
#include "controller/simulate/groups.h"
#include "controller/simulate/workloads.h"

namespace draco::simulate {
namespace {

int ParseArgs(int argc, char** argv, Options* opts, std::ostream& err, bool explain) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "-f" || a == "--filename") {
      opts->paths.push_back(next());
    } else if (a.rfind("--filename=", 0) == 0) {
      opts->paths.push_back(a.substr(11));
    } else if (a == "-o" || a == "--output") {
      std::string o = next();
      if (o != "json" && o != "text") {
        err << "unknown output format " << o << " (json|text)\n";
        return kExitInput;
      }
      opts->json = o == "json";
    } else if (a == "--node") {
      opts->node = next();
    } else if (a == "--feature-gates") {
      opts->feature_gates = next();
    } else if (a.rfind("--feature-gates=", 0) == 0) {
      opts->feature_gates = a.substr(16);
    } else if (a == "--kubernetes-version") {
      auto minor = ParseKubernetesMinor(next());
      if (!minor.ok()) {
        err << minor.status().message() << "\n";
        return kExitInput;
      }
      opts->kubernetes_minor = *minor;
    } else if (a == "--explain-all") {
      opts->explain_all = true;
    } else if (a == "-h" || a == "--help") {
      err << (explain ? "usage: draco explain -f FILE|DIR (CLAIM | pod/NAME) [--node NODE] [-o "
                        "text|json]"
                      : "usage: draco simulate -f FILE|DIR [-f ...] [-o text|json]")
          << " [--kubernetes-version 1.MINOR] [--feature-gates A=true,B=false]\n";
      return kExitInput;
    } else if (explain && opts->claim.empty() && !a.empty() && a[0] != '-') {
      opts->claim = a;
    } else {
      err << "unknown argument " << a << "\n";
      return kExitInput;
    }
  }
  if (opts->paths.empty()) {
    err << "missing -f FILE|DIR\n";
    return kExitInput;
  }
  if (explain && opts->claim.empty()) {
    err << "missing claim name (namespace/name or name)\n";
    return kExitInput;
  }
  return -1;
}

// `draco explain pod/[NS/]NAME`: the pods before it are allocated first, as in simulate; then the
// pod's claims are shown or explained (explain_pod.h).
int ExplainPod(Simulation& sim, const Options& opts, const std::string& pod, std::ostream& out,
               std::ostream& err) {
  ExplainRequest req;
  req.ns = pod.find('/') == std::string::npos ? "default" : pod.substr(0, pod.find('/'));
  req.target = "pod/" + pod.substr(pod.find('/') + 1);
  req.node = opts.node;
  req.output = opts.json ? "json" : (opts.explain_all ? "wide" : "text");
  std::string kind, name;
  const Group* target = FindTarget(sim, req, &kind, &name);
  for (const Group& g : sim.groups) {
    if (&g == target) break;
    RunGroup(sim, g, false, "");  // earlier pods occupy devices
  }
  return ExplainTarget(sim, req, out, err);
}

// One unit (pod or claim) of `draco simulate -o json`; `pod_group`: the display name of the
// pod's group, "" when none.
void WriteUnitJson(const Simulation& sim, const Group& g, const GroupOutcome& go,
                   const std::string& pod_group, alloc::JsonWriter& w) {
  w.StartObject();
  w.Key("name");
  w.String(g.label.c_str());
  if (!pod_group.empty()) {
    w.Key("group");
    w.String(pod_group.c_str());
  }
  w.Key("allocated");
  w.Bool(go.allocated);
  if (!go.node.empty()) {
    w.Key("node");
    w.String(go.node.c_str());
  }
  if (!go.message.empty()) {
    w.Key("message");
    w.String(go.message.c_str());
  }
  w.Key("claims");
  w.StartArray();
  for (size_t i : g.claims) {
    const api::ResourceClaim& c = sim.claims[i];
    w.StartObject();
    w.Key("claim");
    std::string k = c.metadata.namespace_ + "/" + c.metadata.name;
    w.String(k.c_str());
    if (c.status.allocation) {
      w.Key("allocation");
      WriteAllocation(*c.status.allocation, w);
    }
    w.EndObject();
  }
  w.EndArray();
  w.Key("explanations");
  w.StartArray();
  for (const auto& e : go.explanations) alloc::EncodeExplanation(e, w);
  w.EndArray();
  w.Key("filteredNodes");
  w.StartArray();
  for (const auto& f : go.filtered) w.String(f.c_str());
  w.EndArray();
  w.EndObject();
}

// One unit (pod or claim) of the text output.
void PrintUnit(const Simulation& sim, const Group& g, const GroupOutcome& go, std::ostream& out) {
  if (go.allocated) {
    out << g.label << ": allocated" << (go.node.empty() ? "" : " on " + go.node)
        << (go.message.empty() ? "" : " (" + go.message + ")") << "\n";
    for (size_t i : g.claims) {
      const auto& a = sim.claims[i].status.allocation;
      if (a) PrintAllocation(sim.claims[i], *a, out);
    }
    return;
  }
  out << g.label << ": NOT ALLOCATED (" << go.message << ")\n";
  for (const auto& f : go.filtered) out << "  " << f << "\n";
  PrintExplanations(go.explanations, false, "  ", out);
}

}  // namespace

StatusOr<int> ParseKubernetesMinor(std::string v) {
  if (v.starts_with("v")) v = v.substr(1);
  int minor = v.starts_with("1.") ? std::atoi(v.c_str() + 2) : -1;
  if (minor < alloc::kOldestKnownMinor || minor > alloc::kNewestKnownMinor) {
    return InvalidArgumentError("--kubernetes-version " + v + ": draco knows 1." +
                                std::to_string(alloc::kOldestKnownMinor) + " to 1." +
                                std::to_string(alloc::kNewestKnownMinor));
  }
  return minor;
}

int RunSimulate(const Options& opts, std::ostream& out, std::ostream& err) {
  Simulation sim;
  if (Status s = Build(opts, &sim); !s.ok()) {
    err << "draco simulate: " << s.message() << "\n";
    return kExitInput;
  }
  const std::string ignored = IgnoredLine(sim.in);
  if (sim.groups.empty() && !ignored.empty()) {
    err << "draco simulate: no pods, workloads or claims to simulate; " << ignored << "\n";
    return kExitInput;
  }
  int failed = 0, allocated = 0, hidden = 0;
  rapidjson::StringBuffer buf;
  alloc::JsonWriter w(buf);
  if (opts.json) {
    w.StartObject();
    for (const auto& [key, list] :
         {std::pair{"workloads", &sim.in.workloads}, std::pair{"ignored", &sim.in.ignored}}) {
      w.Key(key);
      w.StartArray();
      for (const auto& e : *list) w.String(e.c_str());
      w.EndArray();
    }
    w.Key("groups");
    w.StartArray();
  } else {
    for (const auto& e : sim.in.workloads) out << "workload " << e << "\n";
  }
  std::vector<int> group_of;
  const std::vector<PodGroupUnits> pod_groups = FindPodGroups(sim, &group_of);
  std::vector<std::optional<GroupOutcome>> decided(sim.groups.size());
  std::vector<PodGroupOutcome> ran(pod_groups.size());
  std::vector<bool> done(pod_groups.size());
  for (size_t u = 0; u < sim.groups.size(); ++u) {
    const Group& g = sim.groups[u];
    const int gi = group_of[u];
    if (gi >= 0 && !done[gi] &&
        std::ranges::find(pod_groups[gi].units, u) != pod_groups[gi].units.end()) {
      // A pod group is placed at once, at the position of its first unbound pod (groups.h).
      done[gi] = true;
      ran[gi] = RunPodGroup(sim, pod_groups[gi]);
      for (size_t k = 0; k < pod_groups[gi].units.size(); ++k) {
        decided[pod_groups[gi].units[k]] = std::move(ran[gi].members[k]);
      }
      if (!opts.json) out << ran[gi].summary << "\n";
    }
    GroupOutcome go = decided[u] ? std::move(*decided[u]) : RunGroup(sim, g, false, "");
    go.allocated ? ++allocated : ++failed;
    if (opts.json) {
      WriteUnitJson(sim, g, go, gi >= 0 ? pod_groups[gi].ref.display : "", w);
      continue;
    }
    if (opts.hide_settled && go.allocated && go.node.empty()) {
      ++hidden;
      --allocated;  // counted on its own line
      continue;
    }
    PrintUnit(sim, g, go, out);
  }
  if (opts.json) {
    w.EndArray();
    w.Key("podGroups");
    w.StartArray();
    for (size_t i = 0; i < pod_groups.size(); ++i) {
      if (!done[i]) continue;
      w.StartObject();
      w.Key("name");
      w.String(pod_groups[i].ref.display.c_str());
      w.Key("placed");
      w.Bool(ran[i].placed);
      w.Key("message");
      w.String(ran[i].summary.c_str());
      w.EndObject();
    }
    w.EndArray();
    w.Key("allocated");
    w.Int(allocated);
    w.Key("failed");
    w.Int(failed);
    w.EndObject();
    out << buf.GetString() << "\n";
  } else {
    if (!ignored.empty()) out << ignored << "\n";
    if (hidden > 0) {
      out << hidden << " pods or claims with nothing to allocate (no claims, or all allocated)\n";
    }
    out << allocated << " allocated, " << failed << " not allocated\n";
  }
  return failed == 0 ? kExitOk : kExitUnallocated;
}

int RunExplain(const Options& opts, std::ostream& out, std::ostream& err) {
  Simulation sim;
  if (Status s = Build(opts, &sim); !s.ok()) {
    err << "draco explain: " << s.message() << "\n";
    return kExitInput;
  }
  if (std::string ignored = IgnoredLine(sim.in); !ignored.empty()) err << ignored << "\n";
  if (opts.claim.starts_with("pod/") || opts.claim.starts_with("pods/")) {
    return ExplainPod(sim, opts, opts.claim.substr(opts.claim.find('/') + 1), out, err);
  }
  std::string want =
      opts.claim.find('/') == std::string::npos ? "default/" + opts.claim : opts.claim;
  for (const Group& g : sim.groups) {
    bool target = false;
    for (size_t i : g.claims) {
      const auto& m = sim.claims[i].metadata;
      if (m.namespace_ + "/" + m.name == want) target = true;
    }
    if (!target) {
      RunGroup(sim, g, false, "");  // earlier pods occupy devices
      continue;
    }
    GroupOutcome go = RunGroup(sim, g, true, opts.node);
    if (!opts.json) {
      for (const auto& f : go.filtered) {
        if (opts.node.empty() || f.starts_with(opts.node + ": ")) {
          out << "claim " << want << " (" << g.label << ") " << f << "\n";
        }
      }
    }
    if (!go.message.empty() && go.explanations.empty()) {
      out << "claim " << want << " (" << g.label << "): " << go.message << "\n";
      return go.allocated ? kExitOk : kExitUnallocated;
    }
    bool any = false;
    if (opts.json) {
      rapidjson::StringBuffer buf;
      alloc::JsonWriter w(buf);
      w.StartArray();
      for (const auto& e : go.explanations) alloc::EncodeExplanation(e, w);
      w.EndArray();
      out << buf.GetString() << "\n";
    }
    for (const auto& e : go.explanations) {
      if (e.outcome.kind == alloc::Outcome::Kind::kAllocated) any = true;
      if (opts.json) continue;
      out << "claim " << want << " (" << g.label << ")\n" << alloc::ExplanationToText(e);
      if (e.outcome.kind == alloc::Outcome::Kind::kAllocated) {
        size_t k = 0;
        for (size_t i : g.claims) {
          if (sim.claims[i].status.allocation || k >= e.outcome.results.size()) continue;
          PrintAllocation(sim.claims[i], e.outcome.results[k++], out);
        }
      }
    }
    return any ? kExitOk : kExitUnallocated;
  }
  // No such claim: a pod of that name (its claims may not exist yet, or it has none).
  for (const Group& g : sim.groups) {
    if (g.label == "pod " + want) return ExplainPod(sim, opts, want, out, err);
  }
  err << "draco explain: claim " << want << " not found (for a pod: pod/NAME)\n";
  return kExitInput;
}

int SimulateMain(int argc, char** argv) {
  Options opts;
  if (int rc = ParseArgs(argc, argv, &opts, std::cerr, false); rc >= 0) return rc;
  return RunSimulate(opts, std::cout, std::cerr);
}

int ExplainMain(int argc, char** argv) {
  Options opts;
  if (int rc = ParseArgs(argc, argv, &opts, std::cerr, true); rc >= 0) return rc;
  return RunExplain(opts, std::cout, std::cerr);
}

}  // namespace draco::simulate
