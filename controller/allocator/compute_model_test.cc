#include "controller/allocator/compute_model.h"

#include <gtest/gtest.h>

namespace draco::alloc {
namespace {

Amount Nanos(const char* s) {
  auto q = Qty::Parse(s);
  EXPECT_TRUE(q.ok()) << s;
  return q.ok() ? q->nanos : -1;
}

TEST(QtyTest, ParsesExactNanoValues) {
  EXPECT_EQ(Nanos("1"), Amount(1000000000));
  EXPECT_EQ(Nanos("1Gi"), Amount(1073741824) * 1000000000);
  EXPECT_EQ(Nanos("1500m"), Amount(1500000000));
  EXPECT_EQ(Nanos("1.5Gi"), Amount(1610612736) * 1000000000);
  EXPECT_EQ(Nanos("2e3"), Amount(2000) * 1000000000);
  EXPECT_EQ(Nanos("-3k"), -Amount(3000) * 1000000000);
  EXPECT_EQ(Nanos("1n"), Amount(1));
  EXPECT_EQ(Nanos("0.1n"), Amount(1));  // finer than 1n rounds up, as upstream
  EXPECT_FALSE(Qty::Parse("1Qi").ok());
}

TEST(QtyTest, ValueRoundsAwayFromZero) {
  EXPECT_EQ(Qty::Parse("1500m")->Value(), 2);
  EXPECT_EQ(Qty::Parse("-1500m")->Value(), -2);
  EXPECT_EQ(Qty::Parse("1Ki")->Value(), 1024);
  EXPECT_EQ(Qty::Parse("1.5")->MilliValue(), 1500);
}

TEST(QtyTest, KeepsUpstreamTextForOutput) {
  EXPECT_EQ(Qty::Parse("1Gi")->ToString(), "1Gi");
  EXPECT_EQ(Qty::FromInt64(3 * 1073741824LL, api::Quantity::Format::kBinarySI).ToString(), "3Gi");
}

}  // namespace
}  // namespace draco::alloc
