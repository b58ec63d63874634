// libFuzzer target: protobuf transcoding with draco's generated schema (proto_schema.h) must never
// crash, whatever the bytes. Invariants checked: a transcoded object is a JSON object; a watch
// stream decodes to the same events in one piece and split at a fuzzer-chosen point.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <string>
#include <string_view>

#include <rapidjson/document.h>

#include "controller/run/proto_schema.h"
#include "k8sclient/proto_json.h"
#include "k8sclient/watch_decoder.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const auto schema = draco::run::KubeProtoSchema();
  if (size < 2 || schema == nullptr) return 0;
  std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
  if ((data[0] & 1) == 0) {
    auto json = draco::k8s::ProtoObjectToJson(*schema, input);
    if (json.ok()) {
      rapidjson::Document d;
      d.Parse(json->data(), json->size());
      if (d.HasParseError() || !d.IsObject()) std::abort();
    }
    return 0;
  }
  const size_t split = std::min<size_t>(data[0] >> 1, input.size());
  draco::k8s::WatchDecoder whole(schema);
  std::deque<draco::k8s::WatchEvent> a;
  const bool ok_a = whole.Feed(input, a).ok() && whole.Finish(a).ok();
  draco::k8s::WatchDecoder parts(schema);
  std::deque<draco::k8s::WatchEvent> b;
  const bool ok_b = parts.Feed(input.substr(0, split), b).ok() &&
                    parts.Feed(input.substr(split), b).ok() && parts.Finish(b).ok();
  if (ok_a != ok_b || (ok_a && a.size() != b.size())) std::abort();
  return 0;
}
