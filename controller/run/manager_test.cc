#include "controller/run/manager.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace draco::run {
namespace {

Runnable Logged(const std::string& name, std::vector<std::string>& log, bool fail = false) {
  return Runnable{name,
                  [&log, name, fail] {
                    log.push_back("start " + name);
                    return fail ? UnavailableError("port taken") : OkStatus();
                  },
                  [&log, name] { log.push_back("begin_stop " + name); },
                  [&log, name] { log.push_back("wait " + name); }};
}

TEST(ManagerTest, StartsInOrderAndStopsInReverseInTwoPhases) {
  std::vector<std::string> log;
  Manager m;
  m.Add(Logged("servers", log));
  m.Add(Logged("informers", log));
  m.Add(Logged("election", log));
  ASSERT_TRUE(m.Start().ok());
  EXPECT_EQ(m.Running(), (std::vector<std::string>{"servers", "informers", "election"}));
  m.Stop();
  EXPECT_EQ(log, (std::vector<std::string>{"start servers", "start informers", "start election",
                                           "begin_stop election", "begin_stop informers",
                                           "begin_stop servers", "wait election", "wait informers",
                                           "wait servers"}));
  EXPECT_TRUE(m.Running().empty());
  m.Stop();  // idempotent
  EXPECT_EQ(log.size(), 9u);
}

TEST(ManagerTest, AFailedStartStopsWhatStartedAndNamesTheRunnable) {
  std::vector<std::string> log;
  Manager m;
  m.Add(Logged("servers", log));
  m.Add(Logged("webhook", log, /*fail=*/true));
  m.Add(Logged("informers", log));
  Status st = m.Start();
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("webhook"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("port taken"), std::string::npos) << st.message();
  EXPECT_EQ(log, (std::vector<std::string>{"start servers", "start webhook", "begin_stop servers",
                                           "wait servers"}));
}

TEST(ManagerTest, PhasesAreOptional) {
  int started = 0;
  Manager m;
  m.Add(Runnable{"bare",
                 [&] {
                   ++started;
                   return OkStatus();
                 },
                 nullptr, nullptr});
  ASSERT_TRUE(m.Start().ok());
  EXPECT_EQ(started, 1);
}  // the destructor stops it

}  // namespace
}  // namespace draco::run
