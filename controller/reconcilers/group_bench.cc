// How fast draco places a large all-or-nothing group (issue #19 item 4): the decision and the
// (in-memory) writes of one 64-pod group, 8 devices per pod, on 500 nodes x 8 devices, through
// the production path (Controller::SyncPod -> SyncGroupMember -> PlanGroup -> SnapshotAllocator
// with CEL). Goal: under 1 s per decision, also when the group is constrained to one clique and
// when it does not fit anywhere (then the time includes the explanation).
//   ./build/controller/reconcilers/group_bench --benchmark_repetitions=5
#include <memory>

#include <benchmark/benchmark.h>
#include <spdlog/spdlog.h>

#include "controller/allocator/allocator.h"
#include "controller/reconcilers/controller.h"
#include "controller/reconcilers/snapshot_allocator.h"
#include "controller/reconcilers/testing_fakes.h"
#include "controller/reconcilers/testing_groups.h"

namespace draco::reconcilers {
namespace {

constexpr int kNodes = 500;
constexpr int kDevicesPerNode = 8;
constexpr int kMembers = 64;

struct World {
  explicit World(int nodes_per_clique) {
    testing::AddGpuClassAndTemplate(cache, kDevicesPerNode);
    testing::AddCliqueNodes(cache, kNodes, kDevicesPerNode, nodes_per_clique);
  }
  ClusterCache cache;
  testing::FakeWriter writer;
  SnapshotAllocator allocator{cache, [] {
                                alloc::Allocator::Config c;
                                c.selectors = alloc::NewCelSelectorCompiler();
                                return c;
                              }()};
  testing::FakeEvents events;
  testing::FakeQueue queue;
  FakeClock clock;
  Controller ctrl{cache, writer, allocator, events, queue, clock, nullptr, [] {
                    ControllerOptions o;
                    o.observe_timeout = Clock::Duration::zero();
                    return o;
                  }()};
  void Informer() {
    for (const auto& [k, c] : writer.claims) {
      cache.UpsertClaim(std::make_shared<const api::ResourceClaim>(c));
    }
    for (const auto& [k, p] : writer.pods) cache.UpsertPod(std::make_shared<const api::Pod>(p));
  }
};

// Every member but the last has made its claim (and waits for the rest); the timed call is the
// last member's sync, which places and writes the whole group.
void Prepare(World& w, const std::string& match) {
  for (int i = 0; i < kMembers; ++i) {
    api::Pod p = testing::GroupMember("w" + std::to_string(i), "big", kMembers, match);
    w.writer.pods[testing::FakeWriter::K("ns", p.metadata.name)] = p;
    w.cache.UpsertPod(std::make_shared<const api::Pod>(p));
  }
  for (int i = 0; i + 1 < kMembers; ++i) (void)w.ctrl.SyncPod("ns", "w" + std::to_string(i));
  w.Informer();
}

void Run(benchmark::State& state, int nodes_per_clique, const std::string& match,
         bool expect_placed) {
  for (auto _ : state) {
    state.PauseTiming();
    auto w = std::make_unique<World>(nodes_per_clique);
    Prepare(*w, match);
    state.ResumeTiming();
    auto r = w->ctrl.SyncPod("ns", "w" + std::to_string(kMembers - 1));
    state.PauseTiming();
    size_t allocated = 0;
    for (const auto& [k, c] : w->writer.claims) allocated += c.status.allocation.has_value();
    if (!r.ok() || allocated != (expect_placed ? size_t{kMembers} : 0)) {
      state.SkipWithError("unexpected outcome");
    }
    w.reset();
    state.ResumeTiming();
  }
}

// Any 64 nodes.
void BM_Group64x8On500Nodes(benchmark::State& state) { Run(state, 64, "", true); }
// One clique of 64 nodes: cliques c0..c6 have 64 nodes, c7 has 52 (tried first: fewest
// devices, fails after 52 members, undone), then c0.
void BM_Group64x8On500NodesOneClique(benchmark::State& state) {
  Run(state, 64, "drv/clique", true);
}
// Cliques of 50 nodes: none holds the group; all 10 are tried and the failure is explained.
void BM_Group64x8On500NodesNoCliqueFits(benchmark::State& state) {
  Run(state, 50, "drv/clique", false);
}

BENCHMARK(BM_Group64x8On500Nodes)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_Group64x8On500NodesOneClique)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_Group64x8On500NodesNoCliqueFits)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace
}  // namespace draco::reconcilers

int main(int argc, char** argv) {
  spdlog::set_level(spdlog::level::warn);  // one info line per placed group otherwise
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
