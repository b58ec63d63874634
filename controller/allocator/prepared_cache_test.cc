// CEL views and class-selector results kept with the snapshot (prepared_cache.h): shared by
// allocators over one snapshot and by snapshots derived from it, never across compilers.
#include "controller/allocator/prepared_cache.h"

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "controller/allocator/allocator.h"
#include "controller/allocator/compute_api.h"
#include "controller/allocator/test_builders.h"

namespace draco::alloc {
namespace {

using testing::Claim;
using testing::GpuClass;

// Counts Prepare and Matches calls; its selectors match every device (or none), and the
// expression "boom" fails at run time.
class CountingCompiler : public SelectorCompiler {
 public:
  explicit CountingCompiler(bool match) : match_(match) {}
  struct Prepared : PreparedDevice {};
  class Sel : public CompiledSelector {
   public:
    Sel(const CountingCompiler* c, bool fail) : c_(c), fail_(fail) {}
    StatusOr<bool> Matches(const PreparedDevice& device) const override {
      ++c_->matches;
      if (!dynamic_cast<const Prepared*>(&device)) return InternalError("foreign device view");
      if (fail_) return InvalidArgumentError("no such key: boom");
      return c_->match_;
    }

   private:
    const CountingCompiler* c_;
    bool fail_;
  };
  StatusOr<std::shared_ptr<const CompiledSelector>> Compile(std::string_view expr) override {
    return std::shared_ptr<const CompiledSelector>(std::make_shared<Sel>(this, expr == "boom"));
  }
  std::shared_ptr<const PreparedDevice> Prepare(const DeviceView&) override {
    ++prepares;
    return std::make_shared<Prepared>();
  }
  mutable std::atomic<int> matches{0};
  std::atomic<int> prepares{0};

 private:
  bool match_;
};

ResourceSlice Slice(const std::string& node, int devices, const std::string& suffix = "") {
  ResourceSlice s;
  s.name = "slice-" + node + suffix;
  s.driver = "gpu.example.com";
  s.pool = node;
  s.generation = 1;
  s.resource_slice_count = 1;
  s.node_name = node;
  for (int i = 0; i < devices; ++i) {
    Device d;
    d.name = "gpu-" + std::to_string(i);
    s.devices.push_back(std::move(d));
  }
  return s;
}

ComputeConfig Cfg(std::shared_ptr<SelectorCompiler> c) {
  ComputeConfig cfg;
  cfg.selectors = std::move(c);
  cfg.deterministic_share_ids = true;
  return cfg;
}

std::string Pick(const ComputeConfig& cfg, std::shared_ptr<const Snapshot> snap,
                 const std::string& node, int64_t count) {
  auto a = CreateAllocator(cfg, std::move(snap), std::vector<ResourceClaim>{});
  EXPECT_TRUE(a.ok());
  ResourceClaim c = Claim("c", count);
  SearchOutcome o = ComputeAllocate(**a, Node{node, {}, {}}, {&c});
  if (o.kind == Outcome::Kind::kError) return "error: " + o.message;
  if (o.kind != Outcome::Kind::kAllocated) return std::string(OutcomeKindName(o.kind));
  std::string out;
  for (const auto& r : o.results[0].results) out += (out.empty() ? "" : ",") + r.device;
  return out;
}

TEST(PreparedCacheTest, AllocatorsOverOneSnapshotPrepareAndSelectOnce) {
  auto cc = std::make_shared<CountingCompiler>(true);
  auto snap = BuildSnapshot(Features{}, {GpuClass()}, {Slice("n0", 4), Slice("n1", 4)}, {});
  EXPECT_EQ(Pick(Cfg(cc), snap, "n0", 2), "gpu-0,gpu-1");
  const int prepares = cc->prepares, matches = cc->matches;
  EXPECT_GT(prepares, 0);
  EXPECT_GT(matches, 0);
  EXPECT_EQ(Pick(Cfg(cc), snap, "n0", 2), "gpu-0,gpu-1");
  EXPECT_EQ(cc->prepares, prepares);  // the second allocator found the views and the results
  EXPECT_EQ(cc->matches, matches);
  EXPECT_EQ(Pick(Cfg(cc), snap, "n1", 4), "gpu-0,gpu-1,gpu-2,gpu-3");
  EXPECT_GT(cc->prepares, prepares);  // another slice: its own devices
}

TEST(PreparedCacheTest, DerivedSnapshotsShareUntouchedSlicesOnly) {
  auto cc = std::make_shared<CountingCompiler>(true);
  auto snap = BuildSnapshot(Features{}, {GpuClass()}, {Slice("n0", 4), Slice("n1", 4)}, {});
  EXPECT_EQ(Pick(Cfg(cc), snap, "n0", 4), "gpu-0,gpu-1,gpu-2,gpu-3");
  EXPECT_EQ(Pick(Cfg(cc), snap, "n1", 4), "gpu-0,gpu-1,gpu-2,gpu-3");
  const int prepares = cc->prepares;
  auto next = SnapshotWithSlice(*snap, Slice("n1", 2));  // n1 replaced by a new object
  EXPECT_EQ(Pick(Cfg(cc), next, "n0", 4), "gpu-0,gpu-1,gpu-2,gpu-3");
  EXPECT_EQ(cc->prepares, prepares);
  EXPECT_EQ(Pick(Cfg(cc), next, "n1", 2), "gpu-0,gpu-1");
  EXPECT_EQ(cc->prepares, prepares + 2);  // the new n1 slice's two devices
  EXPECT_EQ(Pick(Cfg(cc), next, "n1", 3), "unsatisfiable");
}

TEST(PreparedCacheTest, AnotherCompilerNeverSeesTheFirstOnesViewsOrResults) {
  auto yes = std::make_shared<CountingCompiler>(true);
  auto no = std::make_shared<CountingCompiler>(false);
  auto snap = BuildSnapshot(Features{}, {GpuClass()}, {Slice("n0", 2)}, {});
  EXPECT_EQ(Pick(Cfg(yes), snap, "n0", 1), "gpu-0");
  // "no" evaluates on its own views (its selector rejects foreign ones) and with its own answer.
  EXPECT_EQ(Pick(Cfg(no), snap, "n0", 1), "unsatisfiable");
  EXPECT_GT(no->prepares, 0);
  EXPECT_EQ(Pick(Cfg(yes), snap, "n0", 1), "gpu-0");
}

TEST(PreparedCacheTest, SelectorErrorsAreReportedByEveryAllocator) {
  auto cc = std::make_shared<CountingCompiler>(true);
  DeviceClass cls = GpuClass();
  cls.selectors = {"boom"};
  auto snap = BuildSnapshot(Features{}, {cls}, {Slice("n0", 2)}, {});
  const std::string first = Pick(Cfg(cc), snap, "n0", 1);
  EXPECT_NE(first.find("no such key: boom"), std::string::npos) << first;
  EXPECT_EQ(Pick(Cfg(cc), snap, "n0", 1), first);  // errors are not cached as "no match"
}

std::shared_ptr<const api::ResourceSlice> ApiSlice(const std::string& node, int devices) {
  auto s = std::make_shared<api::ResourceSlice>();
  s->metadata.name = "slice-" + node;
  s->spec.driver = "gpu.example.com";
  s->spec.pool.name = node;
  s->spec.pool.resource_slice_count = 1;
  s->spec.node_name = node;
  for (int i = 0; i < devices; ++i) {
    api::Device d;
    d.name = "gpu-" + std::to_string(i);
    s->spec.devices.push_back(std::move(d));
  }
  return s;
}

// The controller's path: Snapshot::Build with the previous snapshot after a slice changed.
TEST(PreparedCacheTest, BuildWithPreviousCarriesTheViewsOfReusedSlices) {
  auto cc = std::make_shared<CountingCompiler>(true);
  Allocator::Config cfg;
  cfg.selectors = cc;
  api::DeviceClass cls;
  cls.metadata.name = "gpu";
  api::DeviceSelector sel;
  sel.cel = api::CELDeviceSelector{"device.driver == \"gpu.example.com\"", {}};
  cls.spec.selectors.push_back(sel);
  api::ResourceClaim claim;
  claim.metadata.name = "c";
  claim.metadata.namespace_ = "ns";
  api::DeviceRequest r;
  r.name = "gpu";
  r.exactly.emplace();
  r.exactly->device_class_name = "gpu";
  claim.spec.devices.requests.push_back(r);
  auto pick = [&](std::shared_ptr<const Snapshot> snap, const std::string& node) {
    auto a = Allocator::Create(cfg, std::move(snap), {});
    EXPECT_TRUE(a.ok());
    api::Node n;
    n.metadata.name = node;
    Outcome o = (*a)->Allocate(n, {&claim});
    return o.kind == Outcome::Kind::kAllocated ? o.results.at(0).devices.results.at(0).device
                                               : std::string(OutcomeKindName(o.kind));
  };
  auto n0 = ApiSlice("n0", 2), n1 = ApiSlice("n1", 2);
  auto first = Snapshot::Build(Features{}, {cls}, {n0, n1}, {});
  EXPECT_EQ(pick(first, "n0"), "gpu-0");
  EXPECT_EQ(pick(first, "n1"), "gpu-0");
  const int prepares = cc->prepares;
  auto second = Snapshot::Build(Features{}, {cls}, {n0, ApiSlice("n1", 3)}, {}, first.get());
  EXPECT_EQ(pick(second, "n0"), "gpu-0");
  EXPECT_EQ(cc->prepares, prepares);  // n0's views came along
  EXPECT_EQ(pick(second, "n1"), "gpu-0");
  EXPECT_EQ(cc->prepares, prepares + 1);  // the new n1 object is prepared afresh
  auto fresh = Snapshot::Build(Features{}, {cls}, {n0, n1}, {});
  EXPECT_EQ(pick(fresh, "n0"), "gpu-0");
  EXPECT_EQ(cc->prepares, prepares + 2);  // no previous snapshot: nothing carried
}

TEST(PreparedCacheTest, CarryKeepsTheEntriesOfListedSlicesOnly) {
  auto a = std::make_shared<const ResourceSlice>(Slice("n0", 1));
  auto b = std::make_shared<const ResourceSlice>(Slice("n1", 1));
  PreparedCache cache;
  PreparedSlice* ea = cache.For(a);
  cache.For(b);
  EXPECT_EQ(cache.For(a), ea);
  EXPECT_EQ(cache.size(), 2u);
  auto carried = PreparedCache::Carry(&cache, {a});
  EXPECT_EQ(carried->size(), 1u);
  EXPECT_EQ(carried->For(a), ea);  // the same entry, shared
  EXPECT_EQ(PreparedCache::Carry(nullptr, {a, b})->size(), 0u);
}

TEST(PreparedCacheTest, ClassResultsBelongToOneClassListAndCompiler) {
  auto slice = Slice("n0", 3);
  auto one = std::make_shared<CountingCompiler>(true);
  auto two = std::make_shared<CountingCompiler>(true);
  PreparedSlice e;
  auto classes = std::make_shared<const int>(1), other = std::make_shared<const int>(2);
  std::atomic<uint8_t>* r = e.ClassResults(classes, 2, 3, one);
  ASSERT_NE(r, nullptr);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(r[i].load(), 0);
  EXPECT_EQ(e.ClassResults(classes, 2, 3, one), r);
  EXPECT_EQ(e.ClassResults(other, 2, 3, one), nullptr);
  EXPECT_EQ(e.ClassResults(classes, 2, 3, two), nullptr);
  EXPECT_NE(e.Get(slice, 1, one), nullptr);
  EXPECT_EQ(e.Get(slice, 1, one), e.Get(slice, 1, one));
  EXPECT_EQ(e.Get(slice, 1, two), nullptr);
  EXPECT_EQ(one->prepares, 1);
}

}  // namespace
}  // namespace draco::alloc
