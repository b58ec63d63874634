#include "k8sclient/testing/fake_http_server.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstring>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

namespace draco::k8s::testing {
namespace {

std::string Lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string PercentDecode(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      out.push_back(static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16)));
      i += 2;
    } else if (s[i] == '+') {
      out.push_back(' ');
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

bool WriteAll(int fd, const std::string& data) {
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

const char* Reason(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 201:
      return "Created";
    case 401:
      return "Unauthorized";
    case 404:
      return "Not Found";
    case 409:
      return "Conflict";
    case 410:
      return "Gone";
    case 422:
      return "Unprocessable Entity";
    case 429:
      return "Too Many Requests";
    case 500:
      return "Internal Server Error";
    case 503:
      return "Service Unavailable";
    default:
      return "Status";
  }
}

}  // namespace

FakeHttpServer::FakeHttpServer(Handler handler) : handler_(std::move(handler)) {}

FakeHttpServer::~FakeHttpServer() { Stop(); }

bool FakeHttpServer::Start() {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  if (listen_fd_ < 0) return false;
  int one = 1;
  ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) return false;
  if (::listen(listen_fd_, 64) != 0) return false;
  socklen_t len = sizeof(addr);
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  acceptor_ = std::thread([this] { AcceptLoop(); });
  return true;
}

void FakeHttpServer::Stop() {
  if (stopping_.exchange(true)) return;
  if (listen_fd_ >= 0) {
    ::shutdown(listen_fd_, SHUT_RDWR);
    ::close(listen_fd_);
  }
  if (acceptor_.joinable()) acceptor_.join();
  std::vector<std::thread> threads;
  {
    std::lock_guard<std::mutex> l(mu_);
    for (int fd : conn_fds_) ::shutdown(fd, SHUT_RDWR);
    threads.swap(conn_threads_);
  }
  cv_.notify_all();
  for (auto& t : threads) t.join();
  std::lock_guard<std::mutex> l(mu_);
  for (int fd : conn_fds_) ::close(fd);
  conn_fds_.clear();
}

std::vector<HttpRequest> FakeHttpServer::requests() const {
  std::lock_guard<std::mutex> l(mu_);
  return requests_;
}

void FakeHttpServer::AcceptLoop() {
  while (!stopping_.load()) {
    int fd = ::accept(listen_fd_, nullptr, nullptr);
    if (fd < 0) {
      if (stopping_.load()) return;
      continue;
    }
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    ++connections_;
    std::lock_guard<std::mutex> l(mu_);
    if (stopping_.load()) {
      ::close(fd);
      return;
    }
    conn_fds_.push_back(fd);
    conn_threads_.emplace_back([this, fd] { Serve(fd); });
  }
}

void FakeHttpServer::Serve(int fd) {
  std::string buf;
  char tmp[8192];
  while (!stopping_.load()) {
    size_t hdr_end;
    while ((hdr_end = buf.find("\r\n\r\n")) == std::string::npos) {
      ssize_t n = ::recv(fd, tmp, sizeof(tmp), 0);
      if (n <= 0) return;
      buf.append(tmp, static_cast<size_t>(n));
    }
    HttpRequest req;
    std::string head = buf.substr(0, hdr_end);
    buf.erase(0, hdr_end + 4);
    size_t line_end = head.find("\r\n");
    std::string request_line = head.substr(0, line_end);
    size_t sp1 = request_line.find(' ');
    size_t sp2 = request_line.rfind(' ');
    req.method = request_line.substr(0, sp1);
    req.target = request_line.substr(sp1 + 1, sp2 - sp1 - 1);
    size_t qpos = req.target.find('?');
    req.path = req.target.substr(0, qpos);
    if (qpos != std::string::npos) {
      std::string q = req.target.substr(qpos + 1);
      size_t start = 0;
      while (start <= q.size()) {
        size_t amp = q.find('&', start);
        std::string kv =
            q.substr(start, amp == std::string::npos ? std::string::npos : amp - start);
        size_t eq = kv.find('=');
        if (!kv.empty()) {
          req.query[PercentDecode(kv.substr(0, eq))] =
              eq == std::string::npos ? "" : PercentDecode(kv.substr(eq + 1));
        }
        if (amp == std::string::npos) break;
        start = amp + 1;
      }
    }
    size_t pos = line_end == std::string::npos ? head.size() : line_end + 2;
    while (pos < head.size()) {
      size_t e = head.find("\r\n", pos);
      if (e == std::string::npos) e = head.size();
      std::string h = head.substr(pos, e - pos);
      size_t colon = h.find(':');
      if (colon != std::string::npos) {
        std::string name = Lower(h.substr(0, colon));
        std::string value = h.substr(colon + 1);
        while (!value.empty() && value.front() == ' ') value.erase(0, 1);
        auto [it, inserted] = req.headers.emplace(name, value);
        if (!inserted) it->second += "," + value;
      }
      pos = e + 2;
    }
    size_t content_length = 0;
    if (auto it = req.headers.find("content-length"); it != req.headers.end()) {
      content_length = std::stoul(it->second);
    }
    while (buf.size() < content_length) {
      ssize_t n = ::recv(fd, tmp, sizeof(tmp), 0);
      if (n <= 0) return;
      buf.append(tmp, static_cast<size_t>(n));
    }
    req.body = buf.substr(0, content_length);
    buf.erase(0, content_length);
    {
      std::lock_guard<std::mutex> l(mu_);
      requests_.push_back(req);
    }
    HttpResponse resp = handler_(req);
    std::string out =
        "HTTP/1.1 " + std::to_string(resp.status) + " " + Reason(resp.status) + "\r\n";
    bool has_ct = false;
    for (const auto& [k, v] : resp.headers) {
      out += k + ": " + v + "\r\n";
      if (Lower(k) == "content-type") has_ct = true;
    }
    if (!has_ct) out += "Content-Type: application/json\r\n";
    if (resp.chunks.empty()) {
      out += "Content-Length: " + std::to_string(resp.body.size()) + "\r\n\r\n" + resp.body;
      if (!WriteAll(fd, out)) break;
      continue;
    }
    out += "Transfer-Encoding: chunked\r\n\r\n";
    if (!WriteAll(fd, out)) break;
    bool ok = true;
    for (const auto& chunk : resp.chunks) {
      char size_line[32];
      std::snprintf(size_line, sizeof(size_line), "%zx\r\n", chunk.size());
      if (!WriteAll(fd, std::string(size_line) + chunk + "\r\n")) {
        ok = false;
        break;
      }
      if (resp.chunk_delay.count() > 0) std::this_thread::sleep_for(resp.chunk_delay);
    }
    if (!ok) break;
    if (resp.hang) {
      std::unique_lock<std::mutex> l(mu_);
      cv_.wait(l, [this] { return stopping_.load(); });
      break;
    }
    if (!WriteAll(fd, "0\r\n\r\n")) break;
  }
  // Stop() closes the descriptor after joining, so it is never reused while still listed.
  ::shutdown(fd, SHUT_RDWR);
}

}  // namespace draco::k8s::testing
