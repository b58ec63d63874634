#include "base/version.h"

#include <regex>

#include <gtest/gtest.h>

namespace draco {
namespace {

TEST(VersionTest, VersionIsCMakesProjectVersion) {
  EXPECT_EQ(Version(), DRACO_TEST_PROJECT_VERSION);
  EXPECT_FALSE(Revision().empty());
  EXPECT_NE(Revision().find_first_not_of(" \t\n"), std::string_view::npos);
}

TEST(VersionTest, VersionLineNamesVersionRevisionAndPlatform) {
  EXPECT_EQ(VersionLine(), "draco " + std::string(Version()) + " (revision " +
                               std::string(Revision()) + ", " + std::string(Platform()) + ")");
  EXPECT_TRUE(std::regex_match(std::string(Platform()), std::regex("[a-z]+/[a-z0-9]+")));
}

TEST(VersionTest, UserAgentHasClientGosForm) {
  const std::string ua = UserAgent("draco");
  EXPECT_TRUE(std::regex_match(
      ua, std::regex(R"(draco/[0-9]+\.[0-9]+\.[0-9]+ \([a-z]+/[a-z0-9]+\) kubernetes/[^ /]{1,7})")))
      << ua;
  EXPECT_EQ(ua.rfind("draco/" + std::string(Version()) + " (" + std::string(Platform()) + ")", 0),
            0u)
      << ua;
  EXPECT_EQ(ua.substr(ua.rfind('/') + 1), Revision().substr(0, 7)) << ua;
}

}  // namespace
}  // namespace draco
