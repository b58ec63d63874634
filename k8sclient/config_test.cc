#include "k8sclient/config.h"

#include <filesystem>
#include <fstream>
#include <vector>

#include <gtest/gtest.h>

#include "k8sclient/auth.h"

#include <sys/stat.h>

namespace draco::k8s {
namespace {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/k8sclient-test-XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string Write(const std::string& name, const std::string& content) const {
    std::string p = path_ + "/" + name;
    std::ofstream(p) << content;
    return p;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// base64("CA-PEM") = Q0EtUEVN, base64("CERT") = Q0VSVA==, base64("KEY") = S0VZ
const char* kKubeconfig = R"(
apiVersion: v1
kind: Config
current-context: tok
clusters:
- name: c1
  cluster:
    server: https://127.0.0.1:6443/
    certificate-authority-data: Q0EtUEVN
- name: c2
  cluster:
    server: https://10.0.0.1
    certificate-authority: ca.crt
- name: insecure
  cluster:
    server: https://10.0.0.2
    insecure-skip-tls-verify: true
users:
- name: tok
  user:
    token: abc
- name: certdata
  user:
    client-certificate-data: Q0VSVA==
    client-key-data: S0VZ
- name: certfile
  user:
    client-certificate: client.crt
    client-key: client.key
    tokenFile: token
- name: impersonator
  user:
    token: t
    as: alice
    as-uid: "1234"
    as-groups: [g1, g2]
    as-user-extra:
      scopes: [view, edit]
- name: plugin
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: ./plugin.sh
      args: [--flag]
      env:
      - name: FOO
        value: bar
      provideClusterInfo: true
      interactiveMode: Never
- name: halfcert
  user:
    client-certificate-data: Q0VSVA==
contexts:
- name: tok
  context: {cluster: c1, user: tok, namespace: team}
- name: certdata
  context: {cluster: c1, user: certdata}
- name: certfile
  context: {cluster: c2, user: certfile}
- name: imp
  context: {cluster: c1, user: impersonator}
- name: exec
  context: {cluster: c1, user: plugin}
- name: insecure
  context: {cluster: insecure, user: tok}
- name: half
  context: {cluster: c1, user: halfcert}
- name: dangling
  context: {cluster: nope, user: tok}
)";

TEST(KubeconfigTest, CurrentContextWithTokenAndCaData) {
  auto c = ParseKubeconfig(kKubeconfig, "", "/x");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->host, "https://127.0.0.1:6443");
  EXPECT_EQ(c->ca_pem, "CA-PEM");
  EXPECT_EQ(c->bearer_token, "abc");
  EXPECT_EQ(c->namespace_name, "team");
  EXPECT_FALSE(c->insecure_skip_tls_verify);
}

TEST(KubeconfigTest, ClientCertificateData) {
  auto c = ParseKubeconfig(kKubeconfig, "certdata", "/x");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->client_cert_pem, "CERT");
  EXPECT_EQ(c->client_key_pem, "KEY");
  EXPECT_TRUE(c->bearer_token.empty());
}

TEST(KubeconfigTest, FilesResolveRelativeToKubeconfig) {
  TempDir dir;
  dir.Write("ca.crt", "FILE-CA");
  dir.Write("client.crt", "FILE-CERT");
  dir.Write("client.key", "FILE-KEY");
  dir.Write("token", "tok\n");
  std::string path = dir.Write("config", kKubeconfig);
  auto c = LoadKubeconfig(path, "certfile");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->ca_pem, "FILE-CA");
  EXPECT_EQ(c->client_cert_pem, "FILE-CERT");
  EXPECT_EQ(c->client_key_pem, "FILE-KEY");
  EXPECT_EQ(c->bearer_token_file, dir.path() + "/token");
}

TEST(KubeconfigTest, MissingReferencedFileIsAnError) {
  auto c = ParseKubeconfig(kKubeconfig, "certfile", "/nonexistent");
  EXPECT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("certificate-authority"), std::string::npos);
}

TEST(KubeconfigTest, Impersonation) {
  auto c = ParseKubeconfig(kKubeconfig, "imp", "/x");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->impersonate.user, "alice");
  EXPECT_EQ(c->impersonate.uid, "1234");
  EXPECT_EQ(c->impersonate.groups, (std::vector<std::string>{"g1", "g2"}));
  EXPECT_EQ(c->impersonate.extra.at("scopes"), (std::vector<std::string>{"view", "edit"}));
}

TEST(KubeconfigTest, ExecPlugin) {
  auto c = ParseKubeconfig(kKubeconfig, "exec", "/etc/kube");
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_TRUE(c->exec.has_value());
  EXPECT_EQ(c->exec->command, "/etc/kube/./plugin.sh");
  EXPECT_EQ(c->exec->args, (std::vector<std::string>{"--flag"}));
  ASSERT_EQ(c->exec->env.size(), 1u);
  EXPECT_EQ(c->exec->env[0].first, "FOO");
  EXPECT_TRUE(c->exec->provide_cluster_info);
  EXPECT_EQ(c->exec->interactive_mode, "Never");
}

TEST(KubeconfigTest, InsecureOnlyWhenSet) {
  auto c = ParseKubeconfig(kKubeconfig, "insecure", "/x");
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->insecure_skip_tls_verify);
  EXPECT_TRUE(c->ca_pem.empty());
}

TEST(KubeconfigTest, Errors) {
  EXPECT_EQ(ParseKubeconfig(kKubeconfig, "nope", "/x").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(ParseKubeconfig(kKubeconfig, "dangling", "/x").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(ParseKubeconfig(kKubeconfig, "half", "/x").status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_FALSE(ParseKubeconfig("{{{ not yaml", "", "/x").ok());
  EXPECT_FALSE(ParseKubeconfig("- a\n- b\n", "", "/x").ok());
  EXPECT_EQ(LoadKubeconfig("/nonexistent/config").status().code(), StatusCode::kNotFound);
}

TEST(InClusterConfigTest, ReadsServiceAccount) {
  TempDir dir;
  dir.Write("token", "sa-token");
  dir.Write("ca.crt", "SA-CA");
  dir.Write("namespace", "kube-system\n");
  auto c = InClusterConfig({"10.96.0.1", "443", dir.path()});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->host, "https://10.96.0.1:443");
  EXPECT_EQ(c->ca_pem, "SA-CA");
  EXPECT_EQ(c->bearer_token_file, dir.path() + "/token");
  EXPECT_EQ(c->namespace_name, "kube-system");
  auto v6 = InClusterConfig({"fd00::1", "443", dir.path()});
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->host, "https://[fd00::1]:443");
  EXPECT_EQ(InClusterConfig({"", "", dir.path()}).status().code(), StatusCode::kFailedPrecondition);
  EXPECT_FALSE(InClusterConfig({"h", "1", dir.path() + "/missing"}).ok());
}

// kDefaultConfigOrder, which `draco run --help` prints: $KUBECONFIG, then in-cluster, then
// ~/.kube/config, each tried only when the one before is absent.
TEST(DefaultConfigTest, TriesKubeconfigEnvThenInClusterThenHome) {
  TempDir dir;
  const std::string kc = dir.Write("env.yaml", R"(
apiVersion: v1
kind: Config
current-context: x
clusters: [{name: c, cluster: {server: "https://from-env:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
)");
  fs::create_directories(dir.path() + "/home/.kube");
  dir.Write("home/.kube/config", R"(
apiVersion: v1
kind: Config
current-context: x
clusters: [{name: c, cluster: {server: "https://from-home:2"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
)");
  fs::create_directories(dir.path() + "/sa");
  dir.Write("sa/token", "sa-token");
  dir.Write("sa/ca.crt", "SA-CA");
  ConfigSources all{
      kc + ":/elsewhere", {"10.96.0.1", "443", dir.path() + "/sa"}, dir.path() + "/home"};
  std::vector<std::string> order;
  auto c = DefaultConfigFrom(all);
  ASSERT_TRUE(c.ok()) << c.status();
  order.push_back(c->host);
  all.kubeconfig_env.clear();
  c = DefaultConfigFrom(all);
  ASSERT_TRUE(c.ok()) << c.status();
  order.push_back(c->host);
  all.in_cluster.service_host.clear();
  c = DefaultConfigFrom(all);
  ASSERT_TRUE(c.ok()) << c.status();
  order.push_back(c->host);
  EXPECT_EQ(order, (std::vector<std::string>{"https://from-env:1", "https://10.96.0.1:443",
                                             "https://from-home:2"}));
  EXPECT_EQ(kDefaultConfigOrder, "$KUBECONFIG, then in-cluster, then ~/.kube/config");
  all.home.clear();
  EXPECT_EQ(DefaultConfigFrom(all).status().code(), StatusCode::kNotFound);
}

TEST(FileTokenSourceTest, RereadsAfterRefreshOrInvalidate) {
  TempDir dir;
  std::string path = dir.Write("token", "one\n");
  FakeClock clock;
  FileTokenSource src(path, clock);
  EXPECT_EQ(*src.Token(), "one");
  dir.Write("token", "two");
  EXPECT_EQ(*src.Token(), "one");  // cached
  clock.Step(std::chrono::seconds(61));
  EXPECT_EQ(*src.Token(), "two");
  dir.Write("token", "three");
  src.Invalidate();
  EXPECT_EQ(*src.Token(), "three");
  fs::remove(path);
  src.Invalidate();
  EXPECT_EQ(*src.Token(), "three");  // keeps the last good token
}

TEST(ExecPluginTest, ParsesCredentialAndRfc3339) {
  auto t = ParseRfc3339("2026-01-02T03:04:05Z");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(std::chrono::system_clock::to_time_t(*t), 1767323045);
  auto t2 = ParseRfc3339("2026-01-02T05:04:05.123+02:00");
  ASSERT_TRUE(t2.ok());
  EXPECT_EQ(*t, *t2);
  EXPECT_FALSE(ParseRfc3339("2026-01-02 03:04:05").ok());
  auto c = ParseExecCredential(
      R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential",
      "status":{"token":"x","expirationTimestamp":"2026-01-02T03:04:05Z"}})",
      "client.authentication.k8s.io/v1");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->token, "x");
  EXPECT_EQ(c->expiration, *t);
  EXPECT_FALSE(ParseExecCredential(
                   R"({"apiVersion":"client.authentication.k8s.io/v1beta1",
                   "kind":"ExecCredential","status":{"token":"x"}})",
                   "client.authentication.k8s.io/v1")
                   .ok());
  EXPECT_FALSE(ParseExecCredential(R"({"apiVersion":"client.authentication.k8s.io/v1",
                   "kind":"ExecCredential","status":{}})",
                                   "client.authentication.k8s.io/v1")
                   .ok());
}

TEST(ExecPluginTest, RunsPluginWithEnvAndCachesUntilExpiry) {
  TempDir dir;
  const std::string counter = dir.path() + "/count";
  // The plugin echoes its env var and the exec info into the token and counts invocations.
  std::string script = dir.Write("plugin.sh", R"(#!/bin/sh
echo run >> )" + counter + R"(
case "$KUBERNETES_EXEC_INFO" in *'"server":"https://h"'*) info=yes;; *) info=no;; esac
printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s-%s-%s","expirationTimestamp":"2030-01-01T00:00:00Z"}}' "$FOO" "$1" "$info"
)");
  chmod(script.c_str(), 0755);
  ExecConfig e;
  e.command = script;
  e.args = {"arg"};
  e.env = {{"FOO", "bar"}};
  e.provide_cluster_info = true;
  FakeClock clock;  // WallNow() is near the epoch, before the expiry
  ExecTokenSource src(e, "https://h", "CA", clock);
  auto tok = src.Token();
  ASSERT_TRUE(tok.ok()) << tok.status();
  EXPECT_EQ(*tok, "bar-arg-yes");
  EXPECT_EQ(*src.Token(), "bar-arg-yes");
  auto runs = ReadFileToString(counter);
  EXPECT_EQ(*runs, "run\n");
  src.Invalidate();
  EXPECT_EQ(*src.Token(), "bar-arg-yes");
  EXPECT_EQ(*ReadFileToString(counter), "run\nrun\n");
}

TEST(ExecPluginTest, FailingPluginIsUnauthenticated) {
  ExecConfig e;
  e.command = "/bin/false";
  EXPECT_EQ(RunExecPlugin(e, "https://h", "").status().code(), StatusCode::kUnauthenticated);
  e.command = "/nonexistent/plugin";
  EXPECT_FALSE(RunExecPlugin(e, "https://h", "").ok());
}

}  // namespace
}  // namespace draco::k8s
