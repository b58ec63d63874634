// YAML: the YAML -> JSON converter (sigs.k8s.io/yaml scalar resolution), the guards that keep
// yaml-cpp 0.7 from hanging, YamlToJson and DecodeManifests.
#include <array>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>
#include <yaml-cpp/yaml.h>

#include "controller/api/codec.h"
#include "controller/api/codec_internal.h"
#include "controller/api/version_convert.h"

namespace draco::api {
namespace {

using codec_internal::Allocator;
using codec_internal::Compact;
using codec_internal::DecodeValue;
using codec_internal::LooksLikeJson;
using codec_internal::ParseJson;
using rapidjson::Value;

// ---------------------------------------------------------------------------------------------
// YAML -> JSON

class YamlConverter {
 public:
  explicit YamlConverter(Allocator& a) : a_(a) {}
  Status status;

  void Convert(const YAML::Node& node, Value& out, int depth) {
    if (!status.ok()) return;
    if (depth > kMaxNestingDepth) {
      status = InvalidArgumentError("YAML nesting deeper than " + std::to_string(kMaxNestingDepth));
      return;
    }
    if (++nodes_ > kMaxYamlNodes) {
      status = InvalidArgumentError("YAML document expands to more than " +
                                    std::to_string(kMaxYamlNodes) + " nodes");
      return;
    }
    switch (node.Type()) {
      case YAML::NodeType::Undefined:
      case YAML::NodeType::Null:
        out.SetNull();
        return;
      case YAML::NodeType::Scalar:
        return Scalar(node, out);
      case YAML::NodeType::Sequence:
        out.SetArray();
        for (const YAML::Node& e : node) {
          Value item;
          Convert(e, item, depth + 1);
          if (!status.ok()) return;
          out.PushBack(item, a_);
        }
        return;
      case YAML::NodeType::Map:
        out.SetObject();
        for (const auto& kv : node) {
          if (!kv.first.IsScalar()) {
            status = InvalidArgumentError("YAML mapping keys must be scalars");
            return;
          }
          const std::string& key = kv.first.Scalar();
          Value item;
          Convert(kv.second, item, depth + 1);
          if (!status.ok()) return;
          // A repeated key replaces the earlier value, keeping JSON objects duplicate-free.
          auto it = out.FindMember(Value(rapidjson::StringRef(key.data(), key.size())));
          if (it != out.MemberEnd()) {
            it->value = item;
          } else {
            out.AddMember(Value(key.data(), static_cast<rapidjson::SizeType>(key.size()), a_), item,
                          a_);
          }
        }
        return;
    }
  }

 private:
  void Scalar(const YAML::Node& node, Value& out) {
    const std::string& s = node.Scalar();
    const std::string& tag = node.Tag();
    if (tag == "!" || tag == "tag:yaml.org,2002:str") {  // quoted or explicitly a string
      out.SetString(s.data(), static_cast<rapidjson::SizeType>(s.size()), a_);
      return;
    }
    if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") {
      out.SetNull();
      return;
    }
    static constexpr auto kTrue = std::to_array<std::string_view>(
        {"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON", "y", "Y"});
    static constexpr auto kFalse = std::to_array<std::string_view>(
        {"false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF", "n", "N"});
    for (std::string_view t : kTrue) {
      if (s == t) return out.SetBool(true), void();
    }
    for (std::string_view f : kFalse) {
      if (s == f) return out.SetBool(false), void();
    }
    std::string plain;
    for (char c : s) {
      if (c != '_') plain.push_back(c);
    }
    if (std::optional<int64_t> i = ParseIntBase0(plain)) {
      out.SetInt64(*i);
      return;
    }
    if (IsYamlFloat(plain)) {
      double d = std::strtod(plain.c_str(), nullptr);
      if (std::isfinite(d)) {
        out.SetDouble(d);
        return;
      }
    }
    out.SetString(s.data(), static_cast<rapidjson::SizeType>(s.size()), a_);
  }

  // Go strconv.ParseInt(s, 0, 64): sign, then 0x/0o/0b prefixes or a leading-0 octal.
  static std::optional<int64_t> ParseIntBase0(std::string_view s) {
    bool neg = false;
    if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
      neg = s[0] == '-';
      s.remove_prefix(1);
    }
    int base = 10;
    if (s.size() > 1 && s[0] == '0') {
      char p = static_cast<char>(s[1] | 0x20);
      if (p == 'x') {
        base = 16;
        s.remove_prefix(2);
      } else if (p == 'o') {
        base = 8;
        s.remove_prefix(2);
      } else if (p == 'b') {
        base = 2;
        s.remove_prefix(2);
      } else {
        base = 8;
        s.remove_prefix(1);
      }
    }
    if (s.empty()) return std::nullopt;
    uint64_t v = 0;
    const uint64_t limit = neg ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
    for (char c : s) {
      int d;
      if (c >= '0' && c <= '9') {
        d = c - '0';
      } else if (c >= 'a' && c <= 'f') {
        d = c - 'a' + 10;
      } else if (c >= 'A' && c <= 'F') {
        d = c - 'A' + 10;
      } else {
        return std::nullopt;
      }
      if (d >= base) return std::nullopt;
      if (v > (limit - static_cast<uint64_t>(d)) / static_cast<uint64_t>(base)) {
        return std::nullopt;
      }
      v = v * static_cast<uint64_t>(base) + static_cast<uint64_t>(d);
    }
    return neg ? static_cast<int64_t>(0 - v) : static_cast<int64_t>(v);
  }

  // ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$
  static bool IsYamlFloat(std::string_view s) {
    size_t i = 0;
    auto digits = [&] {
      size_t start = i;
      while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
      return i - start;
    };
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (i < s.size() && s[i] == '.') {
      ++i;
      if (digits() == 0) return false;
    } else {
      if (digits() == 0) return false;
      if (i < s.size() && s[i] == '.') {
        ++i;
        digits();
      }
    }
    if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
      ++i;
      if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
      if (digits() == 0) return false;
    }
    return i == s.size();
  }

  Allocator& a_;
  size_t nodes_ = 0;
};

// yaml-cpp 0.7 (the distribution version) loops forever when a ',' token appears outside flow
// collections at document level (e.g. ",", "'x',", "- a\n,"). Such a ',' is never valid YAML
// (',' is an indicator, so it cannot start a plain scalar), so reject those inputs before parsing.
// Conservative scan: a ',' outside quotes, comments, block scalars and flow collections is
// rejected when it starts a line at column 0, is the first token of the text, or directly follows
// a closing quote/bracket, an anchor/tag or a document marker. A ',' inside a plain scalar
// ("a: b, c") is left alone.
bool HasStrayFlowEntry(std::string_view y) {
  int depth = 0;
  char quote = 0;
  bool token_boundary = true;  // the next non-space character starts a new token
  bool line_start = true;
  int block_indent = -1;  // >= 0 while inside a block scalar: its parent's indentation
  int indent = 0;
  bool maybe_block_header = false;
  for (size_t i = 0; i < y.size(); ++i) {
    char c = y[i];
    if (c == '\n') {
      if (maybe_block_header && quote == 0 && depth == 0) block_indent = indent;
      maybe_block_header = false;
      line_start = true;
      indent = 0;
      if (quote == 0) token_boundary = true;
      continue;
    }
    if (line_start && (c == ' ' || c == '\t')) {
      ++indent;
      continue;
    }
    if (line_start) {
      line_start = false;
      if (block_indent >= 0) {
        if (indent > block_indent) {  // block scalar content: skip the line
          size_t nl = y.find('\n', i);
          if (nl == std::string_view::npos) return false;
          i = nl - 1;
          continue;
        }
        block_indent = -1;
      }
      if (quote == 0 && c == ',' && indent == 0) return true;
    }
    if (quote != 0) {
      if (quote == '"' && c == '\\') {
        ++i;
      } else if (c == quote) {
        if (quote == '\'' && i + 1 < y.size() && y[i + 1] == '\'') {
          ++i;
        } else {
          quote = 0;
          token_boundary = depth == 0;
        }
      }
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r') continue;
    if (c == '#' && (i == 0 || y[i - 1] == ' ' || y[i - 1] == '\t' || y[i - 1] == '\n')) {
      size_t nl = y.find('\n', i);
      if (nl == std::string_view::npos) return false;
      i = nl - 1;
      continue;
    }
    const bool at_token = token_boundary || i == 0 || y[i - 1] == ' ' || y[i - 1] == '\t';
    if (c == ',' && depth == 0 && token_boundary) return true;
    token_boundary = false;
    maybe_block_header = false;
    if (at_token && (c == '\'' || c == '"')) {
      quote = c;
    } else if (c == '[' || c == '{') {
      if (at_token || depth > 0) ++depth;
    } else if ((c == ']' || c == '}') && depth > 0) {
      if (--depth == 0) token_boundary = true;
    } else if (at_token && (c == '&' || c == '!') && depth == 0) {
      while (i + 1 < y.size() && y[i + 1] != ' ' && y[i + 1] != '\n') ++i;
      token_boundary = true;
    } else if (at_token && depth == 0 && (y.substr(i, 3) == "---" || y.substr(i, 3) == "...")) {
      i += 2;
      token_boundary = true;
    } else if (at_token && (c == '|' || c == '>') && depth == 0) {
      maybe_block_header = true;
      while (i + 1 < y.size() && y[i + 1] != '\n' && y[i + 1] != '#') ++i;
    }
  }
  return false;
}

}  // namespace

namespace codec_internal {

StatusOr<std::vector<YAML::Node>> LoadYaml(std::string_view yaml) {
  // YAML forbids C0 control characters other than tab, LF and CR; yaml-cpp 0.7 misreads NUL as an
  // end of input and can then hang, so refuse them up front.
  for (char c : yaml) {
    if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r') {
      return InvalidArgumentError("invalid YAML: control character in input");
    }
  }
  if (HasStrayFlowEntry(yaml)) {
    return InvalidArgumentError("invalid YAML: ',' outside a flow collection");
  }
  try {
    return YAML::LoadAll(std::string(yaml));
  } catch (const std::exception& e) {
    return InvalidArgumentError(std::string("invalid YAML: ") + e.what());
  } catch (...) {
    return InvalidArgumentError("invalid YAML");
  }
}

Status ConvertYamlNode(const YAML::Node& node, rapidjson::Document& doc) {
  YamlConverter conv(doc.GetAllocator());
  try {
    conv.Convert(node, doc, 1);
  } catch (const std::exception& e) {
    return InvalidArgumentError(std::string("invalid YAML: ") + e.what());
  }
  return conv.status;
}

}  // namespace codec_internal

namespace {

using codec_internal::ConvertYamlNode;
using codec_internal::LoadYaml;

template <class T>
void Emplace(Manifest& m, const Value& v, Status& status) {
  StatusOr<T> obj = DecodeValue<T>(v);
  if (!obj.ok()) {
    status = obj.status();
    return;
  }
  m.object = std::move(obj).value();
}

Status AppendManifest(const Value& v, std::vector<Manifest>& out, int depth) {
  if (!v.IsObject()) return InvalidArgumentError("expected an object");
  auto api = v.FindMember("apiVersion");
  auto kind = v.FindMember("kind");
  if (api == v.MemberEnd() || !api->value.IsString()) {
    return InvalidArgumentError("apiVersion: expected string");
  }
  if (kind == v.MemberEnd() || !kind->value.IsString()) {
    return InvalidArgumentError("kind: expected string");
  }
  std::string api_version(api->value.GetString(), api->value.GetStringLength());
  std::string k(kind->value.GetString(), kind->value.GetStringLength());
  if (k.ends_with("List") && depth == 0) {
    auto items = v.FindMember("items");
    if (items != v.MemberEnd() && items->value.IsArray()) {
      size_t i = 0;
      for (const Value& item : items->value.GetArray()) {
        Status s = AppendManifest(item, out, depth + 1);
        if (!s.ok()) return s.WithPrefix("items[" + std::to_string(i) + "]");
        ++i;
      }
      return OkStatus();
    }
  }
  if (Status s = CheckApiVersion(api_version, k); !s.ok()) return s;
  if (api_version != "resource.k8s.io/v1" && api_version.starts_with("resource.k8s.io/")) {
    // Older served versions are read as the API server would store them: converted to v1.
    rapidjson::Document converted;
    converted.CopyFrom(v, converted.GetAllocator());
    if (Status s = ConvertResourceToV1(converted, converted.GetAllocator()); !s.ok()) return s;
    return AppendManifest(converted, out, depth);
  }
  Manifest m;
  m.api_version = api_version;
  m.kind = k;
  m.raw_json = Compact(v);
  Status status;
  if (api_version == "v1") {
    if (k == "Pod") Emplace<Pod>(m, v, status);
    if (k == "Node") Emplace<Node>(m, v, status);
  } else if (api_version == "resource.k8s.io/v1") {
    if (k == "DeviceClass") Emplace<DeviceClass>(m, v, status);
    if (k == "ResourceClaim") Emplace<ResourceClaim>(m, v, status);
    if (k == "ResourceClaimTemplate") Emplace<ResourceClaimTemplate>(m, v, status);
    if (k == "ResourceSlice") Emplace<ResourceSlice>(m, v, status);
    if (k == "DeviceTaintRule") Emplace<DeviceTaintRule>(m, v, status);
  }
  if (!status.ok()) return status;
  out.push_back(std::move(m));
  return OkStatus();
}

}  // namespace

StatusOr<std::string> YamlToJson(std::string_view yaml) {
  if (LooksLikeJson(yaml)) {
    rapidjson::Document doc;
    if (Status s = ParseJson(yaml, doc); !s.ok()) return s;
    return Compact(doc);
  }
  StatusOr<std::vector<YAML::Node>> docs = LoadYaml(yaml);
  if (!docs.ok()) return docs.status();
  if (docs->size() != 1) {
    return InvalidArgumentError("expected exactly one YAML document, got " +
                                std::to_string(docs->size()));
  }
  rapidjson::Document doc;
  if (Status s = ConvertYamlNode((*docs)[0], doc); !s.ok()) return s;
  return Compact(doc);
}

StatusOr<std::vector<Manifest>> DecodeManifests(std::string_view yaml) {
  if (LooksLikeJson(yaml)) {
    rapidjson::Document doc;
    if (Status s = ParseJson(yaml, doc); !s.ok()) return s;
    std::vector<Manifest> out;
    if (Status s = AppendManifest(doc, out, 0); !s.ok()) return s;
    return out;
  }
  StatusOr<std::vector<YAML::Node>> docs = LoadYaml(yaml);
  if (!docs.ok()) return docs.status();
  std::vector<Manifest> out;
  for (size_t i = 0; i < docs->size(); ++i) {
    const YAML::Node& node = (*docs)[i];
    if (!node.IsDefined() || node.IsNull()) continue;  // empty document
    rapidjson::Document doc;
    std::string prefix = "document " + std::to_string(i + 1);
    if (Status s = ConvertYamlNode(node, doc); !s.ok()) return s.WithPrefix(prefix);
    if (Status s = AppendManifest(doc, out, 0); !s.ok()) return s.WithPrefix(prefix);
  }
  return out;
}

}  // namespace draco::api
