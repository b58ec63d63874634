// JSON encoding: the Encoder visitor and Encode<T> for every codec type (codec_types.inc).
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <rapidjson/document.h>

#include "controller/api/codec.h"
#include "controller/api/codec_internal.h"

namespace draco::api {
namespace codec_internal {
namespace {

// ---------------------------------------------------------------------------------------------
// Encoding

class Encoder {
 public:
  explicit Encoder(Allocator& a) : a_(a) {}

  // Each Encode returns false when the value is omitted (empty and not forced).
  bool Encode(const std::string& s, Value& out, bool force) {
    if (s.empty() && !force) return false;
    out.SetString(s.data(), static_cast<rapidjson::SizeType>(s.size()), a_);
    return true;
  }
  bool Encode(const int64_t& i, Value& out, bool force) {
    if (i == 0 && !force) return false;
    out.SetInt64(i);
    return true;
  }
  bool Encode(const bool& b, Value& out, bool force) {
    if (!b && !force) return false;
    out.SetBool(b);
    return true;
  }
  bool Encode(const Quantity& q, Value& out, bool) {
    std::string s = q.ToString();
    out.SetString(s.data(), static_cast<rapidjson::SizeType>(s.size()), a_);
    return true;
  }
  bool Encode(const RawJson& r, Value& out, bool) {
    if (r.empty()) return false;
    return ParseRaw(r.json, out);
  }
  template <class T>
  bool Encode(const std::optional<T>& o, Value& out, bool) {
    if (!o) return false;
    return Encode(*o, out, true);
  }
  template <class T>
  bool Encode(const std::vector<T>& vec, Value& out, bool force) {
    if (vec.empty() && !force) return false;
    out.SetArray();
    for (const T& e : vec) {
      Value item;
      if (!Encode(e, item, true)) item.SetNull();
      out.PushBack(item, a_);
    }
    return true;
  }
  template <class T>
  bool Encode(const std::map<std::string, T>& m, Value& out, bool force) {
    if (m.empty() && !force) return false;
    out.SetObject();
    for (const auto& [k, e] : m) {
      Value item;
      if (!Encode(e, item, true)) item.SetNull();
      out.AddMember(Value(k.data(), static_cast<rapidjson::SizeType>(k.size()), a_), item, a_);
    }
    return true;
  }
  template <ApiStruct T>
  bool Encode(const T& obj, Value& out, bool force) {
    out.SetObject();
    FieldEncoder fe{*this, out};
    Fields(fe, const_cast<T&>(obj));  // NOLINT: Fields is shared with the decoder; read-only here
    for (const auto& [name, json] : obj.unknown.members) {
      Value item;
      if (!ParseRaw(json, item)) continue;
      out.AddMember(Value(name.data(), static_cast<rapidjson::SizeType>(name.size()), a_), item,
                    a_);
    }
    return force || out.MemberCount() > 0;
  }

 private:
  bool ParseRaw(const std::string& json, Value& out) {
    rapidjson::Document doc(&a_);
    doc.Parse<rapidjson::kParseIterativeFlag | rapidjson::kParseFullPrecisionFlag>(json.data(),
                                                                                   json.size());
    if (doc.HasParseError()) return false;
    out.CopyFrom(doc, a_);
    return true;
  }

  struct FieldEncoder {
    Encoder& e;
    Value& obj;
    template <class F>
    void operator()(std::string_view name, const F& field) {
      Value v;
      if (!e.Encode(field, v, false)) return;
      obj.AddMember(Value(name.data(), static_cast<rapidjson::SizeType>(name.size()), e.a_), v,
                    e.a_);
    }
  };

  Allocator& a_;
};

}  // namespace
}  // namespace codec_internal

using codec_internal::Compact;
using codec_internal::Encoder;

template <typename T>
std::string Encode(const T& obj) {
  rapidjson::Document doc;
  Encoder enc(doc.GetAllocator());
  enc.Encode(obj, doc, true);
  return Compact(doc);
}

#define DRACO_API_CODEC_TYPE(T) template std::string Encode<T>(const T&);
#include "controller/api/codec_types.inc"
#undef DRACO_API_CODEC_TYPE

}  // namespace draco::api
