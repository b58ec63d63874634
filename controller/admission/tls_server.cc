#include "controller/admission/tls_server.h"

#include <netdb.h>
#include <poll.h>
#include <unistd.h>

#include <array>
#include <cctype>
#include <charconv>
#include <csignal>
#include <cstring>
#include <exception>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "controller/admission/review.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

namespace draco::admission {
namespace {

constexpr size_t kMaxHeaderBytes = 16 << 10;
constexpr int kIoTimeoutSeconds = 10;
constexpr size_t kMaxPending = 256;

std::string SslError(std::string_view what) {
  std::string msg(what);
  if (unsigned long e = ERR_get_error(); e != 0) {  // NOLINT(google-runtime-int): OpenSSL's type
    std::array<char, 256> buf{};
    ERR_error_string_n(e, buf.data(), buf.size());
    msg += ": ";
    msg += buf.data();
  }
  ERR_clear_error();
  return msg;
}

// "host:port", "[v6]:port" or ":port" (127.0.0.1) into numeric host and port.
Status SplitHostPort(const std::string& addr, std::string& host, std::string& port) {
  size_t colon = addr.rfind(':');
  if (colon == std::string::npos) {
    return InvalidArgumentError("bad address '" + addr + "': want host:port");
  }
  host = addr.substr(0, colon);
  port = addr.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host.empty()) host = "127.0.0.1";
  if (port.empty() || port.find_first_not_of("0123456789") != std::string::npos) {
    return InvalidArgumentError("bad address '" + addr + "': want host:port");
  }
  return OkStatus();
}

void SetTimeouts(int fd, int seconds) {
  timeval tv{seconds, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

std::string_view Reason(int code) {
  switch (code) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 411:
      return "Length Required";
    case 413:
      return "Payload Too Large";
    default:
      return code < 500 ? "Client Error" : "Internal Server Error";
  }
}

bool WriteAll(SSL* ssl, std::string_view data) {
  while (!data.empty()) {
    int n = SSL_write(ssl, data.data(), static_cast<int>(data.size()));
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// Reads until `buf` holds the end of the headers; false on EOF, timeout or oversize.
bool ReadHeaders(SSL* ssl, std::string& buf, size_t& header_end) {
  std::array<char, 4096> chunk{};
  while ((header_end = buf.find("\r\n\r\n")) == std::string::npos) {
    if (buf.size() > kMaxHeaderBytes) return false;
    int n = SSL_read(ssl, chunk.data(), static_cast<int>(chunk.size()));
    if (n <= 0) return false;
    buf.append(chunk.data(), static_cast<size_t>(n));
  }
  header_end += 4;
  return true;
}

// Case-insensitive header lookup in the raw header block.
std::string Header(std::string_view headers, std::string_view name) {
  size_t pos = 0;
  while ((pos = headers.find("\r\n", pos)) != std::string_view::npos) {
    pos += 2;
    size_t colon = headers.find(':', pos);
    size_t eol = headers.find("\r\n", pos);
    if (colon == std::string_view::npos || eol == std::string_view::npos || colon > eol) continue;
    std::string_view key = headers.substr(pos, colon - pos);
    if (key.size() != name.size()) continue;
    bool eq = true;
    for (size_t i = 0; i < key.size(); ++i) {
      eq = eq && std::tolower(key[i]) == std::tolower(name[i]);
    }
    if (!eq) continue;
    std::string_view v = headers.substr(colon + 1, eol - colon - 1);
    while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
    while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
    return std::string(v);
  }
  return "";
}

}  // namespace

std::string HttpRequest::Header(std::string_view name) const {
  return admission::Header(headers, name);
}

StatusOr<std::unique_ptr<TlsServer>> TlsServer::Start(const std::string& bind_address,
                                                      HttpHandler handler, int threads) {
  return StartWithHeaders(
      bind_address,
      [handler = std::move(handler)](const HttpRequest& r) {
        return handler(r.method, r.path, r.body);
      },
      threads);
}

StatusOr<std::unique_ptr<TlsServer>> TlsServer::StartWithHeaders(const std::string& bind_address,
                                                                 RequestHandler handler,
                                                                 int threads) {
  if (threads < 1) return InvalidArgumentError("TlsServer: threads must be >= 1");
  std::string host, port;
  if (Status st = SplitHostPort(bind_address, host, port); !st.ok()) return st;
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICHOST | AI_NUMERICSERV;
  addrinfo* res = nullptr;
  if (int rc = getaddrinfo(host.c_str(), port.c_str(), &hints, &res); rc != 0) {
    return InvalidArgumentError("bad address '" + bind_address + "': " + gai_strerror(rc) +
                                " (want a numeric IP)");
  }
  std::unique_ptr<addrinfo, void (*)(addrinfo*)> guard(res, freeaddrinfo);
  // A peer closing early must not kill the process with SIGPIPE on the next SSL_write.
  signal(SIGPIPE, SIG_IGN);
  std::unique_ptr<TlsServer> s(new TlsServer());
  s->listen_fd_ = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s->listen_fd_ < 0) return UnavailableError("socket: " + ErrnoMessage(errno));
  int one = 1;
  setsockopt(s->listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (bind(s->listen_fd_, res->ai_addr, res->ai_addrlen) != 0 || listen(s->listen_fd_, 128) != 0) {
    std::string err = ErrnoMessage(errno);
    return UnavailableError("cannot listen on " + bind_address + ": " + err);
  }
  sockaddr_storage bound{};
  socklen_t len = sizeof(bound);
  getsockname(s->listen_fd_, reinterpret_cast<sockaddr*>(&bound), &len);
  s->port_ = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                               : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  s->host_ = host;
  s->handler_ = std::move(handler);
  s->acceptor_ = std::thread([p = s.get()] { p->AcceptLoop(); });
  for (int i = 0; i < threads; ++i) {
    s->workers_.emplace_back([p = s.get()] { p->ConnectionLoop(); });
  }
  return s;
}

TlsServer::~TlsServer() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (acceptor_.joinable()) acceptor_.join();
  for (auto& w : workers_) w.join();
  for (int fd : pending_) close(fd);
  if (listen_fd_ >= 0) close(listen_fd_);
}

Status TlsServer::SetCertificate(const CertKey& serving) {
  std::shared_ptr<SSL_CTX> ctx(SSL_CTX_new(TLS_server_method()), SSL_CTX_free);
  if (!ctx) return InternalError(SslError("SSL_CTX_new"));
  SSL_CTX_set_min_proto_version(ctx.get(), TLS1_2_VERSION);
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(
      BIO_new_mem_buf(serving.cert_pem.data(), static_cast<int>(serving.cert_pem.size())),
      BIO_free);
  X509* leaf = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr);
  if (leaf == nullptr) return InvalidArgumentError(SslError("serving certificate"));
  int ok = SSL_CTX_use_certificate(ctx.get(), leaf);
  X509_free(leaf);
  if (ok != 1) return InvalidArgumentError(SslError("serving certificate"));
  while (X509* extra = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
    SSL_CTX_add_extra_chain_cert(ctx.get(), extra);  // takes ownership
  }
  ERR_clear_error();
  std::unique_ptr<BIO, decltype(&BIO_free)> kbio(
      BIO_new_mem_buf(serving.key_pem.data(), static_cast<int>(serving.key_pem.size())), BIO_free);
  EVP_PKEY* key = PEM_read_bio_PrivateKey(kbio.get(), nullptr, nullptr, nullptr);
  if (key == nullptr) return InvalidArgumentError(SslError("serving key"));
  ok = SSL_CTX_use_PrivateKey(ctx.get(), key);
  EVP_PKEY_free(key);
  if (ok != 1 || SSL_CTX_check_private_key(ctx.get()) != 1) {
    return InvalidArgumentError(SslError("serving key does not match the certificate"));
  }
  std::lock_guard<std::mutex> l(mu_);
  ctx_ = std::move(ctx);
  cert_pem_ = serving.cert_pem;
  return OkStatus();
}

bool TlsServer::HasCertificate() const {
  std::lock_guard<std::mutex> l(mu_);
  return ctx_ != nullptr;
}

std::string TlsServer::CertificatePem() const {
  std::lock_guard<std::mutex> l(mu_);
  return cert_pem_;
}

void TlsServer::AcceptLoop() {
  while (!stop_) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (poll(&p, 1, 200) <= 0) continue;
    int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    SetTimeouts(fd, kIoTimeoutSeconds);
    std::lock_guard<std::mutex> l(mu_);
    if (pending_.size() >= kMaxPending) {
      close(fd);
      continue;
    }
    pending_.push_back(fd);
    cv_.notify_one();
  }
}

void TlsServer::ConnectionLoop() {
  while (true) {
    int fd;
    {
      std::unique_lock<std::mutex> l(mu_);
      cv_.wait(l, [&] { return stop_ || !pending_.empty(); });
      if (stop_) return;
      fd = pending_.front();
      pending_.pop_front();
    }
    Serve(fd);
    close(fd);
  }
}

void TlsServer::Serve(int fd) {
  std::shared_ptr<SSL_CTX> ctx;
  {
    std::lock_guard<std::mutex> l(mu_);
    ctx = ctx_;
  }
  if (!ctx) return;  // no certificate yet: refuse the handshake
  std::unique_ptr<SSL, decltype(&SSL_free)> ssl(SSL_new(ctx.get()), SSL_free);
  if (!ssl || SSL_set_fd(ssl.get(), fd) != 1 || SSL_accept(ssl.get()) != 1) {
    ERR_clear_error();
    return;
  }
  std::string buf;
  size_t header_end = 0;
  HttpReply reply;
  std::string method, path;
  if (!ReadHeaders(ssl.get(), buf, header_end)) {
    ERR_clear_error();
    return;
  }
  std::string_view head(buf.data(), header_end);
  size_t sp1 = head.find(' '), sp2 = head.find(' ', sp1 + 1);
  if (sp1 == std::string_view::npos || sp2 == std::string_view::npos) {
    reply = {400, "text/plain", "malformed request line\n"};
  } else {
    method = std::string(head.substr(0, sp1));
    path = std::string(head.substr(sp1 + 1, sp2 - sp1 - 1));
    if (size_t q = path.find('?'); q != std::string::npos) path.resize(q);
    std::string te = Header(head, "Transfer-Encoding");
    std::string cl = Header(head, "Content-Length");
    size_t length = 0;
    auto [ptr, ec] = std::from_chars(cl.data(), cl.data() + cl.size(), length);
    if (!te.empty() ||
        (method == "POST" && (cl.empty() || ec != std::errc() || ptr != cl.data() + cl.size()))) {
      reply = {411, "text/plain", "a Content-Length body is required\n"};
    } else if (length > kMaxReviewBytes) {
      reply = {413, "text/plain", "body too large\n"};
    } else {
      std::array<char, 16384> chunk{};
      while (buf.size() - header_end < length) {
        int n = SSL_read(ssl.get(), chunk.data(), static_cast<int>(chunk.size()));
        if (n <= 0) {
          ERR_clear_error();
          return;
        }
        buf.append(chunk.data(), static_cast<size_t>(n));
      }
      std::string_view body(buf.data() + header_end, length);
      try {
        reply = handler_(HttpRequest{method, path, body, head});
      } catch (const std::exception& e) {
        reply = {500, "text/plain", std::string("internal error: ") + e.what() + "\n"};
      }
    }
  }
  std::string out = "HTTP/1.1 " + std::to_string(reply.code) + " " +
                    std::string(Reason(reply.code)) + "\r\nContent-Type: " + reply.content_type +
                    "\r\nContent-Length: " + std::to_string(reply.body.size()) +
                    "\r\nConnection: close\r\n\r\n";
  if (WriteAll(ssl.get(), out) && WriteAll(ssl.get(), reply.body)) SSL_shutdown(ssl.get());
  ERR_clear_error();
}

StatusOr<HttpReply> TlsRequest(const std::string& host, int port, const std::string& ca_bundle_pem,
                               const std::string& server_name, std::string_view method,
                               std::string_view path, std::string_view body, int timeout_ms,
                               std::string_view extra_headers) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
  addrinfo* res = nullptr;
  std::string port_s = std::to_string(port);
  if (int rc = getaddrinfo(host.c_str(), port_s.c_str(), &hints, &res); rc != 0) {
    return InvalidArgumentError("bad host '" + host + "': " + gai_strerror(rc));
  }
  std::unique_ptr<addrinfo, void (*)(addrinfo*)> guard(res, freeaddrinfo);
  int fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return UnavailableError("socket: " + ErrnoMessage(errno));
  std::unique_ptr<int, void (*)(int*)> fd_guard(&fd, [](int* f) { close(*f); });
  timeval tv{timeout_ms / 1000, static_cast<suseconds_t>(timeout_ms % 1000) * 1000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  if (connect(fd, res->ai_addr, res->ai_addrlen) != 0) {
    return UnavailableError("connect " + host + ":" + port_s + ": " + ErrnoMessage(errno));
  }
  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> ctx(SSL_CTX_new(TLS_client_method()),
                                                        SSL_CTX_free);
  X509_STORE* store = SSL_CTX_get_cert_store(ctx.get());
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(
      BIO_new_mem_buf(ca_bundle_pem.data(), static_cast<int>(ca_bundle_pem.size())), BIO_free);
  int cas = 0;
  while (X509* ca = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
    X509_STORE_add_cert(store, ca);
    X509_free(ca);
    ++cas;
  }
  ERR_clear_error();
  if (cas == 0) return InvalidArgumentError("no CA certificate in the bundle");
  SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER, nullptr);
  std::unique_ptr<SSL, decltype(&SSL_free)> ssl(SSL_new(ctx.get()), SSL_free);
  X509_VERIFY_PARAM* param = SSL_get0_param(ssl.get());
  std::array<unsigned char, 16> ipbuf{};
  bool is_ip = inet_pton(AF_INET, server_name.c_str(), ipbuf.data()) == 1 ||
               inet_pton(AF_INET6, server_name.c_str(), ipbuf.data()) == 1;
  if (is_ip) {
    X509_VERIFY_PARAM_set1_ip_asc(param, server_name.c_str());
  } else {
    X509_VERIFY_PARAM_set1_host(param, server_name.c_str(), 0);
    SSL_set_tlsext_host_name(ssl.get(), server_name.c_str());
  }
  SSL_set_fd(ssl.get(), fd);
  if (SSL_connect(ssl.get()) != 1) {
    long v = SSL_get_verify_result(ssl.get());  // NOLINT(google-runtime-int): OpenSSL's type
    std::string why = v != X509_V_OK ? X509_verify_cert_error_string(v) : "";
    return UnavailableError(SslError("TLS handshake with " + host + ":" + port_s +
                                     (why.empty() ? "" : " (" + why + ")")));
  }
  std::string req =
      std::string(method) + " " + std::string(path) + " HTTP/1.1\r\nHost: " + server_name +
      "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
      "\r\n" + std::string(extra_headers) + "Connection: close\r\n\r\n" + std::string(body);
  if (!WriteAll(ssl.get(), req)) return UnavailableError(SslError("TLS write"));
  std::string resp;
  std::array<char, 16384> chunk{};
  int n = 0;
  while ((n = SSL_read(ssl.get(), chunk.data(), static_cast<int>(chunk.size()))) > 0) {
    resp.append(chunk.data(), static_cast<size_t>(n));
  }
  ERR_clear_error();
  size_t end = resp.find("\r\n\r\n");
  if (resp.rfind("HTTP/1.1 ", 0) != 0 || end == std::string::npos || resp.size() < 12) {
    return UnavailableError("malformed HTTP response from " + host + ":" + port_s);
  }
  HttpReply reply;
  reply.code = std::atoi(resp.c_str() + 9);
  std::string_view resp_view = resp;
  reply.content_type = Header(resp_view.substr(0, end + 2), "Content-Type");
  reply.body = resp.substr(end + 4);
  return reply;
}

}  // namespace draco::admission
