// Internal to the codec (codec.h); include only from the codec_*.cc files. Holds what the codec's
// translation units share: the field lists, the visitor concept, the field path, the JSON decoder
// (a template, instantiated for every type) and the helpers defined in codec_decode.cc and
// codec_yaml.cc.
//
// Field lists map C++ members to JSON names, one Fields(V&, T&) overload per struct, in one
// codec_<group>_fields.inc file per API group. To add a group: write its .inc (same shape as the
// others), include it below next to the others, and list its types in codec_types.inc so that
// Decode/Encode/DecodeYaml are instantiated for them.
//
// Everything here is thread-safe (no shared state) and never throws.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <ranges>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <rapidjson/document.h>
#include <yaml-cpp/yaml.h>

#include "base/status.h"
#include "controller/api/codec.h"
#include "controller/api/policy_types.h"
#include "controller/api/storage_types.h"
#include "controller/api/types.h"
#include "controller/api/workload_types.h"

namespace draco::api::codec_internal {

using rapidjson::Value;
using Allocator = rapidjson::Document::AllocatorType;

// ---------------------------------------------------------------------------------------------
// Field lists: the single place that maps C++ members to JSON names.

#include "controller/api/codec_core_fields.inc"
#include "controller/api/codec_policy_fields.inc"
#include "controller/api/codec_resource_fields.inc"
#include "controller/api/codec_scheduling_fields.inc"

struct ProbeVisitor {
  template <class F>
  void operator()(std::string_view, F&) {}
};
template <class T>
concept ApiStruct = requires(T& t, ProbeVisitor& p) {
  Fields(p, t);
  t.unknown;
};
template <class T>
struct IsOptional : std::false_type {};
template <class T>
struct IsOptional<std::optional<T>> : std::true_type {};
template <class T>
struct IsVector : std::false_type {};
template <class T>
struct IsVector<std::vector<T>> : std::true_type {};
template <class T>
struct IsMap : std::false_type {};
template <class T>
struct IsMap<std::map<std::string, T>> : std::true_type {};

// Compact JSON text of `v`.
std::string Compact(const Value& v);

// A field path, built lazily while decoding: each segment lives on the decoder's stack and points
// to its parent; the text ("spec.devices.requests[0].name") is made only when decoding fails (a
// string per decoded field was a large share of decoding a watch event).
struct Path {
  const Path* parent = nullptr;
  std::string_view name;  // member name; unused when index >= 0
  int64_t index = -1;     // array index

  std::string Str() const {
    std::vector<const Path*> chain;
    for (const Path* p = this; p != nullptr && (p->parent != nullptr || !p->name.empty());
         p = p->parent) {
      chain.push_back(p);
    }
    std::string out;
    // Root first. (A reverse index loop: clang 14 cannot build ranges::reverse_view.)
    for (size_t i = chain.size(); i-- > 0;) {
      const Path* it = chain[i];
      if (it->index >= 0) {
        out += "[" + std::to_string(it->index) + "]";
      } else {
        if (!out.empty()) out += '.';
        out += it->name;
      }
    }
    return out;
  }
};

std::string_view TrimSpace(std::string_view s);
// The JSON number `v` as text (integers exactly; doubles in shortest round-trip form).
std::string NumberText(const Value& v);
// Nesting depth of a DOM value, computed without recursion.
int Depth(const Value& root);
// Parses `json` into `doc`; INVALID_ARGUMENT on a syntax error or nesting deeper than
// kMaxNestingDepth.
Status ParseJson(std::string_view json, rapidjson::Document& doc);
// Like kubectl's YAML-or-JSON decoder: input whose first non-blank character is '{' is JSON and is
// parsed with RapidJSON only. This also keeps malformed JSON away from yaml-cpp 0.7, which can loop
// forever on some broken flow collections (found by the codec fuzzer).
bool LooksLikeJson(std::string_view text);

// Loads every YAML document of `yaml`; INVALID_ARGUMENT on input yaml-cpp cannot (safely) parse.
StatusOr<std::vector<YAML::Node>> LoadYaml(std::string_view yaml);
// Converts one YAML document into `doc` (sigs.k8s.io/yaml scalar resolution, with the limits of
// codec.h).
Status ConvertYamlNode(const YAML::Node& node, rapidjson::Document& doc);

// ---------------------------------------------------------------------------------------------
// Decoding

class Decoder {
 public:
  Status status;

  void Fail(const Path& path, std::string_view what) {
    if (status.ok()) {
      std::string p = path.Str();
      status = InvalidArgumentError(p.empty() ? std::string(what) : p + ": " + std::string(what));
    }
  }

  void Decode(const Value& v, std::string& out, const Path& path) {
    if (!v.IsString()) return Fail(path, "expected string");
    out.assign(v.GetString(), v.GetStringLength());
  }
  void Decode(const Value& v, int64_t& out, const Path& path) {
    if (!v.IsInt64()) return Fail(path, "expected integer");
    out = v.GetInt64();
  }
  void Decode(const Value& v, bool& out, const Path& path) {
    if (!v.IsBool()) return Fail(path, "expected boolean");
    out = v.GetBool();
  }
  void Decode(const Value& v, Quantity& out, const Path& path) {
    std::string text;
    if (v.IsString()) {
      text = std::string(TrimSpace(std::string_view(v.GetString(), v.GetStringLength())));
    } else if (v.IsNumber()) {
      text = NumberText(v);
    } else {
      return Fail(path, "expected quantity string");
    }
    StatusOr<Quantity> q = Quantity::Parse(text);
    if (!q.ok()) return Fail(path, q.status().message());
    out = std::move(q).value();
  }
  void Decode(const Value& v, RawJson& out, const Path&) { out.json = Compact(v); }

  template <class T>
  void Decode(const Value& v, std::optional<T>& out, const Path& path) {
    out.emplace();
    Decode(v, *out, path);
  }
  template <class T>
  void Decode(const Value& v, std::vector<T>& out, const Path& path) {
    if (!v.IsArray()) return Fail(path, "expected array");
    out.clear();
    out.reserve(v.Size());
    int64_t i = 0;
    for (const Value& e : v.GetArray()) {
      T item{};
      Decode(e, item, Path{&path, {}, i++});
      if (!status.ok()) return;
      out.push_back(std::move(item));
    }
  }
  template <class T>
  void Decode(const Value& v, std::map<std::string, T>& out, const Path& path) {
    if (!v.IsObject()) return Fail(path, "expected object");
    out.clear();
    for (const auto& m : v.GetObject()) {
      std::string key(m.name.GetString(), m.name.GetStringLength());
      if (m.value.IsNull()) continue;
      T item{};
      Decode(m.value, item, Path{&path, key, -1});
      if (!status.ok()) return;
      out[key] = std::move(item);  // last duplicate wins, as in Go
    }
  }
  template <ApiStruct T>
  void Decode(const Value& v, T& out, const Path& path) {
    if (!v.IsObject()) return Fail(path, "expected object");
    FieldDecoder fd{*this, v, path, {}};
    Fields(fd, out);
    if (!status.ok()) return;
    out.unknown.members.clear();
    for (const auto& m : v.GetObject()) {
      std::string_view name(m.name.GetString(), m.name.GetStringLength());
      if (std::find(fd.known.begin(), fd.known.end(), name) == fd.known.end()) {
        out.unknown.members.emplace_back(std::string(name), Compact(m.value));
      }
    }
  }

 private:
  struct FieldDecoder {
    Decoder& d;
    const Value& obj;
    const Path& path;
    std::vector<std::string_view> known;
    template <class F>
    void operator()(std::string_view name, F& field) {
      known.push_back(name);
      if (!d.status.ok()) return;
      // Go uses the last of duplicate members; scan for it.
      const Value* found = nullptr;
      for (const auto& m : obj.GetObject()) {
        if (std::string_view(m.name.GetString(), m.name.GetStringLength()) == name) {
          found = &m.value;
        }
      }
      if (found == nullptr || found->IsNull()) return;
      d.Decode(*found, field, Path{&path, name, -1});
    }
  };
};

template <class T>
StatusOr<T> DecodeValue(const Value& v) {
  Decoder d;
  T out{};
  d.Decode(v, out, Path{});
  if (!d.status.ok()) return d.status;
  return out;
}

}  // namespace draco::api::codec_internal
