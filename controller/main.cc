// draco: Kubernetes DRA controller. This file only dispatches subcommands; each subcommand's
// logic lives in its own module.
//
//   draco simulate -f FILE|DIR   allocate manifests offline, print allocations and explanations
//   draco explain -f FILE|DIR (CLAIM | pod/NAME)   print the allocation funnel of a claim or pod
//   draco version | draco --version   print the version, source revision and platform
//   kubectl-draco explain|pools|simulate   the kubectl plugin (this binary under that name)
#include <array>
#include <cstdlib>
#include <cstring>
#include <iostream>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "base/version.h"
#include "controller/simulate/simulate.h"
#ifdef DRACO_HAVE_KUBECTL
#include "controller/kubectl/plugin.h"
#include "k8sclient/tls_trust.h"
#endif
#ifdef DRACO_HAVE_RUN
#include "controller/run/run.h"
#endif

namespace {

struct Subcommand {
  const char* name;
  int (*main)(int argc, char** argv);
  const char* help;
};

// Register new subcommands here (e.g. "run" for the controller).
constexpr auto kSubcommands = std::to_array<Subcommand>({
    {"simulate", draco::simulate::SimulateMain,
     "allocate kubectl-style manifests offline (exit 0 all allocated, 1 some not, 2 input error)"},
    {"explain", draco::simulate::ExplainMain, "explain the allocation of one claim"},
#ifdef DRACO_HAVE_RUN
    {"run", draco::run::RunMain, "run the controller against a cluster (see draco run --help)"},
#endif
});

// glibc gives each thread that allocates concurrently its own malloc arena (up to 8 per core).
// `draco run` has dozens of threads (workers, informers, HTTP, cpprestsdk's pool); with an arena
// each, freed memory stays spread over many arenas and RSS crept up for as long as pods flowed
// (1-hour soak: +0.5 MiB per 10 minutes after 30 minutes). Two arenas kept it flat and 18% lower
// (soak of 2026-12-05). MALLOC_ARENA_MAX in the environment still wins.
void LimitMallocArenas() {
#ifdef __GLIBC__
  constexpr int kMallocArenas = 2;
  // NOLINTNEXTLINE(concurrency-mt-unsafe): getenv and mallopt at start-up, before threads start
  if (std::getenv("MALLOC_ARENA_MAX") == nullptr) mallopt(M_ARENA_MAX, kMallocArenas);
#endif
}

// See k8sclient/tls_trust.h: cpprestsdk loads OpenSSL's default CA bundle into every new
// connection (~18 ms of CPU each) only for draco's clients to replace it with their own store.
void SkipDefaultCaBundleLoads() {
#ifdef DRACO_HAVE_KUBECTL  // linked with k8sclient
  (void)draco::k8s::UseOwnTrustStores();
#endif
}

int Usage(std::ostream& os, int rc) {
  os << "usage: draco <subcommand> [flags]\n";
  for (const auto& s : kSubcommands) os << "  " << s.name << "\t" << s.help << "\n";
  os << "  version\tprint the version, source revision and platform (also --version)\n";
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  LimitMallocArenas();         // before any thread starts
  SkipDefaultCaBundleLoads();  // likewise (sets an environment variable)
#ifdef DRACO_HAVE_KUBECTL
  // Installed as kubectl-draco, `kubectl draco ...` runs it with the plugin's arguments.
  const char* base = std::strrchr(argv[0], '/');
  if (std::strcmp(base ? base + 1 : argv[0], "kubectl-draco") == 0) {
    return draco::kubectl::KubectlDracoMain(argc, argv);
  }
#endif
  if (argc < 2) return Usage(std::cerr, 2);
  if (std::strcmp(argv[1], "-h") == 0 || std::strcmp(argv[1], "--help") == 0 ||
      std::strcmp(argv[1], "help") == 0) {
    return Usage(std::cout, 0);
  }
  if (std::strcmp(argv[1], "--version") == 0 || std::strcmp(argv[1], "version") == 0) {
    std::cout << draco::VersionLine() << "\n";
    return 0;
  }
  for (const auto& s : kSubcommands) {
    if (std::strcmp(argv[1], s.name) == 0) return s.main(argc - 1, argv + 1);
  }
  std::cerr << "draco: unknown subcommand " << argv[1] << "\n";
  return Usage(std::cerr, 2);
}
