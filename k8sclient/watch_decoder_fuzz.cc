// libFuzzer target: the watch decoder and the API-error decoder must never crash, whatever the
// bytes and wherever they are split. Invariant checked: decoding the same input in one piece and
// split at a fuzzer-chosen point yields the same number of events (or both fail).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <string_view>

#include "k8sclient/api_error.h"
#include "k8sclient/watch_decoder.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t cut = data[0] % size;
  std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
  const size_t split = std::min(cut, input.size());

  draco::k8s::WatchDecoder whole;
  std::deque<draco::k8s::WatchEvent> a;
  const bool ok_a = whole.Feed(input, a).ok() && whole.Finish(a).ok();

  draco::k8s::WatchDecoder parts;
  std::deque<draco::k8s::WatchEvent> b;
  const bool ok_b = parts.Feed(input.substr(0, split), b).ok() &&
                    parts.Feed(input.substr(split), b).ok() && parts.Finish(b).ok();
  if (ok_a != ok_b || (ok_a && a.size() != b.size())) std::abort();

  (void)draco::k8s::DecodeApiError(400 + static_cast<int>(data[0] % 200), input, 1)
      .ToStatus()
      .ToString();
  return 0;
}
