// FakeHttpServer: a tiny scripted HTTP/1.1 server on 127.0.0.1 for framing tests.
//
// Each accepted connection gets a thread that reads requests (keep-alive) and answers with the
// handler's HttpResponse. A response with `chunks` is sent with chunked transfer encoding, one
// write per chunk, so a test controls exactly where chunk boundaries fall; `hang` keeps the
// connection open after the last chunk until Stop() (a watch that never ends).
//
// Thread-safe. Tests only: no TLS, minimal parsing, never exposed beyond loopback.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace draco::k8s::testing {

struct HttpRequest {
  std::string method;
  std::string target;  // path?query as sent
  std::string path;
  std::map<std::string, std::string> query;    // decoded
  std::map<std::string, std::string> headers;  // lower-cased names; repeated headers joined ","
  std::string body;
};

struct HttpResponse {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;                 // used when chunks is empty
  std::vector<std::string> chunks;  // chunked encoding, one write each
  std::chrono::milliseconds chunk_delay{0};
  bool hang = false;  // keep the connection open after the chunks until Stop()
};

class FakeHttpServer {
 public:
  using Handler = std::function<HttpResponse(const HttpRequest&)>;

  explicit FakeHttpServer(Handler handler);
  ~FakeHttpServer();

  // Binds 127.0.0.1 on an ephemeral port and starts accepting. Returns false on failure.
  bool Start();
  // Closes the listener and every connection; joins all threads.
  void Stop();

  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::vector<HttpRequest> requests() const;
  int connections() const { return connections_.load(); }

 private:
  void AcceptLoop();
  void Serve(int fd);

  Handler handler_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int> connections_{0};
  std::thread acceptor_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::thread> conn_threads_;
  std::vector<int> conn_fds_;
  std::vector<HttpRequest> requests_;
};

}  // namespace draco::k8s::testing
