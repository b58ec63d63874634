// HttpServer: draco's operational endpoints (/healthz, /readyz, /metrics) on civetweb.
//
// Overview. One HttpServer listens on one bind address ("127.0.0.1:8080", "[::1]:8080" or
// "127.0.0.1:0" for an ephemeral port) and serves the routes it is given. draco runs the metrics
// route and the probe routes on two servers when --metrics-bind-address and
// --health-probe-bind-address differ, and on one when they are equal. The default bind host is
// 127.0.0.1; a bare ":port" is rewritten to 127.0.0.1:port (never all interfaces implicitly).
//
// Routes. A Route maps an exact path to a function returning (HTTP code, content type, body).
// Handlers run on civetweb's worker threads (2 threads), concurrently with each other and with
// the rest of the program; they must be thread-safe and should not block for long.
//
// Lifetime. Start() binds synchronously (a busy port is an error, not an exception) and the server
// serves until the HttpServer is destroyed; the destructor stops it and joins civetweb's threads.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <prometheus/collectable.h>

#include "base/status.h"

class CivetServer;

namespace draco::server {

struct Response {
  int code = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

struct Route {
  std::string path;  // exact, e.g. "/healthz"
  std::function<Response()> handler;
};

class HttpServer {
 public:
  static StatusOr<std::unique_ptr<HttpServer>> Start(const std::string& bind_address,
                                                     std::vector<Route> routes);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // The bound TCP port (useful with port 0).
  int port() const { return port_; }

 private:
  class Adapter;
  HttpServer() = default;
  std::vector<std::unique_ptr<Adapter>> adapters_;
  std::unique_ptr<CivetServer> server_;
  int port_ = 0;
};

// Normalises a bind address: ":8080" -> "127.0.0.1:8080", "8080" -> "127.0.0.1:8080". Returns
// InvalidArgument for empty or malformed input. "0" means disabled and is handled by callers.
StatusOr<std::string> NormalizeBindAddress(const std::string& addr);

// A named health check; returns OK when healthy.
struct Check {
  std::string name;
  std::function<Status()> check;
};

// A /healthz or /readyz route in the Kubernetes style: 200 "ok" when every check passes, else 500
// with one "[+]name ok" / "[-]name failed: reason" line per check.
Route ProbeRoute(std::string path, std::vector<Check> checks);

// A /metrics route serialising every collectable in the Prometheus text format (0.0.4). The
// collectables must outlive the server.
Route MetricsRoute(std::vector<std::shared_ptr<prometheus::Collectable>> collectables);

}  // namespace draco::server
