// libFuzzer target: the response parser and the base-URL parser must never crash, whatever the
// bytes and wherever they are split. Invariant checked: parsing the input in one piece and split
// at a fuzzer-chosen point gives the same verdict, code and body.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "k8sclient/http_wire.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
  const size_t split = std::min<size_t>(data[0] % size, input.size());
  auto parse = [](std::string_view a, std::string_view b, draco::k8s::ResponseParser& p) {
    return p.Feed(a).ok() && p.Feed(b).ok() && p.Eof().ok();
  };
  draco::k8s::ResponseParser whole(4096, 1 << 20), parts(4096, 1 << 20);
  const bool ok_a = parse(input, "", whole);
  const bool ok_b = parse(input.substr(0, split), input.substr(split), parts);
  if (ok_a != ok_b) std::abort();
  if (ok_a && (whole.response().code != parts.response().code ||
               whole.response().body != parts.response().body)) {
    std::abort();
  }
  (void)draco::k8s::ParseBaseUrl(input);
  return 0;
}
