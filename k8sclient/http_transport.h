// DirectTransport: the REST client's request path without thread hand-offs. Each request is
// written and its response read on the calling thread, over a pooled keep-alive HTTP/1.1
// connection (TCP, TLS through OpenSSL with the client's trust store). cpprestsdk hands every
// request to its I/O threads and the response back through task continuations, several context
// switches per request; this transport has none. Watches and LISTs (gzip) stay on cpprestsdk.
//
// Thread-safe: any number of threads may call RoundTrip at once; each uses its own connection
// (taken from the idle pool or newly dialled) and returns it to the pool afterwards when the
// response allows reuse.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "k8sclient/http_wire.h"
#include "k8sclient/tls_trust.h"

namespace draco::k8s {

class DirectTransport {
 public:
  struct Options {
    BaseUrl url;
    X509StorePtr trust;  // required for https: the server's certificate is verified against it
    std::string client_cert_pem, client_key_pem;  // both or neither
    bool insecure_skip_tls_verify = false;
    // Connect timeout and the longest wait for the connection to make progress (inactivity);
    // 0 = none.
    std::chrono::milliseconds timeout{30000};
    size_t max_idle = 64;  // idle connections kept for reuse
  };
  // INVALID_ARGUMENT when the TLS context cannot be built from the options (bad key, ...).
  static StatusOr<std::unique_ptr<DirectTransport>> New(Options options);
  ~DirectTransport();
  DirectTransport(const DirectTransport&) = delete;
  DirectTransport& operator=(const DirectTransport&) = delete;

  // Sends one request (`target` = path and query, the base URL's path prefix is added) and
  // reads its response. Errors: UNAVAILABLE when the server could not be reached or the
  // connection failed (the request may or may not have been processed if any byte was sent),
  // DEADLINE_EXCEEDED when the connection made no progress for `timeout`, CANCELLED after
  // Cancel(). A pooled connection the server closed while idle is detected and replaced before
  // the request is sent, and a request that fails on a reused connection before any response
  // byte arrived is sent once more on a new connection (as Go's net/http does for requests it
  // may resend).
  StatusOr<HttpResponse> RoundTrip(std::string_view method, std::string_view target,
                                   const HeaderList& headers, std::string_view body);
  // Aborts requests in flight (their connections are shut down) and every later one. Streams
  // already open are not affected (Stream::Close ends them).
  void Cancel();

  class Conn;

  // A response read as it arrives (a watch): its own connection, never pooled.
  class Stream {
   public:
    ~Stream();
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;
    // Status code and headers (the body is read with Read()).
    const HttpResponse& head() { return parser_.response(); }
    // The next body bytes as they arrive (chunked encoding removed), waiting up to the stream's
    // inactivity timeout for them; "" at the end of the body or after Close(). Errors as
    // RoundTrip's. Not thread-safe, except against Close().
    StatusOr<std::string> Read();
    // Ends a Read() blocked on another thread, and every later one (thread-safe).
    void Close();

   private:
    friend class DirectTransport;
    explicit Stream(std::unique_ptr<Conn> conn);
    std::unique_ptr<Conn> conn_;
    ResponseParser parser_;
    std::atomic<bool> closed_{false};
  };
  // Sends GET `target` on a new connection and returns once the response head arrived; a
  // connection silent for `inactivity` fails the stream's Read() with DEADLINE_EXCEEDED. The
  // stream does not refer to the transport (it may outlive it).
  StatusOr<std::unique_ptr<Stream>> OpenStream(std::string_view target, const HeaderList& headers,
                                               std::chrono::milliseconds inactivity);

  size_t idle_connections() const;
  size_t connections_opened() const { return opened_.load(); }

 private:
  explicit DirectTransport(Options options);
  StatusOr<std::unique_ptr<Conn>> Dial();
  std::unique_ptr<Conn> TakeIdle();
  void PutIdle(std::unique_ptr<Conn> c);
  StatusOr<HttpResponse> Exchange(Conn& c, std::string_view request, bool* nothing_received);
  void Track(Conn* c, bool active);

  const Options options_;
  std::shared_ptr<void> ssl_ctx_;  // SSL_CTX*, null for http
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<Conn>> idle_;
  std::set<Conn*> active_;
  // Shared with every connection (a Stream's too, which may outlive the transport).
  std::shared_ptr<std::atomic<bool>> cancelled_;
  std::atomic<size_t> opened_{0};
};

}  // namespace draco::k8s
