#include "controller/server/metrics_auth.h"

#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "controller/server/testing_review_api.h"

namespace draco::server {
namespace {

using std::chrono::seconds;
using testing::FakeReviewApi;

class MetricsAuthTest : public ::testing::Test {
 protected:
  MetricsAuthTest() {
    api_.users["good-token"] = {"system:serviceaccount:mon:prometheus",
                                "uid-1",
                                {"system:serviceaccounts", "system:authenticated"},
                                {{"authentication.kubernetes.io/pod-name", {"prom-0"}}}};
    api_.users["other-token"] = {"system:serviceaccount:mon:other", "uid-2", {}, {}};
    api_.allowed.insert("system:serviceaccount:mon:prometheus");
  }
  FakeClock clock_;
  FakeReviewApi api_;
  MetricsAuth auth_{api_, clock_};
};

TEST_F(MetricsAuthTest, NoTokenIs401WithoutAnyReview) {
  EXPECT_EQ(auth_.Authorize("", "get", "/metrics").code, 401);
  EXPECT_EQ(auth_.Authorize("Basic dXNlcjpwYXNz", "get", "/metrics").code, 401);
  EXPECT_EQ(auth_.Authorize("Bearer ", "get", "/metrics").code, 401);
  EXPECT_EQ(api_.token_reviews, 0);
}

TEST_F(MetricsAuthTest, UnauthenticatedTokenIs401) {
  EXPECT_EQ(auth_.Authorize("Bearer forged", "get", "/metrics").code, 401);
  EXPECT_EQ(api_.token_reviews, 1);
  EXPECT_EQ(api_.access_reviews, 0);
}

TEST_F(MetricsAuthTest, DeniedIs403AndAllowedIs200) {
  AuthDecision denied = auth_.Authorize("Bearer other-token", "get", "/metrics");
  EXPECT_EQ(denied.code, 403);
  EXPECT_EQ(denied.message, "Authorization denied for user system:serviceaccount:mon:other");
  EXPECT_EQ(auth_.Authorize("bearer good-token", "get", "/metrics").code, 200);
}

TEST_F(MetricsAuthTest, AccessReviewCarriesTheReviewedUserAndTheNonResourceUrl) {
  ASSERT_EQ(auth_.Authorize("Bearer good-token", "get", "/metrics").code, 200);
  ASSERT_EQ(api_.last_access_review.size(), 1U);
  rapidjson::Document d;
  d.Parse(api_.last_access_review.front().c_str());
  const auto& spec = d["spec"];
  EXPECT_STREQ(d["kind"].GetString(), "SubjectAccessReview");
  EXPECT_STREQ(spec["user"].GetString(), "system:serviceaccount:mon:prometheus");
  EXPECT_STREQ(spec["uid"].GetString(), "uid-1");
  ASSERT_EQ(spec["groups"].Size(), 2U);
  EXPECT_STREQ(spec["groups"][1].GetString(), "system:authenticated");
  EXPECT_STREQ(spec["extra"]["authentication.kubernetes.io/pod-name"][0].GetString(), "prom-0");
  EXPECT_STREQ(spec["nonResourceAttributes"]["path"].GetString(), "/metrics");
  EXPECT_STREQ(spec["nonResourceAttributes"]["verb"].GetString(), "get");
  EXPECT_FALSE(spec.HasMember("resourceAttributes"));
}

TEST_F(MetricsAuthTest, CacheHitMakesNoSecondReviewUntilItExpires) {
  ASSERT_EQ(auth_.Authorize("Bearer good-token", "get", "/metrics").code, 200);
  ASSERT_EQ(auth_.Authorize("Bearer other-token", "get", "/metrics").code, 403);
  EXPECT_EQ(auth_.reviews(), 4);
  clock_.Step(seconds(29));
  EXPECT_EQ(auth_.Authorize("Bearer good-token", "get", "/metrics").code, 200);
  EXPECT_EQ(auth_.Authorize("Bearer other-token", "get", "/metrics").code, 403);
  EXPECT_EQ(auth_.reviews(), 4) << "both decisions are cached";
  EXPECT_EQ(api_.token_reviews + api_.access_reviews, 4);
  // A denial lives 30 s: granting access shows after it, without a restart.
  api_.allowed.insert("system:serviceaccount:mon:other");
  clock_.Step(seconds(2));
  EXPECT_EQ(auth_.Authorize("Bearer other-token", "get", "/metrics").code, 200);
  EXPECT_EQ(api_.access_reviews, 3);
  // Tokens are reviewed again after a minute, access decisions that allowed after five.
  clock_.Step(seconds(30));
  EXPECT_EQ(auth_.Authorize("Bearer good-token", "get", "/metrics").code, 200);
  EXPECT_EQ(api_.token_reviews, 3);
  EXPECT_EQ(api_.access_reviews, 3);
}

TEST_F(MetricsAuthTest, ApiErrorIs500AndIsNotCached) {
  api_.fail_token_reviews = true;
  EXPECT_EQ(auth_.Authorize("Bearer good-token", "get", "/metrics").code, 500);
  api_.fail_token_reviews = false;
  api_.fail_access_reviews = true;
  AuthDecision d = auth_.Authorize("Bearer good-token", "get", "/metrics");
  EXPECT_EQ(d.code, 500);
  EXPECT_EQ(d.message, "Authorization for user system:serviceaccount:mon:prometheus failed");
  api_.fail_access_reviews = false;
  EXPECT_EQ(auth_.Authorize("Bearer good-token", "get", "/metrics").code, 200);
  EXPECT_EQ(api_.token_reviews, 2);
  EXPECT_EQ(api_.access_reviews, 2);
}

TEST_F(MetricsAuthTest, MalformedAnswerIs500) {
  api_.garbage = true;
  EXPECT_EQ(auth_.Authorize("Bearer good-token", "get", "/metrics").code, 500);
}

TEST(MetricsAuthCacheTest, BoundedSize) {
  FakeClock clock;
  FakeReviewApi api;
  for (int i = 0; i < 10; ++i) {
    api.users["t" + std::to_string(i)] = {"u" + std::to_string(i), "", {}, {}};
  }
  MetricsAuth auth(api, clock, MetricsAuthOptions{seconds(60), seconds(300), seconds(30), 4});
  for (int i = 0; i < 10; ++i) {
    auth.Authorize("Bearer t" + std::to_string(i), "get", "/metrics");
    clock.Step(seconds(1));  // later entries expire later
  }
  EXPECT_EQ(api.token_reviews, 10);
  // The four most recent survive; the first was evicted.
  auth.Authorize("Bearer t9", "get", "/metrics");
  EXPECT_EQ(api.token_reviews, 10);
  auth.Authorize("Bearer t0", "get", "/metrics");
  EXPECT_EQ(api.token_reviews, 11);
}

TEST(BearerTokenTest, Parses) {
  EXPECT_EQ(BearerToken("Bearer abc"), "abc");
  EXPECT_EQ(BearerToken("BEARER  abc "), "abc");
  EXPECT_EQ(BearerToken("Bearer"), "");
  EXPECT_EQ(BearerToken("Bearer a b"), "");
  EXPECT_EQ(BearerToken("Bearerabc"), "");
  EXPECT_EQ(BearerToken("Basic abc"), "");
}

}  // namespace
}  // namespace draco::server
