// Protobuf -> JSON transcoding (proto_json.h): the message walker and the envelope.
#include "k8sclient/proto_json.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <ctime>

#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "k8sclient/proto_wire.h"

namespace draco::k8s::proto_internal {
namespace {

using Field = ProtoSchema::Field;
using Message = ProtoSchema::Message;
using Type = ProtoSchema::Type;
using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

constexpr int kMaxDepth = 64;

bool IsVarintType(Type t) { return t == Type::kBool || t == Type::kInt || t == Type::kUint; }

std::string FormatTime(int64_t seconds, int64_t micros, bool micro) {
  // Range of years 0..9999, as Go's RFC 3339 formatting (and the API server) allows.
  if (seconds < -62135596800LL || seconds > 253402300799LL) return {};
  auto t = static_cast<std::time_t>(seconds);
  std::tm tm{};
  if (gmtime_r(&t, &tm) == nullptr) return {};
  std::array<char, 40> buf{};
  size_t n = std::strftime(buf.data(), buf.size(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (n == 0) return {};
  std::string out(buf.data(), n);
  if (micro) {
    std::array<char, 16> frac{};
    std::snprintf(frac.data(), frac.size(), ".%06lld", static_cast<long long>(micros));
    out += frac.data();
  }
  out += 'Z';
  return out;
}

// Field numbers of metav1.ObjectMeta, field 1 of every kind's message.
constexpr uint32_t kMetadataField = 1;
constexpr uint32_t kManagedFieldsField = 17;

class Transcoder {
 public:
  Transcoder(Writer& w, bool drop_managed_fields)
      : w_(w), drop_managed_fields_(drop_managed_fields) {}

  // Writes the members of `msg` (read from `data`) into the object being written; depth 0 is
  // the top-level object.
  Status Members(const Message& msg, std::string_view data, int depth) {
    if (depth > kMaxDepth) return Bad("nesting too deep");
    const bool in_metadata = depth == 1 && in_top_metadata_;
    std::vector<Item> items;
    if (auto s = Scan(data, items); !s.ok()) return s;
    // Items of one field together, fields in Go struct order (JSON key order); the wire order of
    // a repeated field's items is kept (stable sort).
    std::vector<std::pair<const Field*, const Item*>> order;
    order.reserve(items.size());
    for (const auto& it : items) {
      if (in_metadata && it.number == kManagedFieldsField) continue;
      const Field* f = msg.Find(it.number);
      if (f == nullptr) {
        return Bad("field " + std::to_string(it.number) + " of " + msg.name +
                   " is not in the schema");
      }
      order.emplace_back(f, &it);
    }
    std::stable_sort(order.begin(), order.end(),
                     [](const auto& a, const auto& b) { return a.first->order < b.first->order; });
    for (size_t i = 0; i < order.size();) {
      size_t j = i + 1;
      while (j < order.size() && order[j].first == order[i].first) ++j;
      in_top_metadata_ =
          drop_managed_fields_ && depth == 0 && order[i].first->number == kMetadataField;
      if (auto s = FieldValue(*order[i].first, order, i, j, depth); !s.ok()) return s;
      i = j;
    }
    // encoding/json writes a nil slice, map or pointer without omitempty as null; the server's
    // objects come from protobuf storage, where an empty one is nil too.
    size_t k = 0;
    for (const Field& f : msg.fields) {
      while (k < order.size() && order[k].first->order < f.order) ++k;
      const bool present = k < order.size() && order[k].first == &f;
      if (!present && !f.omitempty && !f.inline_fields && (f.repeated || f.map || f.pointer)) {
        w_.Key(f.json.data(), static_cast<rapidjson::SizeType>(f.json.size()));
        w_.Null();
      }
    }
    return OkStatus();
  }

 private:
  using Group = std::vector<std::pair<const Field*, const Item*>>;

  Status FieldValue(const Field& f, const Group& g, size_t from, size_t to, int depth) {
    if (f.inline_fields) {
      // Go encodes the embedded struct once; merge every occurrence like protobuf would.
      for (size_t i = from; i < to; ++i) {
        if (g[i].second->wire != 2) return Bad("inline " + f.json + ": wrong wire type");
        if (auto s = Members(*f.message, g[i].second->data, depth + 1); !s.ok()) return s;
      }
      return OkStatus();
    }
    if (f.map) {
      w_.Key(f.json.data(), static_cast<rapidjson::SizeType>(f.json.size()));
      w_.StartObject();
      for (size_t i = from; i < to; ++i) {
        if (g[i].second->wire != 2) return Bad("map " + f.json + ": wrong wire type");
        if (auto s = MapEntry(f, g[i].second->data, depth); !s.ok()) return s;
      }
      w_.EndObject();
      return OkStatus();
    }
    if (f.repeated) {
      // Expand packed scalars first, then decide; an empty list is omitted (Go: omitempty).
      std::vector<Item> values;
      for (size_t i = from; i < to; ++i) {
        const Item& it = *g[i].second;
        if (IsVarintType(f.type) && it.wire == 2) {
          Reader r(it.data);
          while (!r.done()) {
            Item v;
            v.wire = 0;
            if (!r.Varint(v.value)) return Bad("packed " + f.json + ": truncated");
            values.push_back(v);
          }
        } else {
          values.push_back(it);
        }
      }
      w_.Key(f.json.data(), static_cast<rapidjson::SizeType>(f.json.size()));
      w_.StartArray();
      for (const auto& v : values) {
        if (auto s = Value(f, v, depth); !s.ok()) return s;
      }
      w_.EndArray();
      return OkStatus();
    }
    const Item& it = *g[to - 1].second;  // a repeated singular field: the last one wins
    if (!f.pointer && Omitted(f, it)) return OkStatus();
    w_.Key(f.json.data(), static_cast<rapidjson::SizeType>(f.json.size()));
    return Value(f, it, depth);
  }

  // encoding/json's omitempty (zero scalars) and omitzero (zero Time) for a non-pointer field.
  static bool Omitted(const Field& f, const Item& it) {
    if (f.omitzero && (f.type == Type::kTime || f.type == Type::kMicroTime) && it.data.empty()) {
      return true;
    }
    if (!f.omitempty) return false;
    switch (f.type) {
      case Type::kString:
      case Type::kBytes:
        return it.wire == 2 && it.data.empty();
      case Type::kBool:
      case Type::kInt:
      case Type::kUint:
      case Type::kDouble:
        return it.wire != 2 && it.value == 0;
      default:
        return false;  // structs are never omitted by omitempty
    }
  }

  Status MapEntry(const Field& f, std::string_view data, int depth) {
    std::vector<Item> items;
    if (auto s = Scan(data, items); !s.ok()) return s;
    std::string_view key;
    const Item* value = nullptr;
    for (const auto& it : items) {
      if (it.number == 1 && it.wire == 2) {
        key = it.data;
      } else if (it.number == 2) {
        value = &it;
      } else {
        return Bad("map " + f.json + ": unexpected entry field");
      }
    }
    w_.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()), true);
    if (value == nullptr) {
      // Absent value: the zero value of its type.
      Item zero;
      zero.wire = IsVarintType(f.type) ? 0 : 2;
      return Value(f, zero, depth);
    }
    return Value(f, *value, depth);
  }

  Status Value(const Field& f, const Item& it, int depth) {
    const bool varint = it.wire == 0;
    const bool bytes = it.wire == 2;
    switch (f.type) {
      case Type::kString:
        if (!bytes) break;
        w_.String(it.data.data(), static_cast<rapidjson::SizeType>(it.data.size()), true);
        return OkStatus();
      case Type::kBool:
        if (!varint) break;
        w_.Bool(it.value != 0);
        return OkStatus();
      case Type::kInt:
        if (!varint) break;
        w_.Int64(static_cast<int64_t>(it.value));
        return OkStatus();
      case Type::kUint:
        if (!varint) break;
        w_.Uint64(it.value);
        return OkStatus();
      case Type::kDouble: {
        if (it.wire != 1) break;
        double d = 0;
        std::memcpy(&d, &it.value, sizeof(d));
        w_.Double(d);
        return OkStatus();
      }
      case Type::kBytes:
        if (!bytes) break;
        return Base64(it.data);
      case Type::kTime:
      case Type::kMicroTime:
        if (!bytes) break;
        return Time(f, it.data);
      case Type::kQuantity:
        if (!bytes) break;
        return Quantity(it.data);
      case Type::kIntOrString:
        if (!bytes) break;
        return IntOrString(it.data);
      case Type::kRaw:
        if (!bytes) break;
        return Raw(it.data);
      case Type::kMessage:
        if (!bytes) break;
        w_.StartObject();
        if (auto s = Members(*f.message, it.data, depth + 1); !s.ok()) return s;
        w_.EndObject();
        return OkStatus();
    }
    return Bad(f.json + ": wire type " + std::to_string(it.wire) + " does not fit its type");
  }

  Status Time(const Field& f, std::string_view data) {
    if (data.empty()) {
      w_.Null();  // the zero time (metav1.Time marshals it as no bytes; JSON says null)
      return OkStatus();
    }
    std::vector<Item> items;
    if (auto s = Scan(data, items); !s.ok()) return s;
    int64_t seconds = 0;
    int64_t nanos = 0;
    for (const auto& it : items) {
      if (it.wire != 0) return Bad(f.json + ": bad timestamp");
      if (it.number == 1) seconds = static_cast<int64_t>(it.value);
      if (it.number == 2) nanos = static_cast<int32_t>(it.value);
    }
    if (nanos < 0 || nanos > 999999999) return Bad(f.json + ": bad nanoseconds");
    std::string s = FormatTime(seconds, nanos / 1000, f.type == Type::kMicroTime);
    if (s.empty()) return Bad(f.json + ": time out of range");
    w_.String(s.data(), static_cast<rapidjson::SizeType>(s.size()), true);
    return OkStatus();
  }

  Status Quantity(std::string_view data) {
    std::vector<Item> items;
    if (auto s = Scan(data, items); !s.ok()) return s;
    std::string_view text = "0";
    for (const auto& it : items) {
      if (it.number != 1 || it.wire != 2) return Bad("bad quantity");
      text = it.data;
    }
    w_.String(text.data(), static_cast<rapidjson::SizeType>(text.size()), true);
    return OkStatus();
  }

  Status IntOrString(std::string_view data) {
    std::vector<Item> items;
    if (auto s = Scan(data, items); !s.ok()) return s;
    uint64_t type = 0;
    int64_t int_val = 0;
    std::string_view str_val;
    for (const auto& it : items) {
      if (it.number == 1 && it.wire == 0) {
        type = it.value;
      } else if (it.number == 2 && it.wire == 0) {
        int_val = static_cast<int32_t>(it.value);
      } else if (it.number == 3 && it.wire == 2) {
        str_val = it.data;
      } else {
        return Bad("bad int-or-string");
      }
    }
    if (type == 0) {
      w_.Int64(int_val);
    } else {
      w_.String(str_val.data(), static_cast<rapidjson::SizeType>(str_val.size()), true);
    }
    return OkStatus();
  }

  Status Raw(std::string_view data) {
    std::vector<Item> items;
    if (auto s = Scan(data, items); !s.ok()) return s;
    std::string_view raw;
    for (const auto& it : items) {
      if (it.number != 1 || it.wire != 2) return Bad("bad raw extension");
      raw = it.data;
    }
    if (raw.empty()) {
      w_.Null();
      return OkStatus();
    }
    // The bytes must be one JSON value (protobuf inside is not transcoded): checked with a SAX
    // pass, so that the text around them stays what it claims to be.
    rapidjson::Reader reader;
    rapidjson::MemoryStream ms(raw.data(), raw.size());
    rapidjson::BaseReaderHandler<> ignore;
    if (raw.starts_with(kMagic) || reader.Parse(ms, ignore).IsError()) {
      return Bad("raw extension is not JSON");
    }
    const size_t i = raw.find_first_not_of(" \t\r\n");
    w_.RawValue(raw.data(), raw.size(),
                raw[i] == '{' ? rapidjson::kObjectType : rapidjson::kStringType);
    return OkStatus();
  }

  Status Base64(std::string_view data) {
    static constexpr std::string_view kAlphabet =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    out.reserve((data.size() + 2) / 3 * 4);
    size_t i = 0;
    for (; i + 2 < data.size(); i += 3) {
      uint32_t v = (static_cast<uint8_t>(data[i]) << 16) |
                   (static_cast<uint8_t>(data[i + 1]) << 8) | static_cast<uint8_t>(data[i + 2]);
      out += kAlphabet[(v >> 18) & 63];
      out += kAlphabet[(v >> 12) & 63];
      out += kAlphabet[(v >> 6) & 63];
      out += kAlphabet[v & 63];
    }
    if (i < data.size()) {
      uint32_t v = static_cast<uint8_t>(data[i]) << 16;
      if (i + 1 < data.size()) v |= static_cast<uint8_t>(data[i + 1]) << 8;
      out += kAlphabet[(v >> 18) & 63];
      out += kAlphabet[(v >> 12) & 63];
      out += i + 1 < data.size() ? kAlphabet[(v >> 6) & 63] : '=';
      out += '=';
    }
    w_.String(out.data(), static_cast<rapidjson::SizeType>(out.size()), true);
    return OkStatus();
  }

  Writer& w_;
  const bool drop_managed_fields_;
  bool in_top_metadata_ = false;  // writing the top-level object's metadata, when dropping
};

}  // namespace

StatusOr<Envelope> ReadEnvelope(std::string_view encoded) {
  if (!encoded.starts_with(kMagic)) return Bad("missing the k8s envelope prefix");
  std::vector<Item> items;
  if (auto s = Scan(encoded.substr(kMagic.size()), items); !s.ok()) return s;
  Envelope env;
  for (const auto& it : items) {
    if (it.wire != 2) return Bad("bad envelope");
    if (it.number == 1) {
      std::vector<Item> tm;
      if (auto s = Scan(it.data, tm); !s.ok()) return s;
      for (const auto& t : tm) {
        if (t.wire != 2) return Bad("bad envelope type meta");
        if (t.number == 1) env.api_version = t.data;
        if (t.number == 2) env.kind = t.data;
      }
    } else if (it.number == 2) {
      env.raw = it.data;
    } else if (it.number == 3 && !it.data.empty()) {
      return Bad("content encoding " + std::string(it.data) + " is not supported");
    }
  }
  if (env.kind.empty()) return Bad("envelope without kind");
  return env;
}

Status TranscodeMembers(const ProtoSchema::Message& msg, std::string_view data, Writer& w,
                        bool drop_managed_fields) {
  Transcoder t(w, drop_managed_fields);
  return t.Members(msg, data, 0);
}

}  // namespace draco::k8s::proto_internal
