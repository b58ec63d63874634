#include "k8sclient/cpprest_watcher.h"

#include <algorithm>
#include <string_view>
#include <utility>
#include <vector>

#include "k8sclient/rest_client_helpers.h"

namespace draco::k8s {
namespace {
constexpr size_t kWatchReadBytes = size_t{64} * 1024;
}  // namespace

CpprestWatcher::CpprestWatcher(std::unique_ptr<web::http::client::http_client> http,
                               pplx::cancellation_token_source cts,
                               web::http::http_response response)
    : http_(std::move(http)), cts_(std::move(cts)), response_(std::move(response)) {}

CpprestWatcher::~CpprestWatcher() { Stop(); }

StatusOr<std::optional<WatchEvent>> CpprestWatcher::Next() {
  std::vector<uint8_t> buf(kWatchReadBytes);
  while (pending_.empty()) {
    if (eof_ || stopped_.load()) return std::optional<WatchEvent>();
    size_t n = 0;
    try {
      auto sb = response_.body().streambuf();
      // Read whatever is buffered, or block for one byte: a large getn() would wait for the
      // whole request size to arrive.
      const size_t avail = sb.in_avail();
      const size_t want = avail > 0 ? std::min(avail, buf.size()) : 1;
      n = sb.getn(buf.data(), want).get();
    } catch (...) {
      if (stopped_.load()) return std::optional<WatchEvent>();
      eof_ = true;
      return rest_internal::StatusFromCurrentException("watch stream");
    }
    if (n == 0) {
      eof_ = true;
      Status s = decoder_.Finish(pending_);
      if (!s.ok()) return s;
      continue;
    }
    Status s =
        decoder_.Feed(std::string_view(reinterpret_cast<const char*>(buf.data()), n), pending_);
    if (!s.ok()) {
      eof_ = true;
      return s;
    }
  }
  WatchEvent ev = std::move(pending_.front());
  pending_.pop_front();
  return std::optional<WatchEvent>(std::move(ev));
}

void CpprestWatcher::Stop() {
  if (stopped_.exchange(true)) return;
  try {
    cts_.cancel();
    // Closing the buffer for writing wakes a reader blocked in getn().
    response_.body().streambuf().close(std::ios_base::out).wait();
  } catch (...) {
    // Stopping is best effort; nothing may escape.
  }
}

}  // namespace draco::k8s
