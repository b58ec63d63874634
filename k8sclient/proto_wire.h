// Internal to k8sclient's protobuf transcoding (proto_json.cc, proto_objects.cc): the wire
// reader and the envelope. Not for other callers.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "base/status.h"
#include "k8sclient/proto_json.h"

namespace draco::k8s::proto_internal {

inline constexpr std::string_view kMagic("k8s\0", 4);

inline Status Bad(std::string m) { return {StatusCode::kDataLoss, "protobuf: " + std::move(m)}; }

// One field occurrence on the wire.
struct Item {
  uint32_t number = 0;
  uint32_t wire = 0;
  uint64_t value = 0;     // varint, fixed64 or fixed32
  std::string_view data;  // length-delimited
};

class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  bool done() const { return pos_ >= in_.size(); }

  bool Varint(uint64_t& v) {
    v = 0;
    for (int shift = 0; shift < 64 && pos_ < in_.size(); shift += 7) {
      auto b = static_cast<uint8_t>(in_[pos_++]);
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return true;
    }
    return false;
  }

  Status Next(Item& item) {
    uint64_t tag = 0;
    if (!Varint(tag)) return Bad("truncated tag");
    item.number = static_cast<uint32_t>(tag >> 3);
    item.wire = static_cast<uint32_t>(tag & 7);
    if (item.number == 0 || (tag >> 3) > 0x1fffffff) return Bad("bad field number");
    switch (item.wire) {
      case 0:
        if (!Varint(item.value)) return Bad("truncated varint");
        return OkStatus();
      case 1:
      case 5: {
        size_t n = item.wire == 1 ? 8 : 4;
        if (in_.size() - pos_ < n) return Bad("truncated fixed value");
        item.value = 0;
        for (size_t i = 0; i < n; ++i) {
          item.value |= static_cast<uint64_t>(static_cast<uint8_t>(in_[pos_ + i])) << (8 * i);
        }
        pos_ += n;
        return OkStatus();
      }
      case 2: {
        uint64_t len = 0;
        if (!Varint(len)) return Bad("truncated length");
        if (len > in_.size() - pos_) return Bad("length past the end");
        item.data = in_.substr(pos_, len);
        pos_ += len;
        return OkStatus();
      }
      default:
        return Bad("unsupported wire type " + std::to_string(item.wire));
    }
  }

 private:
  std::string_view in_;
  size_t pos_ = 0;
};

// Reads every item of a message.
inline Status Scan(std::string_view data, std::vector<Item>& items) {
  Reader r(data);
  while (!r.done()) {
    Item it;
    if (auto s = r.Next(it); !s.ok()) return s;
    items.push_back(it);
  }
  return OkStatus();
}

// "k8s\0" + runtime.Unknown{typeMeta{apiVersion, kind}, raw}.
struct Envelope {
  std::string_view api_version;
  std::string_view kind;
  std::string_view raw;
};
StatusOr<Envelope> ReadEnvelope(std::string_view encoded);

// Writes the members of `msg` read from `data` into the JSON object `w` is writing; with
// `drop_managed_fields`, `msg` is a kind's message whose metadata.managedFields is left out.
Status TranscodeMembers(const ProtoSchema::Message& msg, std::string_view data,
                        rapidjson::Writer<rapidjson::StringBuffer>& w, bool drop_managed_fields);

}  // namespace draco::k8s::proto_internal
