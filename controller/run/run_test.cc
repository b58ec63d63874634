#include "controller/run/run.h"

#include <gtest/gtest.h>

#include "controller/run/proto_schema.h"
#include "k8sclient/config.h"

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

TEST(LoggingTest, VerbosityFollowsKlog) {
  for (int v : {0, 1, 2, 3}) EXPECT_EQ(LogLevelFor(v), LogLevel::kInfo) << v;
  for (int v : {4, 5}) EXPECT_EQ(LogLevelFor(v), LogLevel::kDebug) << v;
  for (int v : {6, 7, 10}) EXPECT_EQ(LogLevelFor(v), LogLevel::kTrace) << v;
  EXPECT_NE(FlagUsage().find("0-3 info, 4-5 debug, 6 and\n"), std::string::npos);
}

// --help names the kubeconfig sources in the order k8s::DefaultConfig tries them (config_test
// checks the loader against the same constant).
TEST(FlagUsageTest, KubeconfigOrderIsTheLoaders) {
  std::string u = FlagUsage();
  std::string collapsed;  // whitespace runs (the wrapped help text) as one space
  for (char c : u) {
    const bool space = c == ' ' || c == '\n';
    if (!space || (!collapsed.empty() && collapsed.back() != ' ')) collapsed += space ? ' ' : c;
  }
  EXPECT_NE(collapsed.find("--kubeconfig PATH kubeconfig (default: " +
                           std::string(k8s::kDefaultConfigOrder) + ")"),
            std::string::npos)
      << u;
}

TEST(ParseFlagsTest, BareBooleanAndDefaults) {
  auto f = Parse({"--leader-elect=false", "--allocate"});
  ASSERT_TRUE(f.ok());
  EXPECT_FALSE(f->leader_elect);
  EXPECT_TRUE(f->allocate);
  EXPECT_EQ(f->leader_elect_lease_name, "draco");
  EXPECT_EQ(f->workers, 32);
}

TEST(ParseFlagsTest, RejectsUnknownAndBadValues) {
  EXPECT_FALSE(Parse({"--nope=1"}).ok());
  EXPECT_FALSE(Parse({"--workers=0"}).ok());
  EXPECT_FALSE(Parse({"--kube-api-qps=abc"}).ok());
  EXPECT_FALSE(Parse({"--log-format=xml"}).ok());
  EXPECT_FALSE(Parse({"--leader-elect=maybe"}).ok());
  EXPECT_FALSE(Parse({"--kubeconfig"}).ok());
}

TEST(ParseFlagsTest, LeaderElectionTimings) {
  using std::chrono::milliseconds;
  auto d = Parse({});
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->leader_elect_lease_duration, milliseconds(15000));
  EXPECT_EQ(d->leader_elect_renew_deadline, milliseconds(10000));
  EXPECT_EQ(d->leader_elect_retry_period, milliseconds(2000));
  auto f = Parse({"--leader-elect-lease-duration=1m30s", "--leader-elect-renew-deadline", "20s",
                  "--leader-elect-retry-period=1500ms"});
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->leader_elect_lease_duration, milliseconds(90000));
  EXPECT_EQ(f->leader_elect_renew_deadline, milliseconds(20000));
  EXPECT_EQ(f->leader_elect_retry_period, milliseconds(1500));
  auto half = Parse({"--leader-elect-retry-period=0.5s"});
  ASSERT_TRUE(half.ok()) << half.status();
  EXPECT_EQ(half->leader_elect_retry_period, milliseconds(500));
  for (const char* bad : {"15", "s", "15x", "-1s", "0s", ""}) {
    EXPECT_FALSE(Parse({std::string("--leader-elect-lease-duration=") + bad}).ok()) << bad;
  }
  // lease duration > renew deadline > 1.2 x retry period
  auto order = Parse({"--leader-elect-lease-duration=10s"});
  ASSERT_FALSE(order.ok());
  EXPECT_NE(order.status().message().find("--leader-elect-renew-deadline"), std::string::npos);
  EXPECT_FALSE(Parse({"--leader-elect-retry-period=9s"}).ok());
  EXPECT_TRUE(Parse({"--leader-elect-retry-period=8s"}).ok());
}

TEST(ParseFlagsTest, HelpAndPolicyRecheckInterval) {
  auto h = Parse({"--help"});
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_TRUE(h->help);
  std::string u = FlagUsage();
  for (const char* flag :
       {"--kubeconfig", "--leader-elect", "--metrics-bind-address", "--health-probe-bind-address",
        "--kube-api-qps", "--kube-api-burst", "--workers", "--allocation-policy-recheck-interval",
        "-v ", "--log-format", "--leader-elect-lease-duration", "--leader-elect-renew-deadline",
        "--leader-elect-retry-period", "--binding-timeout"}) {
    EXPECT_NE(u.find(flag), std::string::npos) << flag;
  }
  // ":PORT" is loopback: a pod's probes and scrapes need 0.0.0.0:PORT (the chart's bug of 12-07).
  EXPECT_NE(u.find(":PORT listens on 127.0.0.1 only"), std::string::npos);
  auto f = Parse({"--allocation-policy-recheck-interval=2"});
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->allocation_policy_recheck_seconds, 2);
  EXPECT_EQ(Parse({})->allocation_policy_recheck_seconds, 30);
  EXPECT_FALSE(Parse({"--allocation-policy-recheck-interval=0"}).ok());
}

TEST(ParseFlagsTest, Groups) {
  auto d = Parse({});
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(d->groups);
  EXPECT_EQ(d->group_reserve_after, std::chrono::minutes(2));
  EXPECT_EQ(d->group_reserve_max, std::chrono::minutes(10));
  auto f = Parse({"--groups=false", "--group-reserve-after=20s", "--group-reserve-max", "1m"});
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_FALSE(f->groups);
  EXPECT_EQ(f->group_reserve_after, std::chrono::seconds(20));
  EXPECT_EQ(f->group_reserve_max, std::chrono::minutes(1));
  EXPECT_FALSE(Parse({"--group-reserve-after=0s"}).ok());
}

TEST(ParseFlagsTest, BindingTimeout) {
  EXPECT_EQ(Parse({})->binding_timeout, std::chrono::minutes(10));  // kube-scheduler's default
  auto f = Parse({"--binding-timeout=25s"});
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->binding_timeout, std::chrono::seconds(25));
  EXPECT_EQ(Parse({"--binding-timeout", "1m30s"})->binding_timeout, std::chrono::seconds(90));
  auto short_one = Parse({"--binding-timeout=500ms"});
  ASSERT_FALSE(short_one.ok());
  EXPECT_NE(short_one.status().message().find("at least 1s"), std::string::npos);
  EXPECT_FALSE(Parse({"--binding-timeout=soon"}).ok());
}

TEST(ParseFlagsTest, PinAllocatedNode) {
  EXPECT_TRUE(Parse({})->pin_allocated_node);
  EXPECT_FALSE(Parse({"--pin-allocated-node=false"})->pin_allocated_node);
  auto bare = Parse({"--pin-allocated-node", "--workers=3"});
  ASSERT_TRUE(bare.ok()) << bare.status();
  EXPECT_TRUE(bare->pin_allocated_node);
  EXPECT_EQ(bare->workers, 3);
  EXPECT_FALSE(Parse({"--pin-allocated-node=maybe"}).ok());
  EXPECT_NE(FlagUsage().find("--pin-allocated-node"), std::string::npos);
  EXPECT_EQ(Parse({})->http_threads, 4);
  EXPECT_EQ(Parse({"--http-threads=2"})->http_threads, 2);
  EXPECT_FALSE(Parse({"--http-threads=0"}).ok());
  EXPECT_TRUE(Parse({})->direct_transport);
  EXPECT_FALSE(Parse({"--http-transport=cpprestsdk"})->direct_transport);
  EXPECT_TRUE(Parse({"--http-transport", "direct"})->direct_transport);
  EXPECT_FALSE(Parse({"--http-transport=curl"}).ok());
  EXPECT_TRUE(Parse({})->protobuf);
  EXPECT_FALSE(Parse({"--api-encoding=json"})->protobuf);
  EXPECT_TRUE(Parse({"--api-encoding", "protobuf"})->protobuf);
  EXPECT_FALSE(Parse({"--api-encoding=cbor"}).ok());
  EXPECT_NE(FlagUsage().find("--api-encoding"), std::string::npos);
  // The built-in schema parses and serves the kinds draco reads.
  auto schema = KubeProtoSchema();
  ASSERT_NE(schema, nullptr);
  for (const auto& [api_version, kind] : std::vector<std::pair<std::string, std::string>>{
           {"v1", "Pod"},
           {"v1", "NodeList"},
           {"resource.k8s.io/v1", "ResourceClaim"},
           {"resource.k8s.io/v1", "ResourceSliceList"},
           {"coordination.k8s.io/v1", "Lease"},
           {"scheduling.k8s.io/v1beta1", "PodGroup"}}) {
    EXPECT_NE(schema->FindKind(api_version, kind), nullptr) << api_version << " " << kind;
  }
  EXPECT_FALSE(schema->ServesGroupVersion("draco.dev/v1alpha1"));
}

TEST(ParseFlagsTest, FeatureGates) {
  auto f = Parse({"--feature-gates=DRAListTypeAttributes=true,DRADeviceTaints=false"});
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->feature_gates, "DRAListTypeAttributes=true,DRADeviceTaints=false");
  EXPECT_TRUE(Parse({})->feature_gates.empty());
  auto bad = Parse({"--feature-gates", "NoSuchGate=true"});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("NoSuchGate"), std::string::npos) << bad.status();
  EXPECT_NE(FlagUsage().find("--feature-gates"), std::string::npos);
}

}  // namespace
}  // namespace draco::run
