// DirectWatcher: a Watcher over the direct transport's streamed response (http_transport.h).
// The reflector's thread reads the socket and decodes the events itself: no transport thread,
// no task hand-off per chunk. Internal to k8sclient (rest_client_impl.cc makes them).
#pragma once

#include <atomic>
#include <deque>
#include <memory>
#include <optional>

#include "k8sclient/http_transport.h"
#include "k8sclient/rest_client.h"
#include "k8sclient/watch_decoder.h"

namespace draco::k8s {

class DirectWatcher final : public Watcher {
 public:
  // `stream` answered 200 and its head was read.
  explicit DirectWatcher(std::unique_ptr<DirectTransport::Stream> stream);
  ~DirectWatcher() override;
  DirectWatcher(const DirectWatcher&) = delete;
  DirectWatcher& operator=(const DirectWatcher&) = delete;

  StatusOr<std::optional<WatchEvent>> Next() override;
  void Stop() override;

 private:
  std::unique_ptr<DirectTransport::Stream> stream_;
  WatchDecoder decoder_;
  std::deque<WatchEvent> pending_;
  bool eof_ = false;
  std::atomic<bool> stopped_{false};
};

}  // namespace draco::k8s
