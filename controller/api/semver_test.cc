#include "controller/api/semver.h"

#include <gtest/gtest.h>

namespace draco::api {
namespace {

TEST(SemVerTest, ParsesStrictVersions) {
  const struct {
    std::string_view in;
    std::string_view out;
  } cases[] = {
      {"1.2.3", "1.2.3"},
      {"0.0.0", "0.0.0"},
      {"1.2.3-alpha", "1.2.3-alpha"},
      {"1.2.3-alpha.1", "1.2.3-alpha.1"},
      {"1.2.3-0.3.7", "1.2.3-0.3.7"},
      {"1.2.3+build.5", "1.2.3+build.5"},
      {"1.2.3-rc.1+build-x.01", "1.2.3-rc.1+build-x.01"},
      {"1.2.3+b-c", "1.2.3+b-c"},
      {"18446744073709551615.0.0", "18446744073709551615.0.0"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(c.in));
    StatusOr<SemVer> v = SemVer::Parse(c.in);
    ASSERT_TRUE(v.ok()) << v.status();
    EXPECT_EQ(v->ToString(), c.out);
  }
  SemVer v = *SemVer::Parse("10.20.30");
  EXPECT_EQ(v.major(), 10u);
  EXPECT_EQ(v.minor(), 20u);
  EXPECT_EQ(v.patch(), 30u);
}

TEST(SemVerTest, RejectsInvalidVersions) {
  const struct {
    std::string_view in;
    std::string_view message;
  } cases[] = {
      {"", "Version string empty"},
      {"1.2", "No Major.Minor.Patch elements found"},
      {"v1.2.3", "Invalid character(s) found in major number \"v1\""},
      {"01.2.3", "Major number must not contain leading zeroes \"01\""},
      {"1.02.3", "Minor number must not contain leading zeroes \"02\""},
      {"1.2.03", "Patch number must not contain leading zeroes \"03\""},
      {"1.2.3-", "Prerelease is empty"},
      {"1.2.3-01", "Numeric PreRelease version must not contain leading zeroes \"01\""},
      {"1.2.3-a_b", "Invalid character(s) found in prerelease \"a_b\""},
      {"1.2.3+", "Build meta data is empty"},
      {"1.2.3+a..b", "Build meta data is empty"},
      {"1.2.x", "Invalid character(s) found in patch number \"x\""},
      {"1..3", "strconv.ParseUint: parsing \"\": invalid syntax"},
      {"18446744073709551616.0.0",
       "strconv.ParseUint: parsing \"18446744073709551616\": value out of range"},
      {" 1.2.3", "Invalid character(s) found in major number \" 1\""},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(c.in));
    StatusOr<SemVer> v = SemVer::Parse(c.in);
    ASSERT_FALSE(v.ok());
    EXPECT_EQ(v.status().message(), c.message);
  }
}

TEST(SemVerTest, NormalizeLikeKubernetesCel) {
  const struct {
    std::string_view in;
    std::string_view out;
  } cases[] = {
      {"v1.2.3", "1.2.3"},
      {"1", "1.0.0"},
      {"v1.2", "1.2.0"},
      {"01.02.03", "1.2.3"},
      {"1.2.3-rc.1", "1.2.3-rc.1"},
      {"00.0.0", "0.0.0"},
      {"1.2.03-x", "1.2.3-x"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(c.in));
    StatusOr<SemVer> v = SemVer::Parse(c.in, /*normalize=*/true);
    ASSERT_TRUE(v.ok()) << v.status();
    EXPECT_EQ(v->ToString(), c.out);
  }
  EXPECT_EQ(SemVer::Parse("1.2-rc", true).status().message(),
            "short version cannot contain PreRelease/Build meta data");
  EXPECT_FALSE(SemVer::Parse("vv1.2.3", true).ok());
  EXPECT_FALSE(SemVer::Parse("v1.2.3", false).ok());
}

TEST(SemVerTest, ComparesByPrecedence) {
  auto cmp = [](std::string_view a, std::string_view b) {
    return SemVer::Parse(a)->Compare(*SemVer::Parse(b));
  };
  // The semver.org precedence chain.
  const char* chain[] = {"1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta",
                         "1.0.0-beta",  "1.0.0-beta.2",  "1.0.0-beta.11",
                         "1.0.0-rc.1",  "1.0.0",         "1.0.1",
                         "1.1.0",       "2.0.0"};
  for (size_t i = 0; i + 1 < std::size(chain); ++i) {
    EXPECT_EQ(cmp(chain[i], chain[i + 1]), -1) << chain[i] << " < " << chain[i + 1];
    EXPECT_EQ(cmp(chain[i + 1], chain[i]), 1);
    EXPECT_EQ(cmp(chain[i], chain[i]), 0);
  }
  EXPECT_EQ(cmp("1.0.0+a", "1.0.0+b"), 0);
  EXPECT_EQ(cmp("1.10.0", "1.9.0"), 1);
  EXPECT_EQ(cmp("1.0.0-B", "1.0.0-a"), -1);  // ASCII order
}

}  // namespace
}  // namespace draco::api
