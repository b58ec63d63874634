// JSON decoding: Decode<T> and DecodeYaml<T> for every codec type (codec_types.inc), and the
// JSON helpers the codec shares (Compact, ParseJson, LooksLikeJson, ...). The Decoder itself is
// in codec_internal.h.
#include <algorithm>
#include <array>
#include <charconv>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>
#include <rapidjson/encodedstream.h>
#include <rapidjson/error/en.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <yaml-cpp/yaml.h>

#include "controller/api/codec.h"
#include "controller/api/codec_internal.h"

namespace draco::api {
namespace codec_internal {

std::string Compact(const Value& v) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  v.Accept(w);
  return {buf.GetString(), buf.GetSize()};
}

std::string_view TrimSpace(std::string_view s) {
  constexpr std::string_view kSpace = " \t\n\v\f\r";
  size_t b = s.find_first_not_of(kSpace);
  if (b == std::string_view::npos) return {};
  size_t e = s.find_last_not_of(kSpace);
  return s.substr(b, e - b + 1);
}

std::string NumberText(const Value& v) {
  if (v.IsInt64()) return std::to_string(v.GetInt64());
  if (v.IsUint64()) return std::to_string(v.GetUint64());
  std::array<char, 64> buf{};
  auto r = std::to_chars(buf.data(), buf.data() + buf.size(), v.GetDouble());
  return {buf.data(), r.ptr};
}

// Nesting depth of a DOM value, computed without recursion.
int Depth(const Value& root) {
  struct Item {
    const Value* v;
    int depth;
  };
  std::vector<Item> stack = {{&root, 1}};
  int max_depth = 0;
  while (!stack.empty()) {
    Item it = stack.back();
    stack.pop_back();
    max_depth = std::max(max_depth, it.depth);
    if (max_depth > kMaxNestingDepth) return max_depth;
    if (it.v->IsArray()) {
      for (const Value& e : it.v->GetArray()) stack.push_back({&e, it.depth + 1});
    } else if (it.v->IsObject()) {
      for (const auto& m : it.v->GetObject()) stack.push_back({&m.value, it.depth + 1});
    }
  }
  return max_depth;
}

Status ParseJson(std::string_view json, rapidjson::Document& doc) {
  doc.Parse<rapidjson::kParseIterativeFlag | rapidjson::kParseFullPrecisionFlag>(json.data(),
                                                                                 json.size());
  if (doc.HasParseError()) {
    return InvalidArgumentError("invalid JSON at offset " + std::to_string(doc.GetErrorOffset()) +
                                ": " + rapidjson::GetParseError_En(doc.GetParseError()));
  }
  if (Depth(doc) > kMaxNestingDepth) {
    return InvalidArgumentError("JSON nesting deeper than " + std::to_string(kMaxNestingDepth));
  }
  return OkStatus();
}

// A SAX handler that forwards to `Out` (a rapidjson::Document) everything but the value of the
// root object's metadata.managedFields, and fixes the metadata object's member count.
template <typename Out>
class SkipManagedFields {
 public:
  explicit SkipManagedFields(Out& out) : out_(out) {}

  bool Null() {
    return Scalar([&] { return out_.Null(); });
  }
  bool Bool(bool b) {
    return Scalar([&] { return out_.Bool(b); });
  }
  bool Int(int i) {
    return Scalar([&] { return out_.Int(i); });
  }
  bool Uint(unsigned u) {
    return Scalar([&] { return out_.Uint(u); });
  }
  bool Int64(int64_t i) {
    return Scalar([&] { return out_.Int64(i); });
  }
  bool Uint64(uint64_t u) {
    return Scalar([&] { return out_.Uint64(u); });
  }
  bool Double(double d) {
    return Scalar([&] { return out_.Double(d); });
  }
  bool RawNumber(const char* s, rapidjson::SizeType n, bool copy) {
    return Scalar([&] { return out_.RawNumber(s, n, copy); });
  }
  bool String(const char* s, rapidjson::SizeType n, bool copy) {
    return Scalar([&] { return out_.String(s, n, copy); });
  }
  bool StartObject() {
    return Open([&] { return out_.StartObject(); });
  }
  bool StartArray() {
    return Open([&] { return out_.StartArray(); });
  }
  bool Key(const char* s, rapidjson::SizeType n, bool copy) {
    if (skip_from_ >= 0) return true;
    std::string_view k(s, n);
    pending_metadata_ = depth_ == 1 && k == "metadata";
    if (depth_ == metadata_depth_ && k == "managedFields") {
      skip_from_ = depth_;  // swallow the key and its value
      ++skipped_;
      return true;
    }
    return out_.Key(s, n, copy);
  }
  bool EndObject(rapidjson::SizeType members) {
    return Close([&] {
      if (depth_ + 1 != metadata_depth_) return out_.EndObject(members);
      metadata_depth_ = -1;
      return out_.EndObject(members - skipped_);
    });
  }
  bool EndArray(rapidjson::SizeType elements) {
    return Close([&] { return out_.EndArray(elements); });
  }

 private:
  template <class F>
  bool Scalar(F forward) {
    pending_metadata_ = false;
    if (skip_from_ < 0) return forward();
    if (depth_ == skip_from_) skip_from_ = -1;  // a scalar managedFields value ends here
    return true;
  }
  template <class F>
  bool Open(F forward) {
    ++depth_;
    if (pending_metadata_ && depth_ == 2) {
      metadata_depth_ = 2;
      skipped_ = 0;
    }
    pending_metadata_ = false;
    return skip_from_ >= 0 || forward();
  }
  template <class F>
  bool Close(F forward) {
    --depth_;
    if (skip_from_ < 0) return forward();
    if (depth_ == skip_from_) skip_from_ = -1;  // the managedFields value is complete
    return true;
  }

  Out& out_;
  int depth_ = 0;            // containers open
  int metadata_depth_ = -1;  // depth of the root's metadata object while it is open
  int skip_from_ = -1;       // depth of the key whose value is being skipped
  bool pending_metadata_ = false;
  rapidjson::SizeType skipped_ = 0;
};

// See codec_internal.h.
bool LooksLikeJson(std::string_view text) {
  for (char c : text) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
    return c == '{';
  }
  return false;
}

}  // namespace codec_internal

using codec_internal::ConvertYamlNode;
using codec_internal::DecodeValue;
using codec_internal::LoadYaml;
using codec_internal::LooksLikeJson;
using codec_internal::ParseJson;

template <typename T>
StatusOr<T> Decode(std::string_view json) {
  rapidjson::Document doc;
  if (Status s = ParseJson(json, doc); !s.ok()) return s;
  return DecodeValue<T>(doc);
}

template <typename T>
StatusOr<T> DecodeSkippingManagedFields(std::string_view json) {
  rapidjson::Document doc;
  bool parsed = false;
  auto generate = [&](rapidjson::Document& out) {
    rapidjson::MemoryStream ms(json.data(), json.size());
    rapidjson::EncodedInputStream<rapidjson::UTF8<>, rapidjson::MemoryStream> is(ms);
    rapidjson::Reader reader;
    codec_internal::SkipManagedFields<rapidjson::Document> filter(out);
    parsed =
        !reader
             .Parse<rapidjson::kParseIterativeFlag | rapidjson::kParseFullPrecisionFlag>(is, filter)
             .IsError();
    return parsed;
  };
  doc.Populate(generate);
  // Errors (and non-objects) are reported as Decode reports them; the filter never fails itself.
  if (!parsed || !doc.IsObject()) return Decode<T>(json);
  if (codec_internal::Depth(doc) > kMaxNestingDepth) {
    return InvalidArgumentError("JSON nesting deeper than " + std::to_string(kMaxNestingDepth));
  }
  return DecodeValue<T>(doc);
}

template <typename T>
StatusOr<T> DecodeYaml(std::string_view yaml) {
  if (LooksLikeJson(yaml)) return Decode<T>(yaml);
  StatusOr<std::vector<YAML::Node>> docs = LoadYaml(yaml);
  if (!docs.ok()) return docs.status();
  if (docs->size() != 1) {
    return InvalidArgumentError("expected exactly one YAML document, got " +
                                std::to_string(docs->size()));
  }
  rapidjson::Document doc;
  if (Status s = ConvertYamlNode((*docs)[0], doc); !s.ok()) return s;
  return DecodeValue<T>(doc);
}

#define DRACO_API_CODEC_TYPE(T)                                          \
  template StatusOr<T> Decode<T>(std::string_view);                      \
  template StatusOr<T> DecodeSkippingManagedFields<T>(std::string_view); \
  template StatusOr<T> DecodeYaml<T>(std::string_view);
#include "controller/api/codec_types.inc"
#undef DRACO_API_CODEC_TYPE

}  // namespace draco::api
