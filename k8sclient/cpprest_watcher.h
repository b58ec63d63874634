// CpprestWatcher: a Watcher over a chunked watch response read through cpprestsdk (the
// transport when RestConfig::direct_transport is false). Internal to k8sclient.
#pragma once

#include <atomic>
#include <deque>
#include <memory>
#include <optional>

#include <cpprest/http_client.h>

#include "k8sclient/rest_client.h"
#include "k8sclient/watch_decoder.h"

namespace draco::k8s {

class CpprestWatcher final : public Watcher {
 public:
  // `response` answered 200; `http` is the watch's own client, `cts` cancels its request.
  CpprestWatcher(std::unique_ptr<web::http::client::http_client> http,
                 pplx::cancellation_token_source cts, web::http::http_response response);
  ~CpprestWatcher() override;
  CpprestWatcher(const CpprestWatcher&) = delete;
  CpprestWatcher& operator=(const CpprestWatcher&) = delete;

  StatusOr<std::optional<WatchEvent>> Next() override;
  void Stop() override;

 private:
  std::unique_ptr<web::http::client::http_client> http_;
  pplx::cancellation_token_source cts_;
  web::http::http_response response_;
  WatchDecoder decoder_;
  std::deque<WatchEvent> pending_;
  bool eof_ = false;
  std::atomic<bool> stopped_{false};
};

}  // namespace draco::k8s
