#include "controller/kubectl/plugin.h"

#include <cstring>
#include <iostream>
#include <sstream>
#include <string_view>

#include "base/version.h"
#include "controller/kubectl/cluster.h"
#include "controller/kubectl/pools.h"
#include "controller/kubectl/status.h"
#include "controller/simulate/engine.h"
#include "controller/simulate/explain_pod.h"
#include "k8sclient/config.h"
#include "k8sclient/rest_client_impl.h"

namespace draco::kubectl {
namespace {

using simulate::kExitInput;

constexpr std::string_view kUsage =
    "usage: kubectl draco explain (pod/NAME | claim/NAME | NAME) [--node NODE]\n"
    "       kubectl draco pools [--class CLASS] [--node NODE] [--driver DRIVER]\n"
    "       kubectl draco simulate --from-cluster [-f FILE|DIR]...\n"
    "       kubectl draco version\n"
    "flags: --kubeconfig PATH  --context NAME  -n, --namespace NS  -o text|wide|json|yaml\n"
    "       --kubernetes-version 1.MINOR  --feature-gates A=true,B=false\n"
    "exit codes: 0 everything allocated (or would be now), 1 something does not fit,\n"
    "            2 input or access error\n";

struct Flags {
  std::string sub, kubeconfig, context, ns, output = "text", target, node, cls, driver,
                                            feature_gates, lease = "draco";
  bool from_cluster = false;
  std::vector<std::string> paths;
  int kubernetes_minor = 37;
};

// Parses "--name value" and "--name=value"; returns -1 on success, else the exit code.
int ParseFlags(int argc, char** argv, Flags* f, std::ostream& err) {
  f->sub = argc > 0 ? argv[0] : "";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i], value;
    bool has_inline = false;
    if (a.starts_with("--") && a.find('=') != std::string::npos) {
      value = a.substr(a.find('=') + 1);
      a = a.substr(0, a.find('='));
      has_inline = true;
    }
    auto next = [&]() -> std::string {
      if (has_inline) return value;
      return i + 1 < argc ? argv[++i] : "";
    };
    if (a == "--kubeconfig") {
      f->kubeconfig = next();
    } else if (a == "--context") {
      f->context = next();
    } else if (a == "-n" || a == "--namespace") {
      f->ns = next();
    } else if (a == "-o" || a == "--output") {
      f->output = next();
      if (f->output != "text" && f->output != "wide" && f->output != "json" &&
          f->output != "yaml") {
        err << "error: unknown output format \"" << f->output << "\" (text|wide|json|yaml)\n";
        return kExitInput;
      }
    } else if (a == "-f" || a == "--filename") {
      f->paths.push_back(next());
    } else if (a == "--from-cluster") {
      f->from_cluster = true;
    } else if (a == "--node") {
      f->node = next();
    } else if (a == "--class") {
      f->cls = next();
    } else if (a == "--lease") {
      f->lease = next();
    } else if (a == "--driver") {
      f->driver = next();
    } else if (a == "--feature-gates") {
      f->feature_gates = next();
    } else if (a == "--kubernetes-version") {
      auto minor = simulate::ParseKubernetesMinor(next());
      if (!minor.ok()) {
        err << "error: " << minor.status().message() << "\n";
        return kExitInput;
      }
      f->kubernetes_minor = *minor;
    } else if (a == "-h" || a == "--help") {
      err << kUsage;
      return kExitInput;
    } else if (f->sub == "explain" && f->target.empty() && !a.empty() && a[0] != '-') {
      f->target = a;
    } else {
      err << "error: unknown argument " << a << "\n" << kUsage;
      return kExitInput;
    }
  }
  if (f->sub == "explain" && f->target.empty()) {
    err << "error: explain needs pod/NAME or claim/NAME\n" << kUsage;
    return kExitInput;
  }
  if (f->sub == "simulate" && !f->from_cluster) {
    err << "error: kubectl draco simulate reads the live cluster; pass --from-cluster (offline: "
           "draco simulate -f)\n";
    return kExitInput;
  }
  return -1;
}

// Fills `source` from the flags (kubeconfig, context) and the namespace default.
int Connect(Flags& f, Source& source, std::unique_ptr<k8s::RestClient>& owned, std::ostream& err) {
  if (source.client != nullptr || !source.fixed_document.empty()) {
    if (f.ns.empty()) f.ns = "default";
    return -1;
  }
  auto config = f.kubeconfig.empty() ? k8s::DefaultConfig(f.context)
                                     : k8s::LoadKubeconfig(f.kubeconfig, f.context);
  if (!config.ok()) {
    err << "error: cannot load the kubeconfig: " << config.status().message() << "\n";
    return kExitInput;
  }
  if (f.ns.empty()) f.ns = config->namespace_name.empty() ? "default" : config->namespace_name;
  config->timeout = std::chrono::seconds(20);
  config->max_retries = 2;
  config->user_agent = UserAgent("kubectl-draco");
  auto client = k8s::NewRestClient(*config);
  if (!client.ok()) {
    err << "error: cannot build an API client: " << client.status().message() << "\n";
    return kExitInput;
  }
  owned = std::move(client).value();
  source.client = owned.get();
  source.host = config->host;
  return -1;
}

StatusOr<simulate::Document> Snapshot(const Source& source, std::ostream& err) {
  if (!source.fixed_document.empty()) {
    return simulate::Document{"the cluster", source.fixed_document};
  }
  return FetchCluster(*source.client, source.host, err);
}

int Emit(const Flags& f, const std::string& json, std::ostream& out) {
  out << (f.output == "yaml" ? simulate::JsonToYaml(json) : json + "\n");
  return 0;
}

int RunPools(const Flags& f, simulate::Simulation& sim, std::ostream& out) {
  PoolsReport r = ComputePools(sim, PoolsFilter{f.cls, f.node, f.driver});
  if (f.output == "json" || f.output == "yaml") return Emit(f, PoolsToJson(r), out);
  PrintPoolsText(r, f.output == "wide", out);
  return 0;
}

}  // namespace

int PluginMain(int argc, char** argv, std::ostream& out, std::ostream& err, Source source) {
  if (argc > 0 &&
      (std::strcmp(argv[0], "version") == 0 || std::strcmp(argv[0], "--version") == 0)) {
    out << VersionLine() << "\n";
    return 0;
  }
  Flags f;
  if (int rc = ParseFlags(argc, argv, &f, err); rc >= 0) return rc;
  if (f.sub != "explain" && f.sub != "pools" && f.sub != "simulate" && f.sub != "status") {
    err << "error: unknown subcommand \"" << f.sub << "\"\n" << kUsage;
    return kExitInput;
  }
  std::unique_ptr<k8s::RestClient> owned;
  if (int rc = Connect(f, source, owned, err); rc >= 0) return rc;
  if (f.sub == "status") {
    if (source.client == nullptr) {
      err << "error: kubectl draco status reads the live cluster\n";
      return kExitInput;
    }
    if (f.output != "yaml") return RunStatus(*source.client, f.lease, f.output, out, err);
    std::ostringstream json;
    int rc = RunStatus(*source.client, f.lease, "json", json, err);
    out << simulate::JsonToYaml(json.str());
    return rc;
  }
  auto doc = Snapshot(source, err);
  if (!doc.ok()) {
    err << "error: " << doc.status().message() << "\n";
    return kExitInput;
  }
  simulate::Options opts;
  opts.documents.push_back(std::move(doc).value());
  opts.paths = f.paths;
  opts.kubernetes_minor = f.kubernetes_minor;
  opts.feature_gates = f.feature_gates;
  opts.node = f.node;
  if (f.sub == "simulate") {
    opts.hide_settled = true;
    opts.json = f.output == "json" || f.output == "yaml";
    opts.explain_all = f.output == "wide";
    if (f.output != "yaml") return simulate::RunSimulate(opts, out, err);
    std::ostringstream json;
    int rc = simulate::RunSimulate(opts, json, err);
    out << simulate::JsonToYaml(json.str());
    return rc;
  }
  simulate::Simulation sim;
  if (Status s = simulate::Build(opts, &sim); !s.ok()) {
    err << "error: " << s.message() << "\n";
    return kExitInput;
  }
  if (f.sub == "pools") return RunPools(f, sim, out);
  simulate::ExplainRequest req{f.target, f.ns, f.node, f.output};
  return simulate::ExplainTarget(sim, req, out, err);
}

int KubectlDracoMain(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "-h") == 0 || std::strcmp(argv[1], "--help") == 0 ||
      std::strcmp(argv[1], "help") == 0) {
    (argc < 2 ? std::cerr : std::cout) << kUsage;
    return argc < 2 ? kExitInput : 0;
  }
  return PluginMain(argc - 1, argv + 1, std::cout, std::cerr);
}

}  // namespace draco::kubectl
