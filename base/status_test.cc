#include "base/status.h"

#include <cerrno>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "base/status_macros.h"

namespace draco {
namespace {

StatusOr<int> Half(int x) {
  if (x % 2 != 0) return InvalidArgumentError("odd: " + std::to_string(x));
  return x / 2;
}

StatusOr<int> Quarter(int x) {
  DRACO_ASSIGN_OR_RETURN(int h, Half(x));
  DRACO_ASSIGN_OR_RETURN(int q, Half(h));
  return q;
}

Status CheckEven(int x) {
  DRACO_RETURN_IF_ERROR(Half(x).status());
  return OkStatus();
}

TEST(StatusTest, OkHasNoMessage) {
  Status s(StatusCode::kOk, "ignored");
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.message(), "");
  EXPECT_EQ(s.ToString(), "OK");
}

TEST(StatusTest, ToStringNamesCode) {
  EXPECT_EQ(NotFoundError("x").ToString(), "NOT_FOUND: x");
  EXPECT_EQ(NotFoundError("x").WithPrefix("get pod").ToString(), "NOT_FOUND: get pod: x");
}

TEST(StatusOrTest, PropagatesFirstError) {
  EXPECT_EQ(*Quarter(8), 2);
  auto r = Quarter(6);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "odd: 3");
  EXPECT_TRUE(CheckEven(4).ok());
  EXPECT_EQ(CheckEven(5).code(), StatusCode::kInvalidArgument);
}

TEST(StatusOrTest, OkStatusBecomesInternal) {
  StatusOr<int> r = OkStatus();
  EXPECT_EQ(r.status().code(), StatusCode::kInternal);
}

TEST(StatusOrTest, HoldsMoveOnly) {
  StatusOr<std::unique_ptr<int>> r = std::make_unique<int>(7);
  ASSERT_TRUE(r.ok());
  std::unique_ptr<int> p = std::move(r).value();
  EXPECT_EQ(*p, 7);
  EXPECT_EQ(StatusOr<std::string>(UnavailableError("x")).value_or("d"), "d");
}

}  // namespace
}  // namespace draco

namespace draco {
namespace {

TEST(ErrnoMessageTest, NamesTheError) {
  EXPECT_EQ(ErrnoMessage(ENOENT), "No such file or directory");
  EXPECT_EQ(ErrnoMessage(EAGAIN), "Resource temporarily unavailable");
  EXPECT_EQ(ErrnoMessage(99999), "Unknown error 99999");
}

}  // namespace
}  // namespace draco
