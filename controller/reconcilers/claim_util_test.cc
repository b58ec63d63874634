#include "controller/reconcilers/claim_util.h"

#include <gtest/gtest.h>

#include "controller/reconcilers/reconciler.h"

namespace draco::reconcilers {
namespace {

TEST(GeneratedClaimPrefixTest, ShortNamesKeepTrailingDash) {
  EXPECT_EQ(GeneratedClaimPrefix("train", "gpu"), "train-gpu-");
}

TEST(GeneratedClaimPrefixTest, LongNamesAreShortenedProportionally) {
  std::string pod(60, 'p'), claim(20, 'c');
  std::string got = GeneratedClaimPrefix(pod, claim);
  // len = 82; pod part 60*57/82 = 41, claim part 20*57/82 = 13, joined by '-', no trailing dash.
  EXPECT_EQ(got, std::string(41, 'p') + "-" + std::string(13, 'c'));
  EXPECT_LE(got.size(), 57u);
}

TEST(GeneratedClaimNameTest, SameForEveryAttemptAndLikeAGeneratedName) {
  std::string a = GeneratedClaimName("train-gpu-", "uid-1", "gpu");
  EXPECT_EQ(a, GeneratedClaimName("train-gpu-", "uid-1", "gpu"));
  ASSERT_EQ(a.size(), std::string("train-gpu-").size() + 5);
  EXPECT_EQ(a.rfind("train-gpu-", 0), 0u);
  for (char ch : a.substr(10)) {
    EXPECT_NE(std::string_view("bcdfghjklmnpqrstvwxz2456789").find(ch), std::string_view::npos)
        << a;
  }
  // Another pod (a re-created one of the same name) or another claim of the pod: another name.
  EXPECT_NE(a, GeneratedClaimName("train-gpu-", "uid-2", "gpu"));
  EXPECT_NE(a, GeneratedClaimName("train-gpu-", "uid-1", "gpu2"));
}

TEST(IsPodDoneTest, TerminalOrDeletedBeforeScheduling) {
  api::Pod p;
  EXPECT_FALSE(IsPodDone(p));
  p.status.phase = "Failed";
  EXPECT_TRUE(IsPodDone(p));
  p.status.phase = "Running";
  p.metadata.deletion_timestamp = "2026-01-01T00:00:00Z";
  EXPECT_TRUE(IsPodDone(p));
  p.spec.node_name = "node-0";  // deleting a running pod: kubelet still needs the claims
  EXPECT_FALSE(IsPodDone(p));
  EXPECT_TRUE(PodReleasesClaims(p));
}

TEST(QueueKeyTest, RoundTrips) {
  auto r = ParseQueueKey(QueueKey("pod", "ns", "name"));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->kind, "pod");
  EXPECT_EQ(r->Key(), "ns/name");
  EXPECT_FALSE(ParseQueueKey("garbage").has_value());
  EXPECT_TRUE(IsTerminalError(TerminalError("x")));
  EXPECT_FALSE(IsTerminalError(FailedPreconditionError("x")));
}

}  // namespace
}  // namespace draco::reconcilers
