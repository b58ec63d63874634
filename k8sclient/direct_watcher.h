// DirectWatcher: a Watcher over the direct transport's streamed response (http_transport.h).
// The reflector's thread reads the socket and decodes the events itself: no transport thread,
// no task hand-off per chunk. Internal to k8sclient (rest_client_impl.cc makes them).
#pragma once

#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <optional>

#include "k8sclient/http_transport.h"
#include "k8sclient/rest_client.h"
#include "k8sclient/watch_decoder.h"

namespace draco::k8s {

class DirectWatcher final : public Watcher {
 public:
  // `stream` answered 200 and its head was read.
  // With `proto`, the stream is protobuf frames (watch_decoder.h); `on_proto_error` hears a
  // frame that could not be transcoded (before Next() returns that error).
  explicit DirectWatcher(std::unique_ptr<DirectTransport::Stream> stream,
                         std::shared_ptr<const ProtoSchema> proto = nullptr,
                         std::function<void(const Status&)> on_proto_error = nullptr);
  ~DirectWatcher() override;
  DirectWatcher(const DirectWatcher&) = delete;
  DirectWatcher& operator=(const DirectWatcher&) = delete;

  StatusOr<std::optional<WatchEvent>> Next() override;
  void Stop() override;

 private:
  std::unique_ptr<DirectTransport::Stream> stream_;
  WatchDecoder decoder_;
  std::function<void(const Status&)> on_proto_error_;
  std::deque<WatchEvent> pending_;
  bool eof_ = false;
  std::atomic<bool> stopped_{false};
};

}  // namespace draco::k8s
