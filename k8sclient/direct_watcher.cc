#include "k8sclient/direct_watcher.h"

#include <string>
#include <utility>

namespace draco::k8s {

DirectWatcher::DirectWatcher(std::unique_ptr<DirectTransport::Stream> stream,
                             std::shared_ptr<const ProtoSchema> proto,
                             std::function<void(const Status&)> on_proto_error)
    : stream_(std::move(stream)),
      decoder_(std::move(proto)),
      on_proto_error_(std::move(on_proto_error)) {}

DirectWatcher::~DirectWatcher() { Stop(); }

StatusOr<std::optional<WatchEvent>> DirectWatcher::Next() {
  while (pending_.empty()) {
    if (eof_ || stopped_.load()) return std::optional<WatchEvent>();
    StatusOr<std::string> bytes = stream_->Read();
    if (stopped_.load()) return std::optional<WatchEvent>();
    if (!bytes.ok()) {
      eof_ = true;
      return Status(bytes.status().code(), "watch stream: " + bytes.status().message());
    }
    if (bytes->empty()) {
      eof_ = true;
      if (Status s = decoder_.Finish(pending_); !s.ok()) return s;
      continue;
    }
    if (Status s = decoder_.Feed(*bytes, pending_); !s.ok()) {
      eof_ = true;
      if (decoder_.protobuf() && on_proto_error_) on_proto_error_(s);
      return s;
    }
  }
  WatchEvent ev = std::move(pending_.front());
  pending_.pop_front();
  return std::optional<WatchEvent>(std::move(ev));
}

void DirectWatcher::Stop() {
  if (stopped_.exchange(true)) return;
  stream_->Close();
}

}  // namespace draco::k8s
