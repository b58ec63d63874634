// draco: Kubernetes DRA controller. This file only dispatches subcommands; each subcommand's
// logic lives in its own module.
//
//   draco simulate -f FILE|DIR   allocate manifests offline, print allocations and explanations
//   draco explain -f FILE|DIR CLAIM   print the allocation funnel for one claim
#include <cstring>
#include <iostream>

#include "controller/simulate/simulate.h"
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
constexpr Subcommand kSubcommands[] = {
    {"simulate", draco::simulate::SimulateMain,
     "allocate kubectl-style manifests offline (exit 0 all allocated, 1 some not, 2 input error)"},
    {"explain", draco::simulate::ExplainMain, "explain the allocation of one claim"},
#ifdef DRACO_HAVE_RUN
    {"run", draco::run::RunMain, "run the controller against a cluster (see draco run --help)"},
#endif
};

int Usage(std::ostream& os, int rc) {
  os << "usage: draco <subcommand> [flags]\n";
  for (const auto& s : kSubcommands) os << "  " << s.name << "\t" << s.help << "\n";
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return Usage(std::cerr, 2);
  if (std::strcmp(argv[1], "-h") == 0 || std::strcmp(argv[1], "--help") == 0 ||
      std::strcmp(argv[1], "help") == 0) {
    return Usage(std::cout, 0);
  }
  for (const auto& s : kSubcommands) {
    if (std::strcmp(argv[1], s.name) == 0) return s.main(argc - 1, argv + 1);
  }
  std::cerr << "draco: unknown subcommand " << argv[1] << "\n";
  return Usage(std::cerr, 2);
}
