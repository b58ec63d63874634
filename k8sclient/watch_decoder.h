// WatchDecoder: turns the byte stream of a watch response into WatchEvents.
//
// The API server writes one JSON object per line ({"type":"ADDED","object":{...}}\n) in a
// chunked response. Chunk boundaries are arbitrary: a chunk may end mid-event, mid-UTF-8 sequence
// or hold many events. The decoder buffers the incomplete tail and emits only complete lines.
//
// A protobuf watch stream (Content-Type application/vnd.kubernetes.protobuf;stream=watch) is a
// sequence of frames, each a 4-byte big-endian length and a metav1.WatchEvent; a decoder made
// with a ProtoSchema reads those and transcodes each object to its JSON text (proto_json.h), so
// the events are the same either way. A frame the schema does not cover is an error (the caller
// falls back to JSON).
//
// Thread-compatible (one decoder per stream). Never throws.
#pragma once

#include <deque>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"
#include "k8sclient/proto_json.h"
#include "k8sclient/rest_client.h"

namespace draco::k8s {

class WatchDecoder {
 public:
  // Limit on one event line; a longer line is treated as a corrupt stream (the API server caps
  // objects at ~1.5 MiB, so this leaves ample room).
  static constexpr size_t kMaxLineBytes = 64u << 20;

  WatchDecoder() = default;
  // Reads protobuf frames with `proto` (null: JSON lines).
  explicit WatchDecoder(std::shared_ptr<const ProtoSchema> proto) : proto_(std::move(proto)) {}

  // Appends `bytes`; every completed line is decoded and pushed onto `out`. A line that cannot be
  // decoded makes Feed return that error (events decoded before it are still in `out`).
  Status Feed(std::string_view bytes, std::deque<WatchEvent>& out);
  // End of stream: decodes a final line that lacked its newline.
  Status Finish(std::deque<WatchEvent>& out);
  // Bytes buffered waiting for a newline.
  size_t pending_bytes() const { return buf_.size(); }

  // Decodes one event line.
  static StatusOr<WatchEvent> DecodeLine(std::string_view line);
  // Decodes one protobuf frame's payload (the WatchEvent message, without its length).
  static StatusOr<WatchEvent> DecodeFrame(const ProtoSchema& schema, std::string_view frame);
  bool protobuf() const { return proto_ != nullptr; }

 private:
  Status FeedFrames(std::string_view bytes, std::deque<WatchEvent>& out);

  std::shared_ptr<const ProtoSchema> proto_;
  std::string buf_;
};

}  // namespace draco::k8s
