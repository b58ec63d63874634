#include "controller/admission/tls_server.h"

#include <atomic>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace draco::admission {
namespace {

using std::chrono::hours;

const std::vector<std::string> kHosts = {"draco-webhook.draco.svc", "127.0.0.1"};

struct Pki {
  CertKey ca;
  CertKey serving;
};

Pki NewPki(const std::string& name) {
  auto now = std::chrono::system_clock::now();
  auto ca = GenerateCa(name, hours(24), now);
  EXPECT_TRUE(ca.ok());
  auto serving = IssueServingCert(*ca, kHosts, hours(24), now);
  EXPECT_TRUE(serving.ok());
  return {*ca, *serving};
}

std::unique_ptr<TlsServer> StartEcho() {
  auto s = TlsServer::Start(
      "127.0.0.1:0",
      [](std::string_view method, std::string_view path, std::string_view body) {
        return HttpReply{200, "text/plain",
                         std::string(method) + " " + std::string(path) + " " + std::string(body)};
      },
      4);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? std::move(*s) : nullptr;
}

TEST(TlsServerTest, ServesOverVerifiedTls) {
  auto server = StartEcho();
  ASSERT_NE(server, nullptr);
  ASSERT_GT(server->port(), 0);
  Pki pki = NewPki("ca-1");
  EXPECT_FALSE(server->HasCertificate());
  EXPECT_FALSE(
      TlsRequest("127.0.0.1", server->port(), pki.ca.cert_pem, kHosts[0], "GET", "/x").ok())
      << "no certificate yet: the handshake is refused";
  ASSERT_TRUE(server->SetCertificate(pki.serving).ok());
  EXPECT_TRUE(server->HasCertificate());
  EXPECT_EQ(server->CertificatePem(), pki.serving.cert_pem);
  for (const auto& name : kHosts) {
    auto r = TlsRequest("127.0.0.1", server->port(), pki.ca.cert_pem, name, "POST", "/mutate?t=1",
                        "{\"a\":1}");
    ASSERT_TRUE(r.ok()) << name << ": " << r.status().ToString();
    EXPECT_EQ(r->code, 200);
    EXPECT_EQ(r->content_type, "text/plain");
    EXPECT_EQ(r->body, "POST /mutate {\"a\":1}");
  }
  auto wrong_name =
      TlsRequest("127.0.0.1", server->port(), pki.ca.cert_pem, "evil.example.com", "GET", "/");
  EXPECT_FALSE(wrong_name.ok()) << "the certificate does not cover evil.example.com";
  Pki other = NewPki("ca-other");
  EXPECT_FALSE(
      TlsRequest("127.0.0.1", server->port(), other.ca.cert_pem, kHosts[0], "GET", "/").ok())
      << "a client trusting another CA must refuse the server";
}

TEST(TlsServerTest, RotationSwitchesNewConnectionsToTheNewCertificate) {
  auto server = StartEcho();
  ASSERT_NE(server, nullptr);
  Pki first = NewPki("ca-1"), second = NewPki("ca-2");
  ASSERT_TRUE(server->SetCertificate(first.serving).ok());
  ASSERT_TRUE(
      TlsRequest("127.0.0.1", server->port(), first.ca.cert_pem, kHosts[0], "GET", "/").ok());
  ASSERT_TRUE(server->SetCertificate(second.serving).ok());
  EXPECT_FALSE(
      TlsRequest("127.0.0.1", server->port(), first.ca.cert_pem, kHosts[0], "GET", "/").ok());
  std::string bundle = second.ca.cert_pem + first.ca.cert_pem;
  EXPECT_TRUE(TlsRequest("127.0.0.1", server->port(), bundle, kHosts[0], "GET", "/").ok())
      << "a bundle with both CAs trusts either certificate";
  EXPECT_FALSE(server->SetCertificate({second.serving.cert_pem, first.serving.key_pem}).ok())
      << "a key that does not match the certificate is refused";
  EXPECT_EQ(server->CertificatePem(), second.serving.cert_pem);
}

TEST(TlsServerTest, ConcurrentRequestsWhileRotating) {
  auto server = StartEcho();
  ASSERT_NE(server, nullptr);
  Pki a = NewPki("ca-a"), b = NewPki("ca-b");
  std::string bundle = a.ca.cert_pem + b.ca.cert_pem;
  ASSERT_TRUE(server->SetCertificate(a.serving).ok());
  std::atomic<int> ok{0};
  std::vector<std::thread> clients;
  for (int t = 0; t < 6; ++t) {
    clients.emplace_back([&, t] {
      for (int i = 0; i < 10; ++i) {
        std::string body = std::to_string(t) + "-" + std::to_string(i);
        auto r = TlsRequest("127.0.0.1", server->port(), bundle, kHosts[1], "POST", "/p", body);
        if (r.ok() && r->body == "POST /p " + body) ++ok;
      }
    });
  }
  for (int i = 0; i < 10; ++i)
    ASSERT_TRUE(server->SetCertificate(i % 2 ? a.serving : b.serving).ok());
  for (auto& c : clients) c.join();
  EXPECT_EQ(ok.load(), 60);
}

TEST(TlsServerTest, BadBindAddressesAreErrors) {
  auto h = [](std::string_view, std::string_view, std::string_view) { return HttpReply{}; };
  EXPECT_FALSE(TlsServer::Start("nonsense", h).ok());
  EXPECT_FALSE(TlsServer::Start("localhost:0", h).ok()) << "numeric IPs only";
  auto first = TlsServer::Start("127.0.0.1:0", h);
  ASSERT_TRUE(first.ok());
  EXPECT_FALSE(TlsServer::Start("127.0.0.1:" + std::to_string((*first)->port()), h).ok())
      << "a busy port is an error";
}

}  // namespace
}  // namespace draco::admission
