// WatchDecoder: turns the byte stream of a watch response into WatchEvents.
//
// The API server writes one JSON object per line ({"type":"ADDED","object":{...}}\n) in a
// chunked response. Chunk boundaries are arbitrary: a chunk may end mid-event, mid-UTF-8 sequence
// or hold many events. The decoder buffers the incomplete tail and emits only complete lines.
//
// Thread-compatible (one decoder per stream). Never throws.
#pragma once

#include <deque>
#include <string>
#include <string_view>

#include "base/status.h"
#include "k8sclient/rest_client.h"

namespace draco::k8s {

class WatchDecoder {
 public:
  // Limit on one event line; a longer line is treated as a corrupt stream (the API server caps
  // objects at ~1.5 MiB, so this leaves ample room).
  static constexpr size_t kMaxLineBytes = 64u << 20;

  // Appends `bytes`; every completed line is decoded and pushed onto `out`. A line that cannot be
  // decoded makes Feed return that error (events decoded before it are still in `out`).
  Status Feed(std::string_view bytes, std::deque<WatchEvent>& out);
  // End of stream: decodes a final line that lacked its newline.
  Status Finish(std::deque<WatchEvent>& out);
  // Bytes buffered waiting for a newline.
  size_t pending_bytes() const { return buf_.size(); }

  // Decodes one event line.
  static StatusOr<WatchEvent> DecodeLine(std::string_view line);

 private:
  std::string buf_;
};

}  // namespace draco::k8s
