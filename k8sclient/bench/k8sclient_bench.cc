// k8sclient_bench: the C++ side of tests/bench/k8sclient_vs_clientgo.sh.
//
//   k8sclient_bench [--kubeconfig F] [--context C] <mode> --resource R [--namespace NS] [flags]
//     seed    --count N [--threads T]  create N labelled objects (draco-bench=k8sclient)
//     cleanup                          delete the labelled objects
//     list    --expect N               SharedInformer list-and-cache until N objects are cached
//     watch   --expect N               stream N watch events (sendInitialEvents=true) and decode
//     them
//
// list/watch print one JSON line: {"client":"draco","op":..,"objects":..,"seconds":..,
// "cpu_seconds":..,"peak_rss_mb":..}. R is "resourceslices" (resource.k8s.io/v1, cluster-scoped)
// or "configmaps" (namespaced). --protobuf-schema FILE reads them in protobuf (proto_json.h).
// Not a unit test: it needs a cluster.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "k8sclient/api_error.h"
#include "k8sclient/cache/shared_informer.h"
#include "k8sclient/config.h"
#include "k8sclient/proto_json.h"
#include "k8sclient/rest_client_impl.h"

#include <sys/resource.h>

namespace draco::k8s {
namespace {

constexpr char kBenchLabel[] = "draco-bench=k8sclient";

double PeakRssMb() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  }
  return 0;
}

double CpuSeconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

void Report(const std::string& op, size_t objects, double seconds, double cpu) {
  std::printf(
      "{\"client\":\"draco\",\"op\":\"%s\",\"objects\":%zu,\"seconds\":%.3f,"
      "\"cpu_seconds\":%.3f,\"peak_rss_mb\":%.1f}\n",
      op.c_str(), objects, seconds, cpu, PeakRssMb());
  std::fflush(stdout);
}

std::string SliceJson(int i) {
  const std::string name = "bench-slice-" + std::to_string(i);
  std::string devices;
  for (int d = 0; d < 4; ++d) {
    if (d > 0) devices += ",";
    devices += R"({"name":"gpu-)" + std::to_string(d) +
               R"(","attributes":{"model":{"string":"bench-model"},"index":{"int":)" +
               std::to_string(d) + R"(}},"capacity":{"memory":{"value":"16Gi"}}})";
  }
  return R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice","metadata":{"name":")" +
         name +
         R"(","labels":{"draco-bench":"k8sclient"}},"spec":{"driver":"bench.k8sclient.draco",)"
         R"("pool":{"name":"pool-)" +
         std::to_string(i) +
         R"(","generation":1,"resourceSliceCount":1},"allNodes":true,)"
         R"("devices":[)" +
         devices + "]}}";
}

std::string ConfigMapJson(int i) {
  std::string data;
  for (int k = 0; k < 8; ++k) {
    if (k > 0) data += ",";
    data += "\"key" + std::to_string(k) + "\":\"value-" + std::to_string(i) + "-" +
            std::string(64, 'x') + "\"";
  }
  return R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"bench-cm-)" +
         std::to_string(i) + R"(","labels":{"draco-bench":"k8sclient"}},"data":{)" + data + "}}";
}

int Main(int argc, char** argv) {
  std::map<std::string, std::string> flags;
  std::string mode;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--", 0) == 0 && i + 1 < argc) {
      flags[a.substr(2)] = argv[++i];
    } else {
      mode = a;
    }
  }
  const std::string resource = flags.count("resource") ? flags["resource"] : "resourceslices";
  const bool slices = resource == "resourceslices";
  const GroupVersionResource gvr =
      slices ? GroupVersionResource{"resource.k8s.io", "v1", "resourceslices"} : kConfigMaps;
  const std::string ns = slices ? "" : (flags.count("namespace") ? flags["namespace"] : "default");
  const int count = flags.count("count") ? std::stoi(flags["count"]) : 10000;
  const size_t expect = flags.count("expect") ? std::stoul(flags["expect"]) : 10000;

  std::string kubeconfig = flags.count("kubeconfig") ? flags["kubeconfig"] : "";
  if (kubeconfig.empty() && std::getenv("KUBECONFIG") != nullptr)
    kubeconfig = std::getenv("KUBECONFIG");
  auto cfg = LoadKubeconfig(kubeconfig, flags.count("context") ? flags["context"] : "");
  if (!cfg.ok()) {
    std::cerr << cfg.status() << "\n";
    return 1;
  }
  cfg->qps = 1000;
  cfg->burst = 2000;
  if (flags.count("protobuf-schema")) {
    // Reads in protobuf with this schema text (draco's: controller/run/proto_schema.cc).
    std::ifstream in(flags["protobuf-schema"]);
    std::stringstream text;
    text << in.rdbuf();
    auto schema = ProtoSchema::Parse(text.str());
    if (!in || !schema.ok()) {
      std::cerr << "--protobuf-schema: " << (in ? schema.status().ToString() : "cannot read")
                << "\n";
      return 1;
    }
    cfg->protobuf = *schema;
  }
  auto client_or = NewRestClient(*cfg);
  if (!client_or.ok()) {
    std::cerr << client_or.status() << "\n";
    return 1;
  }
  RestClient& client = **client_or;

  if (mode == "seed") {
    const int threads = flags.count("threads") ? std::stoi(flags["threads"]) : 16;
    std::atomic<int> next{0};
    std::atomic<int> failed{0};
    std::vector<std::thread> ts;
    for (int t = 0; t < threads; ++t) {
      ts.emplace_back([&] {
        for (int i = next++; i < count; i = next++) {
          auto r = client.Create(gvr, ns, slices ? SliceJson(i) : ConfigMapJson(i));
          if (!r.ok() && !IsAlreadyExists(r.status())) {
            if (failed++ < 5) std::cerr << r.status() << "\n";
          }
        }
      });
    }
    for (auto& t : ts) t.join();
    std::cerr << "seeded " << count << " " << resource << ", failures: " << failed.load() << "\n";
    return failed.load() == 0 ? 0 : 1;
  }
  if (mode == "cleanup") {
    ListOptions o;
    o.label_selector = kBenchLabel;
    auto all = ListAll(client, gvr, ns, o);
    if (!all.ok()) {
      std::cerr << all.status() << "\n";
      return 1;
    }
    std::atomic<size_t> next{0};
    std::vector<std::thread> ts;
    for (int t = 0; t < 16; ++t) {
      ts.emplace_back([&] {
        for (size_t i = next++; i < all->items.size(); i = next++) {
          (void)client.Delete(gvr, ns, all->items[i]->name());
        }
      });
    }
    for (auto& t : ts) t.join();
    std::cerr << "deleted " << all->items.size() << " " << resource << "\n";
    return 0;
  }
  if (mode == "list") {
    const auto start = std::chrono::steady_clock::now();
    const double cpu0 = CpuSeconds();
    cache::ListWatch lw(client, gvr, ns, kBenchLabel);
    cache::SharedInformerOptions options;
    options.name = "bench";
    cache::SharedInformer inf(lw, options);
    inf.Start();
    if (!inf.WaitForCacheSync(std::chrono::minutes(5))) {
      std::cerr << "cache did not sync\n";
      return 1;
    }
    const size_t n = inf.GetIndexer().Size();
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    Report("list", n, secs, CpuSeconds() - cpu0);
    inf.Stop();
    return n >= expect ? 0 : 2;
  }
  if (mode == "watch") {
    const auto start = std::chrono::steady_clock::now();
    const double cpu0 = CpuSeconds();
    ListOptions o;
    o.label_selector = kBenchLabel;
    o.send_initial_events = true;
    o.resource_version_match = "NotOlderThan";
    o.allow_watch_bookmarks = true;
    o.timeout_seconds = 600;
    auto w = client.Watch(gvr, ns, o);
    if (!w.ok()) {
      std::cerr << w.status() << "\n";
      return 1;
    }
    size_t events = 0;
    size_t bytes = 0;
    while (events < expect) {
      auto ev = (*w)->Next();
      if (!ev.ok()) {
        std::cerr << ev.status() << "\n";
        return 1;
      }
      if (!ev->has_value()) break;
      if ((*ev)->type == WatchEvent::Type::kError) {
        std::cerr << (*ev)->error << "\n";
        return 1;
      }
      if ((*ev)->type == WatchEvent::Type::kBookmark) continue;
      // Touch the decoded object like a consumer would.
      bytes += (*ev)->object->json().size() + (*ev)->object->name().size();
      ++events;
    }
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    Report("watch", events, secs, CpuSeconds() - cpu0);
    (*w)->Stop();
    return events >= expect && bytes > 0 ? 0 : 2;
  }
  std::cerr << "usage: k8sclient_bench [--kubeconfig F] [--context C] seed|cleanup|list|watch "
               "--resource resourceslices|configmaps [--namespace NS] [--count N] [--expect N] "
               "[--protobuf-schema FILE]\n";
  return 64;
}

}  // namespace
}  // namespace draco::k8s

int main(int argc, char** argv) { return draco::k8s::Main(argc, argv); }
