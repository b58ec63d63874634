#include "k8sclient/http_transport.h"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <csignal>
#include <cstring>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

namespace draco::k8s {
namespace {

constexpr size_t kReadBytes = size_t{64} * 1024;

// strerror(3) is not thread-safe; the GNU strerror_r returns the text (maybe not in `buf`).
std::string ErrnoText(int e) {
  std::array<char, 128> buf{};
  return strerror_r(e, buf.data(), buf.size());
}

std::string SslErrorText() {
  unsigned long e = ERR_get_error();  // NOLINT(google-runtime-int): OpenSSL's type
  if (e == 0) return "TLS error";
  std::array<char, 256> buf{};
  ERR_error_string_n(e, buf.data(), buf.size());
  ERR_clear_error();
  return buf.data();
}

// Loads the client certificate chain and key into `ctx`.
Status UseClientCertificate(SSL_CTX* ctx, const std::string& cert_pem, const std::string& key_pem) {
  std::unique_ptr<BIO, decltype(&BIO_free)> cb(
      BIO_new_mem_buf(cert_pem.data(), static_cast<int>(cert_pem.size())), &BIO_free);
  X509* leaf = PEM_read_bio_X509(cb.get(), nullptr, nullptr, nullptr);
  if (!leaf || SSL_CTX_use_certificate(ctx, leaf) != 1) {
    X509_free(leaf);
    return InvalidArgumentError("client certificate: " + SslErrorText());
  }
  X509_free(leaf);
  while (X509* extra = PEM_read_bio_X509(cb.get(), nullptr, nullptr, nullptr)) {
    if (SSL_CTX_add_extra_chain_cert(ctx, extra) != 1) {  // takes ownership on success
      X509_free(extra);
      return InvalidArgumentError("client certificate chain: " + SslErrorText());
    }
  }
  ERR_clear_error();  // the loop ends on "no start line"
  std::unique_ptr<BIO, decltype(&BIO_free)> kb(
      BIO_new_mem_buf(key_pem.data(), static_cast<int>(key_pem.size())), &BIO_free);
  EVP_PKEY* key = PEM_read_bio_PrivateKey(kb.get(), nullptr, nullptr, nullptr);
  if (!key || SSL_CTX_use_PrivateKey(ctx, key) != 1 || SSL_CTX_check_private_key(ctx) != 1) {
    EVP_PKEY_free(key);
    return InvalidArgumentError("client key: " + SslErrorText());
  }
  EVP_PKEY_free(key);
  return OkStatus();
}

}  // namespace

// One connection: a non-blocking socket and, for https, its TLS session. Every wait is a poll()
// bounded by the transport's timeout, so Cancel() (shutdown of the socket) and stalled servers
// both end it.
class DirectTransport::Conn {
 public:
  Conn(int fd, std::chrono::milliseconds timeout,
       std::shared_ptr<const std::atomic<bool>> cancelled)
      : fd_(fd), timeout_(timeout), cancelled_(std::move(cancelled)) {}
  ~Conn() {
    if (ssl_) SSL_free(ssl_);
    if (fd_ >= 0) close(fd_);
  }
  Conn(const Conn&) = delete;
  Conn& operator=(const Conn&) = delete;
  int fd() const { return fd_; }
  void Shutdown() const { shutdown(fd_, SHUT_RDWR); }
  void set_timeout(std::chrono::milliseconds t) { timeout_ = t; }

  Status Wait(decltype(pollfd::events) events) const {
    pollfd p{fd_, events, 0};
    const int ms = timeout_.count() > 0 ? static_cast<int>(timeout_.count()) : -1;
    int r;
    do {
      r = poll(&p, 1, ms);
    } while (r < 0 && errno == EINTR);
    if (cancelled_->load()) return CancelledError("client cancelled");
    if (r == 0) return DeadlineExceededError("request timed out");
    if (r < 0) return UnavailableError("poll: " + ErrnoText(errno));
    return OkStatus();
  }

  Status Connect(const sockaddr* addr, socklen_t len) const {
    if (connect(fd_, addr, len) == 0) return OkStatus();
    if (errno != EINPROGRESS) return UnavailableError("connect: " + ErrnoText(errno));
    if (Status st = Wait(POLLOUT); !st.ok()) return st;
    int err = 0;
    socklen_t l = sizeof(err);
    getsockopt(fd_, SOL_SOCKET, SO_ERROR, &err, &l);
    if (err != 0) return UnavailableError("connect: " + ErrnoText(err));
    return OkStatus();
  }

  // Waits as OpenSSL asks after a non-fatal result `ret` of an SSL call; an error otherwise.
  Status SslRetry(int ret, const char* what) {
    int e = SSL_get_error(ssl_, ret);
    if (e == SSL_ERROR_WANT_READ) return Wait(POLLIN);
    if (e == SSL_ERROR_WANT_WRITE) return Wait(POLLOUT);
    if (cancelled_->load()) return CancelledError("client cancelled");
    if (e == SSL_ERROR_SYSCALL && errno != 0) {
      return UnavailableError(std::string(what) + ": " + ErrnoText(errno));
    }
    return UnavailableError(std::string(what) + ": " + SslErrorText());
  }

  Status Handshake(SSL_CTX* ctx, const BaseUrl& url, bool verify) {
    ssl_ = SSL_new(ctx);
    if (!ssl_ || SSL_set_fd(ssl_, fd_) != 1) return UnavailableError("TLS: " + SslErrorText());
    if (!url.HostIsIpLiteral()) SSL_set_tlsext_host_name(ssl_, url.host.c_str());
    if (verify) {
      // The server certificate must name the host we dialled (DNS name or IP address).
      if (url.HostIsIpLiteral()) {
        X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl_), url.host.c_str());
      } else {
        SSL_set1_host(ssl_, url.host.c_str());
      }
    }
    for (;;) {
      ERR_clear_error();
      int r = SSL_connect(ssl_);
      if (r == 1) return OkStatus();
      if (long v = SSL_get_verify_result(ssl_); verify && v != X509_V_OK) {  // NOLINT
        return UnavailableError(std::string("TLS handshake: certificate verify failed: ") +
                                X509_verify_cert_error_string(v));
      }
      if (Status st = SslRetry(r, "TLS handshake"); !st.ok()) return st;
    }
  }

  Status WriteAll(std::string_view data) {
    while (!data.empty()) {
      if (ssl_) {
        ERR_clear_error();
        int n = SSL_write(ssl_, data.data(), static_cast<int>(data.size()));
        if (n > 0) {
          data.remove_prefix(static_cast<size_t>(n));
          continue;
        }
        if (Status st = SslRetry(n, "write"); !st.ok()) return st;
        continue;
      }
      ssize_t n = send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n > 0) {
        data.remove_prefix(static_cast<size_t>(n));
      } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
        if (Status st = Wait(POLLOUT); !st.ok()) return st;
      } else {
        if (cancelled_->load()) return CancelledError("client cancelled");
        return UnavailableError("write: " + ErrnoText(errno));
      }
    }
    return OkStatus();
  }

  // Bytes read into `buf` (> 0), or 0 at the end of the stream.
  StatusOr<size_t> Read(char* buf, size_t cap) {
    for (;;) {
      if (ssl_) {
        ERR_clear_error();
        int n = SSL_read(ssl_, buf, static_cast<int>(cap));
        if (n > 0) return static_cast<size_t>(n);
        int e = SSL_get_error(ssl_, n);
        if (e == SSL_ERROR_ZERO_RETURN || (e == SSL_ERROR_SYSCALL && errno == 0)) {
          if (cancelled_->load()) return CancelledError("client cancelled");
          return size_t{0};
        }
        if (Status st = SslRetry(n, "read"); !st.ok()) return st;
        continue;
      }
      ssize_t n = recv(fd_, buf, cap, 0);
      if (n > 0) return static_cast<size_t>(n);
      if (n == 0) {
        if (cancelled_->load()) return CancelledError("client cancelled");
        return size_t{0};
      }
      if (errno == EAGAIN || errno == EINTR) {
        if (Status st = Wait(POLLIN); !st.ok()) return st;
        continue;
      }
      if (cancelled_->load()) return CancelledError("client cancelled");
      return UnavailableError("read: " + ErrnoText(errno));
    }
  }

  // One read into `parser`: sets *eof at the end of the stream (after the parser accepted it);
  // errors from the connection, or UNAVAILABLE for bytes that are not HTTP.
  Status FeedParser(ResponseParser& parser, bool* eof) {
    *eof = false;
    if (buf_.empty()) buf_.resize(kReadBytes);
    StatusOr<size_t> n = Read(buf_.data(), buf_.size());
    if (!n.ok()) return n.status();
    if (*n == 0) {
      *eof = true;
      return parser.Eof();
    }
    if (Status st = parser.Feed(std::string_view(buf_.data(), *n)); !st.ok()) {
      return UnavailableError("bad HTTP response: " + st.message());
    }
    return OkStatus();
  }

  // An idle connection is usable when nothing is readable on it (a server that closed it, or
  // sent anything unasked, makes it readable).
  bool IdleUsable() const {
    if (ssl_ && SSL_pending(ssl_) > 0) return false;
    pollfd p{fd_, POLLIN, 0};
    return poll(&p, 1, 0) == 0;
  }

 private:
  int fd_;
  SSL* ssl_ = nullptr;
  std::chrono::milliseconds timeout_;
  std::shared_ptr<const std::atomic<bool>> cancelled_;  // the transport's Cancel()
  std::vector<char> buf_;                               // read buffer, allocated on first read
};

DirectTransport::DirectTransport(Options options)
    : options_(std::move(options)), cancelled_(std::make_shared<std::atomic<bool>>(false)) {}

DirectTransport::~DirectTransport() = default;

StatusOr<std::unique_ptr<DirectTransport>> DirectTransport::New(Options options) {
  // OpenSSL writes to the socket with write(2): a peer that closed must not kill the process.
  static std::once_flag sigpipe;
  std::call_once(sigpipe, [] { signal(SIGPIPE, SIG_IGN); });
  std::unique_ptr<DirectTransport> t(new DirectTransport(std::move(options)));
  const Options& o = t->options_;
  if (!o.url.tls) return t;
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  if (!ctx) return InternalError("TLS context: " + SslErrorText());
  t->ssl_ctx_ = std::shared_ptr<void>(ctx, [](void* p) { SSL_CTX_free(static_cast<SSL_CTX*>(p)); });
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  if (o.insecure_skip_tls_verify) {
    SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr);
  } else {
    if (!o.trust) return InvalidArgumentError("direct transport: no trust store for https");
    SSL_CTX_set1_cert_store(ctx, o.trust.get());
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  }
  if (!o.client_cert_pem.empty()) {
    if (Status st = UseClientCertificate(ctx, o.client_cert_pem, o.client_key_pem); !st.ok()) {
      return st;
    }
  }
  return t;
}

void DirectTransport::Track(Conn* c, bool active) {
  std::lock_guard<std::mutex> l(mu_);
  if (active) {
    active_.insert(c);
    if (cancelled_->load()) c->Shutdown();
  } else {
    active_.erase(c);
  }
}

StatusOr<std::unique_ptr<DirectTransport::Conn>> DirectTransport::Dial() {
  const BaseUrl& u = options_.url;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (int rc = getaddrinfo(u.host.c_str(), u.port.c_str(), &hints, &res); rc != 0) {
    return UnavailableError("resolve " + u.host + ": " + gai_strerror(rc));
  }
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> owned(res, &freeaddrinfo);
  Status last = UnavailableError("no address for " + u.host);
  for (addrinfo* a = res; a != nullptr; a = a->ai_next) {
    int fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      last = UnavailableError("socket: " + ErrnoText(errno));
      continue;
    }
    auto c = std::make_unique<Conn>(fd, options_.timeout, cancelled_);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    Track(c.get(), true);
    Status st = c->Connect(a->ai_addr, a->ai_addrlen);
    if (st.ok() && ssl_ctx_) {
      st = c->Handshake(static_cast<SSL_CTX*>(ssl_ctx_.get()), u,
                        !options_.insecure_skip_tls_verify);
    }
    Track(c.get(), false);
    if (st.ok()) {
      opened_.fetch_add(1);
      return c;
    }
    if (st.code() == StatusCode::kCancelled) return st;
    last = Status(st.code(), u.host + ":" + u.port + ": " + st.message());
  }
  return last;
}

std::unique_ptr<DirectTransport::Conn> DirectTransport::TakeIdle() {
  std::lock_guard<std::mutex> l(mu_);
  while (!idle_.empty()) {
    std::unique_ptr<Conn> c = std::move(idle_.back());
    idle_.pop_back();
    if (c->IdleUsable()) return c;
  }
  return nullptr;
}

void DirectTransport::PutIdle(std::unique_ptr<Conn> c) {
  std::lock_guard<std::mutex> l(mu_);
  if (!cancelled_->load() && idle_.size() < options_.max_idle) idle_.push_back(std::move(c));
}

size_t DirectTransport::idle_connections() const {
  std::lock_guard<std::mutex> l(mu_);
  return idle_.size();
}

void DirectTransport::Cancel() {
  std::lock_guard<std::mutex> l(mu_);
  cancelled_->store(true);
  for (Conn* c : active_) c->Shutdown();
  idle_.clear();
}

StatusOr<HttpResponse> DirectTransport::Exchange(Conn& c, std::string_view request,
                                                 bool* nothing_received) {
  *nothing_received = true;
  if (Status st = c.WriteAll(request); !st.ok()) return st;
  ResponseParser parser;
  while (!parser.done()) {
    bool eof = false;
    if (Status st = c.FeedParser(parser, &eof); !st.ok()) return st;
    if (eof) break;
    *nothing_received = false;
  }
  return std::move(parser.response());
}

StatusOr<HttpResponse> DirectTransport::RoundTrip(std::string_view method, std::string_view target,
                                                  const HeaderList& headers,
                                                  std::string_view body) {
  const std::string path = options_.url.path_prefix + std::string(target);
  const std::string request =
      SerializeRequest(method, path, options_.url.HostHeader(), headers, body);
  for (int attempt = 0;; ++attempt) {
    if (cancelled_->load()) return CancelledError("client cancelled");
    std::unique_ptr<Conn> c = attempt == 0 ? TakeIdle() : nullptr;
    const bool reused = c != nullptr;
    if (!c) {
      auto dialled = Dial();
      if (!dialled.ok()) return dialled.status();
      c = std::move(*dialled);
    }
    Track(c.get(), true);
    bool nothing_received = true;
    StatusOr<HttpResponse> r = Exchange(*c, request, &nothing_received);
    Track(c.get(), false);
    if (r.ok()) {
      if (r->keep_alive) PutIdle(std::move(c));
      return r;
    }
    // A kept-alive connection the server closed just as we sent: once more on a new one.
    if (reused && nothing_received && r.status().code() == StatusCode::kUnavailable) continue;
    return r.status();
  }
}

}  // namespace draco::k8s

namespace draco::k8s {

DirectTransport::Stream::Stream(std::unique_ptr<Conn> conn) : conn_(std::move(conn)) {}

DirectTransport::Stream::~Stream() = default;

StatusOr<std::string> DirectTransport::Stream::Read() {
  for (;;) {
    if (closed_.load()) return std::string();
    std::string out;
    parser_.response().body.swap(out);
    if (!out.empty() || parser_.done()) return out;
    bool eof = false;
    Status st = conn_->FeedParser(parser_, &eof);
    if (closed_.load()) return std::string();
    if (!st.ok()) return st;
  }
}

void DirectTransport::Stream::Close() {
  closed_.store(true);
  conn_->Shutdown();
}

StatusOr<std::unique_ptr<DirectTransport::Stream>> DirectTransport::OpenStream(
    std::string_view target, const HeaderList& headers, std::chrono::milliseconds inactivity) {
  if (cancelled_->load()) return CancelledError("client cancelled");
  const std::string request =
      SerializeRequest("GET", options_.url.path_prefix + std::string(target),
                       options_.url.HostHeader(), headers, "");
  auto dialled = Dial();
  if (!dialled.ok()) return dialled.status();
  (*dialled)->set_timeout(inactivity);
  std::unique_ptr<Stream> s(new Stream(std::move(*dialled)));
  if (Status st = s->conn_->WriteAll(request); !st.ok()) return st;
  while (!s->parser_.head_done()) {
    bool eof = false;
    if (Status st = s->conn_->FeedParser(s->parser_, &eof); !st.ok()) return st;
    if (eof) break;
  }
  return s;
}

}  // namespace draco::k8s
