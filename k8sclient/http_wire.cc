#include "k8sclient/http_wire.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace draco::k8s {
namespace {

constexpr size_t kMaxChunkLine = 1024;  // chunk size plus extensions

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool HasToken(std::string_view list, std::string_view token) {
  const std::string lowered = Lower(list);
  std::string_view l = lowered;
  size_t start = 0;
  while (start <= l.size()) {
    size_t end = l.find(',', start);
    if (end == std::string::npos) end = l.size();
    if (Trim(l.substr(start, end - start)) == token) return true;
    start = end + 1;
  }
  return false;
}

template <class T>
bool ParseNumber(std::string_view s, T* out, int base = 10) {
  if (s.empty()) return false;
  auto r = std::from_chars(s.data(), s.data() + s.size(), *out, base);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

}  // namespace

std::string BaseUrl::HostHeader() const {
  std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  if (port != (tls ? "443" : "80")) h += ":" + port;
  return h;
}

bool BaseUrl::HostIsIpLiteral() const {
  if (host.find(':') != std::string::npos) return true;  // IPv6
  return !host.empty() && std::all_of(host.begin(), host.end(), [](char c) {
    return c == '.' || std::isdigit(static_cast<unsigned char>(c));
  });
}

StatusOr<BaseUrl> ParseBaseUrl(std::string_view url) {
  BaseUrl u;
  std::string_view rest = url;
  if (rest.substr(0, 8) == "https://") {
    rest.remove_prefix(8);
  } else if (rest.substr(0, 7) == "http://") {
    u.tls = false;
    rest.remove_prefix(7);
  } else {
    return InvalidArgumentError("server URL must start with https:// or http://: " +
                                std::string(url));
  }
  size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  std::string_view path = slash == std::string_view::npos ? "" : rest.substr(slash);
  if (authority.empty() || authority.find('@') != std::string_view::npos ||
      path.find_first_of("?#") != std::string_view::npos) {
    return InvalidArgumentError("unsupported server URL: " + std::string(url));
  }
  std::string_view host = authority, port;
  if (authority.front() == '[') {
    size_t close = authority.find(']');
    if (close == std::string_view::npos) {
      return InvalidArgumentError("bad IPv6 host: " + std::string(url));
    }
    host = authority.substr(1, close - 1);
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return InvalidArgumentError("bad server URL: " + std::string(url));
      port = after.substr(1);
    }
  } else if (size_t colon = authority.rfind(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
  }
  int port_number = 0;
  if (!port.empty() &&
      (!ParseNumber(port, &port_number) || port_number < 1 || port_number > 65535)) {
    return InvalidArgumentError("bad port in server URL: " + std::string(url));
  }
  if (host.empty()) return InvalidArgumentError("no host in server URL: " + std::string(url));
  u.host = std::string(host);
  u.port = port.empty() ? (u.tls ? "443" : "80") : std::string(port);
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  u.path_prefix = std::string(path);
  return u;
}

std::string SerializeRequest(std::string_view method, std::string_view target,
                             std::string_view host_header, const HeaderList& headers,
                             std::string_view body) {
  std::string out;
  out.reserve(256 + body.size());
  out.append(method).append(" ").append(target).append(" HTTP/1.1\r\nHost: ");
  out.append(host_header).append("\r\n");
  for (const auto& [name, value] : headers) {
    out.append(name).append(": ").append(value).append("\r\n");
  }
  const bool carries_body =
      !body.empty() || method == "POST" || method == "PUT" || method == "PATCH";
  if (carries_body) {
    out.append("Content-Length: ").append(std::to_string(body.size())).append("\r\n");
  }
  out.append("\r\n");
  out.append(body);
  return out;
}

const std::string* HttpResponse::Header(std::string_view lower_name) const {
  for (const auto& [name, value] : headers) {
    if (name == lower_name) return &value;
  }
  return nullptr;
}

ResponseParser::ResponseParser(size_t max_head, size_t max_body)
    : max_head_(max_head), max_body_(max_body) {}

Status ResponseParser::ParseHead(std::string_view head) {
  size_t eol = head.find("\r\n");
  std::string_view status = head.substr(0, eol);
  // "HTTP/1.1 200 OK"
  if (status.size() < 12 || status.substr(0, 7) != "HTTP/1." || status[8] != ' ') {
    return InternalError("malformed HTTP status line");
  }
  int code = 0;
  if (!ParseNumber(status.substr(9, 3), &code) || code < 100 || code > 999 ||
      (status.size() > 12 && status[12] != ' ')) {
    return InternalError("malformed HTTP status code");
  }
  HttpResponse r;
  r.code = code;
  bool chunked = false, has_length = false, keep_alive_token = false, close_token = false;
  size_t length = 0;
  std::string_view lines = eol == std::string_view::npos ? "" : head.substr(eol + 2);
  while (!lines.empty()) {
    size_t end = lines.find("\r\n");
    std::string_view line = lines.substr(0, end);
    lines = end == std::string_view::npos ? "" : lines.substr(end + 2);
    if (line.empty()) continue;
    size_t colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0) {
      return InternalError("malformed HTTP header");
    }
    std::string name = Lower(line.substr(0, colon));
    std::string_view value = Trim(line.substr(colon + 1));
    if (name == "transfer-encoding") {
      if (!HasToken(value, "chunked")) return InternalError("unsupported transfer-encoding");
      chunked = true;
    } else if (name == "content-length") {
      size_t n = 0;
      if (!ParseNumber(value, &n) || (has_length && n != length)) {
        return InternalError("malformed content-length");
      }
      has_length = true;
      length = n;
    } else if (name == "connection") {
      close_token = close_token || HasToken(value, "close");
      keep_alive_token = keep_alive_token || HasToken(value, "keep-alive");
    }
    r.headers.emplace_back(std::move(name), std::string(value));
  }
  // HTTP/1.1 keeps the connection unless told otherwise; HTTP/1.0 only when asked to.
  r.keep_alive = !close_token && (status[7] == '1' || keep_alive_token);
  if (code < 200) return OkStatus();  // interim; the real response follows
  resp_ = std::move(r);
  if (code == 204 || code == 304) {
    state_ = State::kDone;
  } else if (chunked) {
    state_ = State::kChunkSize;
  } else if (has_length) {
    if (length > max_body_) return InternalError("response body too large");
    remaining_ = length;
    resp_.body.reserve(length);
    state_ = length == 0 ? State::kDone : State::kLength;
  } else {
    resp_.keep_alive = false;
    state_ = State::kClose;
  }
  return OkStatus();
}

Status ResponseParser::Step(bool* progressed) {
  *progressed = false;
  std::string_view in = Pending();
  switch (state_) {
    case State::kHead: {
      size_t end = in.find("\r\n\r\n");
      // (Limits on a partial line allow for the terminator's first bytes, so that the verdict
      // does not depend on where the input was split.)
      if (end == std::string_view::npos) {
        if (in.size() > max_head_ + 3) return InternalError("response head too large");
        return OkStatus();
      }
      if (end > max_head_) return InternalError("response head too large");
      Status st = ParseHead(in.substr(0, end + 2));
      if (!st.ok()) return st;
      pos_ += end + 4;
      *progressed = true;
      return OkStatus();
    }
    case State::kLength:
    case State::kChunkData: {
      size_t n = std::min(remaining_, in.size());
      if (n == 0) return OkStatus();
      resp_.body.append(in.substr(0, n));
      pos_ += n;
      remaining_ -= n;
      if (remaining_ == 0) state_ = state_ == State::kLength ? State::kDone : State::kChunkEnd;
      *progressed = true;
      return OkStatus();
    }
    case State::kChunkEnd:
      if (in.size() < 2) return OkStatus();
      if (in.substr(0, 2) != "\r\n") return InternalError("malformed chunk terminator");
      pos_ += 2;
      state_ = State::kChunkSize;
      *progressed = true;
      return OkStatus();
    case State::kChunkSize: {
      size_t end = in.find("\r\n");
      if (end == std::string_view::npos ? in.size() > kMaxChunkLine + 1 : end > kMaxChunkLine) {
        return InternalError("malformed chunk size");
      }
      if (end == std::string_view::npos) return OkStatus();
      std::string_view size = Trim(in.substr(0, std::min(end, in.find(';'))));
      size_t n = 0;
      if (!ParseNumber(size, &n, 16)) return InternalError("malformed chunk size");
      if (n > max_body_ - std::min(max_body_, resp_.body.size())) {
        return InternalError("response body too large");
      }
      pos_ += end + 2;
      remaining_ = n;
      state_ = n == 0 ? State::kTrailers : State::kChunkData;
      *progressed = true;
      return OkStatus();
    }
    case State::kTrailers: {
      size_t end = in.find("\r\n");
      if (end == std::string_view::npos ? in.size() > max_head_ + 1 : end > max_head_) {
        return InternalError("response trailers too large");
      }
      if (end == std::string_view::npos) return OkStatus();
      pos_ += end + 2;
      if (end == 0) state_ = State::kDone;
      *progressed = true;
      return OkStatus();
    }
    case State::kClose:
      if (in.empty()) return OkStatus();
      if (resp_.body.size() + in.size() > max_body_) {
        return InternalError("response body too large");
      }
      resp_.body.append(in);
      pos_ += in.size();
      *progressed = true;
      return OkStatus();
    case State::kDone:
      if (!in.empty()) return InternalError("unexpected bytes after the HTTP response");
      return OkStatus();
  }
  return OkStatus();
}

Status ResponseParser::Feed(std::string_view data) {
  if (!data.empty()) seen_bytes_ = true;
  buf_.append(data);
  for (;;) {
    bool progressed = false;
    Status st = Step(&progressed);
    if (!st.ok()) return st;
    if (!progressed) break;
  }
  if (pos_ == buf_.size()) {
    buf_.clear();
    pos_ = 0;
  } else if (pos_ > 4096) {
    buf_.erase(0, pos_);
    pos_ = 0;
  }
  return OkStatus();
}

Status ResponseParser::Eof() {
  if (state_ == State::kClose) {
    state_ = State::kDone;
    return OkStatus();
  }
  if (state_ == State::kDone) return OkStatus();
  return UnavailableError(seen_bytes_ ? "connection closed in the middle of the HTTP response"
                                      : "connection closed before any HTTP response");
}

}  // namespace draco::k8s
