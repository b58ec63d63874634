#include "controller/run/run.h"

#include <gtest/gtest.h>

namespace draco::run {
namespace {

StatusOr<Flags> Parse(std::vector<std::string> args) {
  std::vector<char*> argv;
  static std::string run = "run";
  argv.push_back(run.data());
  for (auto& a : args) argv.push_back(a.data());
  return ParseFlags(static_cast<int>(argv.size()), argv.data());
}

TEST(ParseFlagsTest, AcceptsChartArguments) {
  auto f = Parse({"--leader-elect=true", "--leader-elect-namespace=draco-system",
                  "--metrics-bind-address=:8080", "--health-probe-bind-address=:8081",
                  "--kube-api-qps=50", "--kube-api-burst=100", "--workers=8", "--log-format=json",
                  "-v=2", "--kubeconfig", "/tmp/kc"});
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_TRUE(f->leader_elect);
  EXPECT_EQ(f->leader_elect_namespace, "draco-system");
  EXPECT_EQ(f->metrics_bind_address, ":8080");
  EXPECT_EQ(f->kube_api_qps, 50);
  EXPECT_EQ(f->kube_api_burst, 100);
  EXPECT_EQ(f->workers, 8);
  EXPECT_EQ(f->log_format, "json");
  EXPECT_EQ(f->verbosity, 2);
  EXPECT_EQ(f->kubeconfig, "/tmp/kc");
}

TEST(ParseFlagsTest, BareBooleanAndDefaults) {
  auto f = Parse({"--leader-elect=false", "--allocate"});
  ASSERT_TRUE(f.ok());
  EXPECT_FALSE(f->leader_elect);
  EXPECT_TRUE(f->allocate);
  EXPECT_EQ(f->leader_elect_lease_name, "draco");
  EXPECT_EQ(f->workers, 16);
}

TEST(ParseFlagsTest, RejectsUnknownAndBadValues) {
  EXPECT_FALSE(Parse({"--nope=1"}).ok());
  EXPECT_FALSE(Parse({"--workers=0"}).ok());
  EXPECT_FALSE(Parse({"--kube-api-qps=abc"}).ok());
  EXPECT_FALSE(Parse({"--log-format=xml"}).ok());
  EXPECT_FALSE(Parse({"--leader-elect=maybe"}).ok());
  EXPECT_FALSE(Parse({"--kubeconfig"}).ok());
}

}  // namespace
}  // namespace draco::run
