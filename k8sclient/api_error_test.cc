#include "k8sclient/api_error.h"

#include <gtest/gtest.h>

namespace draco::k8s {
namespace {

TEST(ApiErrorTest, DecodesNotFoundStatus) {
  const char* body = R"({"kind":"Status","apiVersion":"v1","status":"Failure",
    "message":"configmaps \"x\" not found","reason":"NotFound",
    "details":{"name":"x","kind":"configmaps"},"code":404})";
  Status s = DecodeApiError(404, body).ToStatus();
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_TRUE(IsNotFound(s));
  EXPECT_FALSE(IsConflict(s));
  auto e = ApiError::FromStatus(s);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->http_code, 404);
  EXPECT_EQ(e->reason, "NotFound");
  EXPECT_EQ(e->message, "configmaps \"x\" not found");
  EXPECT_EQ(e->details_name, "x");
  EXPECT_EQ(e->details_kind, "configmaps");
  EXPECT_EQ(s.message().rfind("configmaps \"x\" not found", 0), 0u);
}

TEST(ApiErrorTest, ConflictAndAlreadyExistsAreDistinct) {
  Status conflict =
      DecodeApiError(409, R"({"kind":"Status","reason":"Conflict","code":409})").ToStatus();
  Status exists =
      DecodeApiError(409, R"({"kind":"Status","reason":"AlreadyExists","code":409})").ToStatus();
  EXPECT_TRUE(IsConflict(conflict));
  EXPECT_FALSE(IsAlreadyExists(conflict));
  EXPECT_TRUE(IsAlreadyExists(exists));
  EXPECT_FALSE(IsConflict(exists));
  EXPECT_EQ(conflict.code(), StatusCode::kAborted);
  EXPECT_EQ(exists.code(), StatusCode::kAlreadyExists);
}

TEST(ApiErrorTest, InvalidCarriesCausesThroughStatus) {
  const char* body = R"({"kind":"Status","reason":"Invalid","code":422,"message":"bad",
    "details":{"causes":[{"reason":"FieldValueInvalid","message":"must be lower case",
    "field":"metadata.name"},{"reason":"FieldValueRequired","message":"Required value",
    "field":"data[\"k\"]"}]}})";
  Status s = DecodeApiError(422, body).ToStatus();
  EXPECT_TRUE(IsInvalid(s));
  EXPECT_FALSE(IsBadRequest(s));
  auto causes = Causes(s);
  ASSERT_EQ(causes.size(), 2u);
  EXPECT_EQ(causes[0], (StatusCause{"FieldValueInvalid", "must be lower case", "metadata.name"}));
  EXPECT_EQ(causes[1].field, "data[\"k\"]");
}

TEST(ApiErrorTest, GoneAndExpired) {
  EXPECT_TRUE(IsGone(DecodeApiError(410, R"({"kind":"Status","reason":"Expired"})").ToStatus()));
  EXPECT_TRUE(IsGone(DecodeApiError(410, "").ToStatus()));
  EXPECT_TRUE(IsResourceExpired(
      DecodeApiErrorObject(R"({"kind":"Status","code":410,"reason":"Expired","message":"old"})")
          .ToStatus()));
}

TEST(ApiErrorTest, TooManyRequestsRetryAfterFromHeaderOrDetails) {
  Status from_header = DecodeApiError(429, "slow down", 7).ToStatus();
  EXPECT_TRUE(IsTooManyRequests(from_header));
  EXPECT_EQ(RetryAfterSeconds(from_header), 7);
  Status from_details =
      DecodeApiError(429, R"({"kind":"Status","reason":"TooManyRequests","code":429,
        "details":{"retryAfterSeconds":3}})")
          .ToStatus();
  EXPECT_EQ(RetryAfterSeconds(from_details), 3);
  EXPECT_FALSE(RetryAfterSeconds(DecodeApiError(500, "").ToStatus()).has_value());
}

TEST(ApiErrorTest, ServerTimeoutsAndOtherCodes) {
  Status st =
      DecodeApiError(500, R"({"kind":"Status","reason":"ServerTimeout","code":500})").ToStatus();
  EXPECT_TRUE(IsServerTimeout(st));
  EXPECT_EQ(st.code(), StatusCode::kDeadlineExceeded);
  EXPECT_FALSE(IsInternalError(st));
  EXPECT_TRUE(IsTimeout(DecodeApiError(504, "").ToStatus()));
  EXPECT_TRUE(IsInternalError(DecodeApiError(500, "boom").ToStatus()));
  EXPECT_TRUE(IsForbidden(DecodeApiError(403, "").ToStatus()));
  EXPECT_TRUE(IsUnauthorized(DecodeApiError(401, "").ToStatus()));
  EXPECT_TRUE(IsServiceUnavailable(DecodeApiError(503, "<html>").ToStatus()));
  EXPECT_TRUE(IsBadRequest(DecodeApiError(400, "").ToStatus()));
  EXPECT_EQ(DecodeApiError(405, "").ToStatus().code(), StatusCode::kUnimplemented);
}

TEST(ApiErrorTest, TooLargeResourceVersion) {
  Status s = DecodeApiError(504, R"({"kind":"Status","reason":"Timeout","code":504,
    "details":{"causes":[{"reason":"ResourceVersionTooLarge","message":"Too large"}]}})")
                 .ToStatus();
  EXPECT_TRUE(IsTooLargeResourceVersion(s));
  EXPECT_TRUE(IsTimeout(s));
}

TEST(ApiErrorTest, PlainStatusesAreNotApiErrors) {
  EXPECT_FALSE(ApiError::FromStatus(UnavailableError("connection refused")).has_value());
  EXPECT_FALSE(IsGone(OkStatus()));
  EXPECT_TRUE(IsNotFound(NotFoundError("x")));  // code-only fallback
  EXPECT_FALSE(IsInvalid(InvalidArgumentError("x")));
}

}  // namespace
}  // namespace draco::k8s

namespace draco::k8s {
namespace {

TEST(ApiErrorTest, RefusalTransportAndRetryableAreDistinct) {
  const Status refused = DecodeApiError(422, R"({"kind":"Status","reason":"Invalid"})").ToStatus();
  const Status forbidden = DecodeApiError(403, "").ToStatus();
  const Status throttled = DecodeApiError(429, "", 3).ToStatus();
  const Status unavailable = DecodeApiError(503, "").ToStatus();
  const Status reset = UnavailableError("PATCH /api/v1/pods/x: Connection reset by peer");
  const Status timed_out = DeadlineExceededError("PATCH /api/v1/pods/x: request timed out");
  const Status cancelled = CancelledError("PATCH /api/v1/pods/x: client cancelled");
  EXPECT_TRUE(IsRefusal(refused));
  EXPECT_TRUE(IsRefusal(forbidden));
  EXPECT_TRUE(IsRefusal(refused.WithPrefix("remove gate")));
  for (const Status& s : {throttled, unavailable, reset, timed_out, cancelled}) {
    EXPECT_FALSE(IsRefusal(s)) << s.ToString();
  }
  EXPECT_TRUE(IsTransportError(reset));
  EXPECT_TRUE(IsTransportError(timed_out));
  EXPECT_TRUE(IsTransportError(reset.WithPrefix("create claim")));
  for (const Status& s : {refused, throttled, unavailable, cancelled, OkStatus()}) {
    EXPECT_FALSE(IsTransportError(s)) << s.ToString();
  }
  for (const Status& s : {throttled, unavailable, reset, timed_out}) {
    EXPECT_TRUE(IsRetryable(s)) << s.ToString();
  }
  for (const Status& s : {refused, forbidden, cancelled, OkStatus()}) {
    EXPECT_FALSE(IsRetryable(s)) << s.ToString();
  }
}

}  // namespace
}  // namespace draco::k8s
