#include "k8sclient/retry_policy.h"

#include <gtest/gtest.h>

namespace draco::k8s {
namespace {

using Action = RetryPolicy::Decision::Action;
using std::chrono::milliseconds;
using std::chrono::seconds;

RetryPolicy Policy(const Clock& clock, int max_retries = 3) {
  return RetryPolicy(max_retries, seconds(10), clock, [] { return 0.0; });  // no jitter
}

TEST(RetryPolicyTest, RetryAfterIsHonouredUpToMaxWaitFor429And5xx) {
  FakeClock clock;
  RetryPolicy p = Policy(clock);
  auto d = p.OnHttpError(0, 429, 2, false);
  EXPECT_EQ(d.action, Action::kRetry);
  EXPECT_EQ(d.wait, seconds(2));
  d = p.OnHttpError(1, 503, 60, false);
  EXPECT_EQ(d.action, Action::kRetry);
  EXPECT_EQ(d.wait, seconds(10));  // capped at max_wait
}

TEST(RetryPolicyTest, ErrorsWithoutRetryAfterAndClientErrorsStop) {
  FakeClock clock;
  RetryPolicy p = Policy(clock);
  EXPECT_FALSE(p.OnHttpError(0, 500, 0, false).retry());
  EXPECT_FALSE(p.OnHttpError(0, 409, 0, false).retry());
  EXPECT_FALSE(p.OnHttpError(0, 404, 5, false).retry());
  EXPECT_FALSE(p.OnHttpError(0, 403, 0, true).retry());
}

TEST(RetryPolicyTest, UnauthorizedRefreshesTheTokenOnceAndOnlyWithATokenSource) {
  FakeClock clock;
  RetryPolicy p = Policy(clock);
  auto d = p.OnHttpError(0, 401, 0, true);
  EXPECT_EQ(d.action, Action::kRefreshTokenAndRetry);
  EXPECT_EQ(d.wait, Clock::Duration::zero());
  EXPECT_FALSE(p.OnHttpError(1, 401, 0, true).retry());
  EXPECT_FALSE(p.OnHttpError(0, 401, 0, false).retry());
}

TEST(RetryPolicyTest, TransportFailuresOfReadsBackOffExponentiallyWritesAreNeverRetried) {
  FakeClock clock;
  RetryPolicy p = Policy(clock, 10);
  const Status refused = UnavailableError("connection refused");
  EXPECT_FALSE(p.OnTransportError(0, refused, /*idempotent=*/false).retry());
  EXPECT_FALSE(p.OnTransportError(0, DeadlineExceededError("timeout"), true).retry());
  EXPECT_EQ(p.OnTransportError(0, refused, true).wait, RetryPolicy::kInitialBackoff);
  EXPECT_EQ(p.OnTransportError(1, refused, true).wait, milliseconds(200));
  EXPECT_EQ(p.OnTransportError(2, refused, true).wait, milliseconds(400));
}

TEST(RetryPolicyTest, AtMostMaxRetries) {
  FakeClock clock;
  RetryPolicy p = Policy(clock, 2);
  EXPECT_TRUE(p.OnHttpError(1, 429, 1, false).retry());
  EXPECT_FALSE(p.OnHttpError(2, 429, 1, false).retry());
  EXPECT_FALSE(p.OnTransportError(2, UnavailableError("reset"), true).retry());
}

}  // namespace
}  // namespace draco::k8s
