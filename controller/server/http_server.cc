#include "controller/server/http_server.h"

#include <CivetServer.h>

#include <exception>
#include <sstream>

#include <prometheus/text_serializer.h>

namespace draco::server {

class HttpServer::Adapter : public CivetHandler {
 public:
  explicit Adapter(Route r) : route_(std::move(r)) {}
  bool handleGet(CivetServer* /*server*/, mg_connection* conn) override {
    Response resp;
    try {
      resp = route_.handler();
    } catch (const std::exception& e) {
      resp = {500, "text/plain; charset=utf-8", std::string("internal error: ") + e.what()};
    }
    mg_printf(conn,
              "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
              "Cache-Control: no-store\r\nConnection: close\r\n\r\n",
              resp.code, resp.code == 200 ? "OK" : "Error", resp.content_type.c_str(),
              resp.body.size());
    mg_write(conn, resp.body.data(), resp.body.size());
    return true;
  }
  const std::string& path() const { return route_.path; }

 private:
  Route route_;
};

StatusOr<std::string> NormalizeBindAddress(const std::string& addr) {
  if (addr.empty()) return InvalidArgumentError("empty bind address");
  std::string a = addr;
  if (a.find(':') == std::string::npos) a = ":" + a;
  if (a[0] == ':') a = "127.0.0.1" + a;
  size_t colon = a.rfind(':');
  std::string port = a.substr(colon + 1);
  if (port.empty() || port.find_first_not_of("0123456789") != std::string::npos) {
    return InvalidArgumentError("bad bind address '" + addr + "': want host:port");
  }
  return a;
}

StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(const std::string& bind_address,
                                                        std::vector<Route> routes) {
  auto addr = NormalizeBindAddress(bind_address);
  if (!addr.ok()) return addr.status();
  std::unique_ptr<HttpServer> s(new HttpServer());
  std::vector<std::string> options = {"listening_ports", *addr, "num_threads", "2"};
  try {
    s->server_ = std::make_unique<CivetServer>(options);
  } catch (const std::exception& e) {
    return UnavailableError("cannot listen on " + *addr + ": " + e.what());
  }
  for (auto& r : routes) {
    s->adapters_.push_back(std::make_unique<Adapter>(std::move(r)));
    s->server_->addHandler(s->adapters_.back()->path(), s->adapters_.back().get());
  }
  std::vector<int> ports = s->server_->getListeningPorts();
  s->port_ = ports.empty() ? 0 : ports.front();
  return s;
}

HttpServer::~HttpServer() {
  if (server_) server_->close();
}

Route ProbeRoute(std::string path, std::vector<Check> checks) {
  return Route{std::move(path), [checks = std::move(checks)] {
                 Response r;
                 std::string detail;
                 bool ok = true;
                 for (const auto& c : checks) {
                   Status st = c.check();
                   if (st.ok()) {
                     detail += "[+]" + c.name + " ok\n";
                   } else {
                     ok = false;
                     detail += "[-]" + c.name + " failed: " + st.message() + "\n";
                   }
                 }
                 r.code = ok ? 200 : 500;
                 r.body = ok ? "ok" : detail + "check failed\n";
                 return r;
               }};
}

Route MetricsRoute(std::vector<std::shared_ptr<prometheus::Collectable>> collectables) {
  return Route{"/metrics", [collectables = std::move(collectables)] {
                 std::vector<prometheus::MetricFamily> families;
                 for (const auto& c : collectables) {
                   auto f = c->Collect();
                   families.insert(families.end(), std::make_move_iterator(f.begin()),
                                   std::make_move_iterator(f.end()));
                 }
                 std::ostringstream out;
                 prometheus::TextSerializer().Serialize(out, families);
                 return Response{200, "text/plain; version=0.0.4; charset=utf-8", out.str()};
               }};
}

}  // namespace draco::server
