#include "controller/cel/cache.h"

#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "controller/cel/stdlib.h"

namespace draco::cel {
namespace {

const Env& StdEnv() {
  static const Env* env = [] {
    auto* e = new Env();
    AddStandardLibrary(*e);
    return e;
  }();
  return *env;
}

TEST(ProgramCacheTest, CompilesOnceUnderConcurrency) {
  ProgramCache cache(StdEnv(), 16);
  std::vector<std::thread> threads;
  std::vector<const Program*> seen(8);
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back(
        [&, i] { seen[i] = cache.Get("[1, 2, 3].exists(x, x == 2)").program.get(); });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(cache.compilations(), 1u);
  for (const Program* p : seen) EXPECT_EQ(p, seen[0]);
}

TEST(ProgramCacheTest, RemembersErrorsAndEvicts) {
  ProgramCache cache(StdEnv(), 2);
  EXPECT_FALSE(cache.Get("1 +").error.empty());
  EXPECT_FALSE(cache.Get("1 +").error.empty());
  EXPECT_EQ(cache.compilations(), 1u);
  cache.Get("1 == 1");
  cache.Get("2 == 2");
  EXPECT_EQ(cache.size(), 2u);
}

}  // namespace
}  // namespace draco::cel
