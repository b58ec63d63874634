#include "controller/api/quantity.h"

#include <cmath>
#include <limits>

#include <gtest/gtest.h>

namespace draco::api {
namespace {

Quantity Q(std::string_view s) {
  StatusOr<Quantity> q = Quantity::Parse(s);
  EXPECT_TRUE(q.ok()) << s << ": " << q.status();
  return q.ok() ? *q : Quantity();
}

struct StringCase {
  std::string_view in;
  std::string_view out;
};

TEST(QuantityTest, ParseAndStringMatchUpstream) {
  // Expected outputs follow upstream's String(): canonical form, except that already-canonical
  // input text is kept verbatim.
  const StringCase cases[] = {
      {"0", "0"},
      {"-0", "0"},
      {"00", "0"},
      {"1", "1"},
      {"+1", "+1"},  // canonical text is reused as written
      {"01", "01"},
      {"-1", "-1"},
      {"0.5", "500m"},
      {".5", "500m"},
      {"1.", "1."},  // canonical text reused verbatim, as upstream does
      {"1.5", "1500m"},
      {"1.0", "1"},
      {"100m", "100m"},
      {"1000m", "1"},
      {"1500m", "1500m"},
      {"1.5Gi", "1536Mi"},
      {"0.5Gi", "512Mi"},
      {"1Ki", "1Ki"},
      {"1024Ki", "1Mi"},
      {"8Ki", "8Ki"},
      {"1536Mi", "1536Mi"},
      {"1e3", "1e3"},
      {"1E3", "1E3"},
      {"1000e0", "1e3"},
      {"10e3", "10e3"},
      {"1e-3", "1e-3"},
      {"12e6", "12e6"},
      {"1k", "1k"},
      {"1000", "1k"},
      {"1000000", "1M"},
      {"1100", "1100"},
      {"1.1k", "1100"},
      {"1n", "1n"},
      {"1.5n", "2n"},
      {"0.9n", "1n"},
      {"-0.9n", "-1n"},
      {"1e-10", "1e-9"},
      {"0.1m", "100u"},
      {"1u", "1u"},
      {"1E", "1E"},
      {"1000E", "1e21"},
      {"1P", "1P"},
      {"1023", "1023"},
      {"0.1Ki", "102400m"},
      {"0.5Ki", "512"},
      {"1.5Ki", "1536"},
      {"1Ei", "1Ei"},
      {"8Ei", "9223372036854775807"},  // BinarySI is capped at 2^63-1
      {"-1Ki", "-1Ki"},
      {"-1.5Gi", "-1536Mi"},
      {"9223372036854775807", "9223372036854775807"},
      {"9223372036854775808", "9223372036854775808"},
      {"18446744073709551616", "18446744073709551616"},
      {"1.2345", "1234500u"},
      {"0.30000000000000004", "300000001n"} /* rounded up to nano */,
      {"123456789012345678901234567890", "123456789012345678901234567890"},
      {"1e100", "10e99"},
      {"5e100", "50e99"},
      {"1e99", "1e99"},
      {"0.000000000000000000001", "1n"},
      {".", "0"},
      {"+", "0"},
      {"-", "0"},
      {"0Mi", "0"},
  };
  for (const StringCase& c : cases) {
    SCOPED_TRACE(std::string(c.in));
    StatusOr<Quantity> q = Quantity::Parse(c.in);
    ASSERT_TRUE(q.ok()) << q.status();
    EXPECT_EQ(q->ToString(), c.out);
  }
}

TEST(QuantityTest, ParseErrorsUseUpstreamMessages) {
  const std::string format_wrong =
      "quantities must match the regular expression "
      "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
  const struct {
    std::string_view in;
    std::string message;
  } cases[] = {
      {"", format_wrong},
      {"abc", format_wrong},
      {"1.5Gi ", format_wrong},
      {" 1", format_wrong},
      {"1..5", format_wrong},
      {"1Gb", format_wrong},
      {"1K", "unable to parse quantity's suffix"},
      {"1mi", "unable to parse quantity's suffix"},
      {"1e", "unable to parse quantity's suffix"},
      {"1ee3", "unable to parse quantity's suffix"},
      {"1e+", "unable to parse quantity's suffix"},
      {"1e99999999999999999999", "unable to parse quantity's suffix"},
      {"1i", "unable to parse quantity's suffix"},
      {"--1", "unable to parse quantity's suffix"},
      {".e-10", "unable to parse numeric part of quantity"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(c.in));
    StatusOr<Quantity> q = Quantity::Parse(c.in);
    ASSERT_FALSE(q.ok());
    EXPECT_EQ(q.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(q.status().message(), c.message);
  }
}

TEST(QuantityTest, Formats) {
  EXPECT_EQ(Q("1Ki").format(), Quantity::Format::kBinarySI);
  EXPECT_EQ(Q("1k").format(), Quantity::Format::kDecimalSI);
  EXPECT_EQ(Q("1e3").format(), Quantity::Format::kDecimalExponent);
  EXPECT_EQ(Q("1").format(), Quantity::Format::kDecimalSI);
  // A BinarySI value strictly between 0 and 1 parsed through the decimal path becomes DecimalSI.
  EXPECT_EQ(Q("0.0001Ki").format(), Quantity::Format::kDecimalSI);
  EXPECT_EQ(Quantity().format(), Quantity::Format::kDecimalSI);
}

TEST(QuantityTest, CompareIsExact) {
  EXPECT_EQ(Q("1Gi").Compare(Q("1G")), 1);
  EXPECT_EQ(Q("1G").Compare(Q("1Gi")), -1);
  EXPECT_EQ(Q("1000m").Compare(Q("1")), 0);
  EXPECT_EQ(Q("1.5Gi").Compare(Q("1536Mi")), 0);
  EXPECT_EQ(Q("1e3").Compare(Q("1k")), 0);
  EXPECT_EQ(Q("-1").Compare(Q("1n")), -1);
  EXPECT_EQ(Q("0").Compare(Q("-0")), 0);
  EXPECT_EQ(Q("123456789012345678901").Compare(Q("123456789012345678900")), 1);
  EXPECT_EQ(Q("1e100").Compare(Q("1e99")), 1);
  EXPECT_EQ(Q("-1e100").Compare(Q("-1e99")), -1);
  EXPECT_EQ(Q("1e-9").Compare(Q("1n")), 0);
  EXPECT_EQ(Q("9223372036854775807").Compare(Q("9223372036854775808")), -1);
  EXPECT_EQ(Q("10e3").Compare(Q("1e4")), 0);
  EXPECT_TRUE(Q("1Ki") == Q("1024"));
  EXPECT_FALSE(Q("1Ki") == Q("1k"));
}

TEST(QuantityTest, AddAndSubAreExact) {
  EXPECT_EQ(Q("100m").Add(Q("900m")).ToString(), "1");
  EXPECT_EQ(Q("1").Sub(Q("1n")).ToString(), "999999999n");
  EXPECT_EQ(Q("1Gi").Add(Q("1Gi")).ToString(), "2Gi");
  EXPECT_EQ(Q("1Gi").Add(Q("1")).ToString(), "1073741825");
  EXPECT_EQ(Q("1.5Gi").Add(Q("512Mi")).ToString(), "2Gi");
  EXPECT_EQ(Q("1k").Sub(Q("1k")).ToString(), "0");
  EXPECT_EQ(Q("1").Sub(Q("2")).ToString(), "-1");
  // Overflowing int64 switches to the exact decimal form.
  Quantity big = Q("9223372036854775807").Add(Q("1"));
  EXPECT_EQ(big.ToString(), "9223372036854775808");
  EXPECT_EQ(big.Sub(Q("1")).ToString(), "9223372036854775807");
  EXPECT_EQ(Q("1e100").Add(Q("1")).Compare(Q("1e100")), 1);
  EXPECT_EQ(Q("1E").Add(Q("1n")).ToString(), "1000000000000000000000000001n");
  EXPECT_EQ(Q("1e18").Add(Q("1n")).ToString(), "1000000000000000000000000001e-9");
  // The sum takes the other operand's format when the receiver is zero.
  EXPECT_EQ(Quantity().Add(Q("1Ki")).format(), Quantity::Format::kBinarySI);
  EXPECT_EQ(Quantity().Add(Q("1Ki")).ToString(), "1Ki");
  EXPECT_EQ(Quantity().Sub(Q("1Ki")).ToString(), "-1Ki");
  EXPECT_EQ(Q("1Ki").Add(Quantity::FromInt64(1, Quantity::Format::kDecimalExponent)).ToString(),
            "1025");
  // Results are never the cached input text.
  EXPECT_EQ(Q("+1").Add(Quantity()).ToString(), "1");
  // int64 minimum survives negation through the decimal form.
  Quantity min = Quantity::FromInt64(std::numeric_limits<int64_t>::min());
  EXPECT_EQ(min.Neg().ToString(), "9223372036854775808");
  EXPECT_EQ(Quantity().Sub(min).ToString(), "9223372036854775808");
  EXPECT_EQ(Q("5").Sub(min).ToString(), "9223372036854775813");
}

TEST(QuantityTest, SignAndZero) {
  EXPECT_EQ(Q("-1n").Sign(), -1);
  EXPECT_EQ(Q("0").Sign(), 0);
  EXPECT_EQ(Q("1.5Gi").Sign(), 1);
  EXPECT_EQ(Q("-1.5Gi").Sign(), -1);
  EXPECT_TRUE(Q("0.000").IsZero());
  EXPECT_TRUE(Q("0.00000000000000000000000").IsZero());
  EXPECT_FALSE(Q("1n").IsZero());
}

TEST(QuantityTest, AsInt64FollowsUpstreamRepresentation) {
  EXPECT_EQ(Q("1").AsInt64(), 1);
  EXPECT_EQ(Q("1k").AsInt64(), 1000);
  EXPECT_EQ(Q("1Ki").AsInt64(), 1024);
  EXPECT_EQ(Q("1Ti").AsInt64(), int64_t{1} << 40);
  EXPECT_EQ(Q("-5M").AsInt64(), -5000000);
  EXPECT_EQ(Q("9223372036854775807").AsInt64(), std::nullopt);  // 19 digits: decimal form
  EXPECT_EQ(Q("922337203685477580").AsInt64(), 922337203685477580);
  // Upstream quirks kept on purpose: scale < 0 or the inf.Dec form is "not an integer".
  EXPECT_EQ(Q("1000m").AsInt64(), std::nullopt);
  EXPECT_EQ(Q("1.0").AsInt64(), std::nullopt);
  EXPECT_EQ(Q("1.5Gi").AsInt64(), std::nullopt);
  EXPECT_EQ(Q("1Pi").AsInt64(), std::nullopt);
  EXPECT_EQ(Q("1e19").AsInt64(), std::nullopt);
  EXPECT_EQ(Q("1e18").AsInt64(), 1000000000000000000);
  EXPECT_FALSE(Q("500m").IsInteger());
  EXPECT_TRUE(Q("2").IsInteger());
  EXPECT_TRUE(Q("1").Add(Q("1k")).IsInteger());
  EXPECT_FALSE(Q("500m").Add(Q("500m")).IsInteger());
}

TEST(QuantityTest, AsApproximateFloat64) {
  EXPECT_DOUBLE_EQ(Q("1.5").AsApproximateFloat64(), 1.5);
  EXPECT_EQ(Q("1Ki").AsApproximateFloat64(), 1024.0);
  EXPECT_EQ(Q("1.5Gi").AsApproximateFloat64(), 1610612736.0);
  EXPECT_EQ(Q("100m").AsApproximateFloat64(), 100 * 1e-3);
  EXPECT_EQ(Q("-2k").AsApproximateFloat64(), -2000.0);
  EXPECT_TRUE(std::isinf(Q("1e400").AsApproximateFloat64()));
  EXPECT_EQ(Q("0").AsApproximateFloat64(), 0.0);
}

TEST(QuantityTest, CanonicalBinaryEdgeCases) {
  // Below 1024 in magnitude BinarySI prints as DecimalSI.
  EXPECT_EQ(Q("0.5Ki").Sub(Q("0.5Ki")).Add(Q("1023")).ToString(), "1023");
  EXPECT_EQ(Q("1Ki").Sub(Q("1")).ToString(), "1023");
  // A fractional BinarySI value keeps precision by printing as DecimalSI.
  EXPECT_EQ(Q("1Ki").Add(Q("500m")).ToString(), "1024500m");
  EXPECT_EQ(Q("1Ki").Add(Q("1000m")).ToString(), "1025");
  EXPECT_EQ(Q("1Ki").Add(Q("1Ki")).Add(Q("1Ki")).ToString(), "3Ki");
}

}  // namespace
}  // namespace draco::api

TEST(QuantityScaledValueTest, RoundsAwayFromZeroExactly) {
  auto v = [](const char* s) { return draco::api::Quantity::Parse(s).value(); };
  EXPECT_EQ(v("100m").MilliValue(), 100);
  EXPECT_EQ(v("0.3").MilliValue(), 300);
  EXPECT_EQ(v("1.5").Value(), 2);
  EXPECT_EQ(v("1Gi").Value(), int64_t{1} << 30);
  EXPECT_EQ(v("1n").MilliValue(), 1);
  EXPECT_EQ(v("-1n").MilliValue(), -1);
  EXPECT_EQ(v("2").MilliValue(), 2000);
  EXPECT_EQ(v("1E30").Value(), std::numeric_limits<int64_t>::max());
}
