// HTTP/1.1 on the wire for the direct transport (http_transport.h): the base URL, request bytes
// and an incremental response parser. Pure functions and values: no sockets, no threads.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace draco::k8s {

// "https://host:port/prefix" split up. The port defaults to 443/80; an IPv6 literal keeps no
// brackets in `host` (they are added back in HostHeader()).
struct BaseUrl {
  bool tls = true;
  std::string host;
  std::string port;
  std::string path_prefix;  // "" or "/prefix" (no trailing slash)
  std::string HostHeader() const;
  bool HostIsIpLiteral() const;
};
// INVALID_ARGUMENT for anything but http(s)://host[:port][/prefix] (no user info, query or
// fragment).
StatusOr<BaseUrl> ParseBaseUrl(std::string_view url);

using HeaderList = std::vector<std::pair<std::string, std::string>>;

// The request head and body: "METHOD target HTTP/1.1", Host, Content-Length (when a body or
// a method that carries one), the given headers in order, then the body. Header names and values
// must be free of CR/LF (the caller checked them).
std::string SerializeRequest(std::string_view method, std::string_view target,
                             std::string_view host_header, const HeaderList& headers,
                             std::string_view body);

struct HttpResponse {
  int code = 0;
  HeaderList headers;  // names lower-cased, values trimmed, in arrival order
  std::string body;
  bool keep_alive = true;  // false: the connection must not be reused
  // The first value of header `lower_name`, or null.
  const std::string* Header(std::string_view lower_name) const;
};

// Parses one response from the bytes of a connection, fed as they arrive. Interim 1xx responses
// are skipped. Bodies: Content-Length, chunked (extensions and trailers ignored), none for 204
// and 304, else until the peer closes. Thread-compatible.
class ResponseParser {
 public:
  // `max_head` bounds the status line plus headers, `max_body` the body (both in bytes).
  explicit ResponseParser(size_t max_head = size_t{64} * 1024, size_t max_body = size_t{1} << 30);
  // Consumes `data`. An error (INTERNAL, message says what was wrong) is final. Bytes after the
  // end of the response are an error too (nothing is pipelined).
  Status Feed(std::string_view data);
  // The peer closed the connection: completes a body read until close, else an error saying the
  // response was cut short (UNAVAILABLE).
  Status Eof();
  // True once a whole response was read.
  bool done() const { return state_ == State::kDone; }
  // True once the head of the final (non-1xx) response was read: code and headers are known;
  // the body so far is in response().body (a streaming reader may take it from there).
  bool head_done() const { return state_ != State::kHead; }
  // True when no byte of a response has arrived yet.
  bool empty() const { return !seen_bytes_; }
  HttpResponse& response() { return resp_; }

 private:
  enum class State { kHead, kLength, kChunkSize, kChunkData, kChunkEnd, kTrailers, kClose, kDone };
  Status ParseHead(std::string_view head);
  Status Step(bool* progressed);
  std::string_view Pending() const {
    std::string_view all = buf_;
    return all.substr(pos_);
  }

  size_t max_head_, max_body_;
  State state_ = State::kHead;
  std::string buf_;
  size_t pos_ = 0;
  size_t remaining_ = 0;  // body or chunk bytes still to read
  bool seen_bytes_ = false;
  HttpResponse resp_;
};

}  // namespace draco::k8s
