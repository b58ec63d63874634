#include "controller/cel/value.h"

#include <cmath>
#include <limits>

#include <gtest/gtest.h>

namespace draco::cel {
namespace {

TEST(ValueTest, NumericEqualityAcrossKinds) {
  EXPECT_TRUE(ValueEquals(Value::Int(1), Value::Uint(1)));
  EXPECT_TRUE(ValueEquals(Value::Int(1), Value::Double(1.0)));
  EXPECT_FALSE(ValueEquals(Value::Int(-1), Value::Uint(18446744073709551615u)));
  EXPECT_FALSE(ValueEquals(Value::Double(std::nan("")), Value::Double(std::nan(""))));
  EXPECT_FALSE(ValueEquals(Value::Int(1), Value::String("1")));
}

TEST(ValueTest, CompareMixedNumbers) {
  EXPECT_EQ(ValueCompare(Value::Int(-1), Value::Uint(0)), -1);
  EXPECT_EQ(ValueCompare(Value::Double(1.5), Value::Int(1)), 1);
  EXPECT_EQ(ValueCompare(Value::Uint(2), Value::Double(2.0)), 0);
  EXPECT_FALSE(ValueCompare(Value::Int(1), Value::String("a")).has_value());
}

TEST(ValueTest, FormatDoubleLikeGo) {
  EXPECT_EQ(FormatDouble(1.0), "1");
  EXPECT_EQ(FormatDouble(0.1), "0.1");
  EXPECT_EQ(FormatDouble(1e6), "1e+06");
  EXPECT_EQ(FormatDouble(123456.0), "123456");
  EXPECT_EQ(FormatDouble(1.5e-5), "1.5e-05");
  EXPECT_EQ(FormatDouble(-2.25), "-2.25");
  EXPECT_EQ(FormatDouble(std::numeric_limits<double>::infinity()), "+Inf");
}

TEST(ValueTest, MapLookupUsesNumericKeyEquality) {
  std::vector<std::pair<Value, Value>> entries;
  entries.emplace_back(Value::Int(1), Value::String("one"));
  MapValueImpl m(std::move(entries));
  ASSERT_NE(m.Find(Value::Uint(1)), nullptr);
  EXPECT_EQ(m.Find(Value::Double(1.0))->str(), "one");
  EXPECT_EQ(m.Find(Value::Int(2)), nullptr);
}

}  // namespace
}  // namespace draco::cel
