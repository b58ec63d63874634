// DirectTransport (http_transport.h) against scripted loopback servers: connection reuse, idle
// connections the server closed, a request lost on a reused connection, timeouts, Cancel and
// refused connections. (TLS, tokens and client certificates: rest_client_integration_test.)
#include "k8sclient/http_transport.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include <netinet/in.h>
#include <sys/socket.h>

namespace draco::k8s {
namespace {

using std::chrono::milliseconds;

// Accepts connections on 127.0.0.1 and runs `script(fd, connection index)` for each on its own
// thread; the script reads and writes the raw bytes and closes the socket when it returns.
class ScriptedServer {
 public:
  using Script = std::function<void(int fd, int index)>;
  explicit ScriptedServer(Script script) : script_(std::move(script)) {
    listen_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(listen_, reinterpret_cast<sockaddr*>(&a), sizeof(a));
    socklen_t len = sizeof(a);
    getsockname(listen_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    listen(listen_, 16);
    acceptor_ = std::thread([this] {
      for (int i = 0;; ++i) {
        int fd = accept(listen_, nullptr, nullptr);
        if (fd < 0) return;
        threads_.emplace_back([this, fd, i] {
          script_(fd, i);
          close(fd);
        });
      }
    });
  }
  ~ScriptedServer() {
    shutdown(listen_, SHUT_RDWR);
    close(listen_);
    acceptor_.join();
    for (auto& t : threads_) t.join();
  }
  BaseUrl Url() const { return *ParseBaseUrl("http://127.0.0.1:" + std::to_string(port_)); }

 private:
  Script script_;
  int listen_ = -1;
  int port_ = 0;
  std::thread acceptor_;
  std::vector<std::thread> threads_;
};

// Reads one request head (and no body: the tests send none); false at EOF.
bool ReadRequest(int fd, std::string* head = nullptr) {
  std::string buf;
  char c;
  while (buf.find("\r\n\r\n") == std::string::npos) {
    if (recv(fd, &c, 1, 0) != 1) return false;
    buf.push_back(c);
  }
  if (head) *head = buf;
  return true;
}

void Reply(int fd, const std::string& body) {
  std::string r =
      "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  send(fd, r.data(), r.size(), MSG_NOSIGNAL);
}

std::unique_ptr<DirectTransport> Transport(const BaseUrl& url,
                                           milliseconds timeout = milliseconds(2000)) {
  DirectTransport::Options o;
  o.url = url;
  o.timeout = timeout;
  auto t = DirectTransport::New(o);
  EXPECT_TRUE(t.ok()) << t.status();
  return std::move(*t);
}

TEST(DirectTransportTest, KeepsOneConnectionForSequentialRequests) {
  std::atomic<int> served{0};
  ScriptedServer server([&](int fd, int) {
    std::string head;
    while (ReadRequest(fd, &head)) Reply(fd, std::to_string(++served));
  });
  BaseUrl url = server.Url();
  url.path_prefix = "/prefix";
  auto t = Transport(url);
  for (int i = 1; i <= 3; ++i) {
    auto r = t->RoundTrip("GET", "/api?x=1", {{"Accept", "application/json"}}, "");
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->code, 200);
    EXPECT_EQ(r->body, std::to_string(i));
  }
  EXPECT_EQ(t->connections_opened(), 1u);
  EXPECT_EQ(t->idle_connections(), 1u);
}

TEST(DirectTransportTest, ConcurrentCallersShareThePool) {
  ScriptedServer server([&](int fd, int) {
    std::string head;
    while (ReadRequest(fd, &head)) Reply(fd, head.substr(4, head.find(' ', 4) - 4));
  });
  auto t = Transport(server.Url());
  std::atomic<int> ok{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < 6; ++c) {
    callers.emplace_back([&, c] {
      for (int i = 0; i < 20; ++i) {
        const std::string target = "/c" + std::to_string(c) + "/" + std::to_string(i);
        auto r = t->RoundTrip("GET", target, {}, "");
        if (r.ok() && r->body == target) ++ok;
      }
    });
  }
  for (auto& th : callers) th.join();
  EXPECT_EQ(ok.load(), 120);  // every caller got its own answer
  EXPECT_LE(t->connections_opened(), 6u);
  EXPECT_LE(t->idle_connections(), 6u);
}

TEST(DirectTransportTest, SendsThePrefixedTargetAndHeaders) {
  std::string seen;
  ScriptedServer server([&](int fd, int) {
    if (ReadRequest(fd, &seen)) Reply(fd, "");
  });
  BaseUrl url = server.Url();
  url.path_prefix = "/prefix";
  auto r = Transport(url)->RoundTrip("GET", "/api?x=1", {{"Accept", "application/json"}}, "");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(seen, "GET /prefix/api?x=1 HTTP/1.1\r\nHost: " + url.HostHeader() +
                      "\r\nAccept: application/json\r\n\r\n");
}

TEST(DirectTransportTest, AnIdleConnectionTheServerClosedIsReplaced) {
  ScriptedServer server([&](int fd, int) {
    if (ReadRequest(fd)) Reply(fd, "ok");  // then closes, without saying so
  });
  auto t = Transport(server.Url());
  ASSERT_TRUE(t->RoundTrip("GET", "/", {}, "").ok());
  std::this_thread::sleep_for(milliseconds(50));  // the close reaches the client
  auto r = t->RoundTrip("GET", "/", {}, "");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->body, "ok");
  EXPECT_EQ(t->connections_opened(), 2u);
}

TEST(DirectTransportTest, ARequestLostOnAReusedConnectionIsSentOnceMore) {
  std::atomic<int> requests{0};
  ScriptedServer server([&](int fd, int index) {
    if (!ReadRequest(fd)) return;
    ++requests;
    Reply(fd, "first");
    // The first connection swallows its second request and closes.
    if (ReadRequest(fd)) {
      ++requests;
      if (index != 0) Reply(fd, "again");
    }
  });
  auto t = Transport(server.Url());
  ASSERT_TRUE(t->RoundTrip("POST", "/", {}, "").ok());
  auto r = t->RoundTrip("POST", "/", {}, "");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->body, "first");  // the new connection's first answer
  EXPECT_EQ(t->connections_opened(), 2u);
  EXPECT_EQ(requests.load(), 3);
}

TEST(DirectTransportTest, AServerThatNeverAnswersTimesOut) {
  std::atomic<bool> done{false};
  ScriptedServer server([&](int fd, int) {
    ReadRequest(fd);
    while (!done) std::this_thread::sleep_for(milliseconds(10));
  });
  auto t = Transport(server.Url(), milliseconds(200));
  auto start = std::chrono::steady_clock::now();
  auto r = t->RoundTrip("GET", "/", {}, "");
  done = true;
  EXPECT_EQ(r.status().code(), StatusCode::kDeadlineExceeded) << r.status();
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(2000));
}

TEST(DirectTransportTest, CancelEndsARequestInFlightAndEveryLaterOne) {
  std::atomic<bool> done{false};
  ScriptedServer server([&](int fd, int) {
    ReadRequest(fd);
    while (!done) std::this_thread::sleep_for(milliseconds(10));
  });
  auto t = Transport(server.Url(), milliseconds(0));  // no timeout: only Cancel ends it
  std::thread canceller([&] {
    std::this_thread::sleep_for(milliseconds(100));
    t->Cancel();
  });
  auto r = t->RoundTrip("GET", "/", {}, "");
  canceller.join();
  done = true;
  EXPECT_EQ(r.status().code(), StatusCode::kCancelled) << r.status();
  EXPECT_EQ(t->RoundTrip("GET", "/", {}, "").status().code(), StatusCode::kCancelled);
}

TEST(DirectTransportTest, RefusedConnectionsAreUnavailable) {
  BaseUrl url;
  {
    ScriptedServer server([](int, int) {});
    url = server.Url();
  }  // closed: nothing listens on the port any more
  auto r = Transport(url)->RoundTrip("GET", "/", {}, "");
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable) << r.status();
}

TEST(DirectTransportTest, AResponseCutShortIsUnavailable) {
  ScriptedServer server([](int fd, int) {
    if (!ReadRequest(fd)) return;
    std::string r = "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nabc";
    send(fd, r.data(), r.size(), MSG_NOSIGNAL);
  });
  auto r = Transport(server.Url())->RoundTrip("GET", "/", {}, "");
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable) << r.status();
}

}  // namespace
}  // namespace draco::k8s
