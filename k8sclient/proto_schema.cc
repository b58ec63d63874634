// ProtoSchema::Parse and lookups (proto_json.h).
#include <charconv>
#include <utility>

#include <spdlog/spdlog.h>

#include "k8sclient/proto_json.h"

namespace draco::k8s {
namespace {

Status SchemaError(size_t line, const std::string& what) {
  return {StatusCode::kInvalidArgument,
          "protobuf schema line " + std::to_string(line) + ": " + what};
}

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    size_t at = s.find(sep, start);
    out.push_back(
        s.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) return out;
    start = at + 1;
  }
}

std::vector<std::string_view> Words(std::string_view s) {
  std::vector<std::string_view> out;
  for (auto w : Split(s, ' ')) {
    if (!w.empty()) out.push_back(w);
  }
  return out;
}

bool TypeFromCode(std::string_view code, ProtoSchema::Type& type) {
  using T = ProtoSchema::Type;
  static constexpr std::array<std::pair<std::string_view, T>, 11> kCodes = {
      {{"s", T::kString},
       {"b", T::kBool},
       {"i", T::kInt},
       {"u", T::kUint},
       {"d", T::kDouble},
       {"y", T::kBytes},
       {"t", T::kTime},
       {"mt", T::kMicroTime},
       {"q", T::kQuantity},
       {"ios", T::kIntOrString},
       {"raw", T::kRaw}}};
  for (const auto& [c, t] : kCodes) {
    if (c == code) {
      type = t;
      return true;
    }
  }
  return false;
}

}  // namespace

StatusOr<std::shared_ptr<const ProtoSchema>> ProtoSchema::Parse(std::string_view text,
                                                                const Options& options) {
  // NOLINTNEXTLINE(modernize-make-shared): the constructor is private
  std::shared_ptr<ProtoSchema> schema(new ProtoSchema());
  schema->options_ = options;
  struct Pending {
    Field* field;
    std::string message;
    size_t line;
  };
  std::vector<Pending> pending;
  std::vector<std::pair<std::string, std::string>> kinds;  // key, message
  size_t line_no = 0;
  for (auto line : Split(text, '\n')) {
    ++line_no;
    auto w = Words(line);
    if (w.empty() || w[0].starts_with('#')) continue;
    if (w[0] == "K") {
      if (w.size() != 4) return SchemaError(line_no, "K needs apiVersion, kind and message");
      kinds.emplace_back(std::string(w[1]) + " " + std::string(w[2]), std::string(w[3]));
      continue;
    }
    if (w[0] != "M" || w.size() < 2) return SchemaError(line_no, "expected K or M");
    auto msg = std::make_unique<Message>();
    msg->name = std::string(w[1]);
    msg->fields.reserve(w.size() - 2);
    for (size_t i = 2; i < w.size(); ++i) {
      auto parts = Split(w[i], ',');
      if (parts.size() != 4) {
        return SchemaError(line_no, "field needs 4 parts: " + std::string(w[i]));
      }
      Field f;
      auto [p, ec] = std::from_chars(parts[0].data(), parts[0].data() + parts[0].size(), f.number);
      if (ec != std::errc() || p != parts[0].data() + parts[0].size() || f.number == 0 ||
          f.number > 100000) {
        return SchemaError(line_no, "bad field number " + std::string(parts[0]));
      }
      f.json = std::string(parts[1]);
      std::string_view code = parts[2];
      if (code.starts_with("map:")) {
        f.map = true;
        code.remove_prefix(4);
      }
      std::string message;
      if (code.starts_with("m:")) {
        f.type = Type::kMessage;
        message = std::string(code.substr(2));
      } else if (!TypeFromCode(code, f.type)) {
        return SchemaError(line_no, "unknown type " + std::string(parts[2]));
      }
      for (char c : parts[3]) {
        switch (c) {
          case 'r':
            f.repeated = true;
            break;
          case 'p':
            f.pointer = true;
            break;
          case 'o':
            f.omitempty = true;
            break;
          case 'z':
            f.omitzero = true;
            break;
          case 'n':
            f.inline_fields = true;
            break;
          default:
            return SchemaError(line_no, std::string("unknown flag ") + c);
        }
      }
      if (f.inline_fields && (f.type != Type::kMessage || f.repeated || f.map)) {
        return SchemaError(line_no, "only a single message can be inline");
      }
      f.order = msg->fields.size();
      msg->fields.push_back(std::move(f));
      // &back() stays valid: fields were reserved and the vector lives on the heap with msg.
      if (!message.empty()) pending.push_back({&msg->fields.back(), std::move(message), line_no});
    }
    for (const auto& f : msg->fields) {
      if (f.number >= msg->by_number.size()) msg->by_number.resize(f.number + 1, nullptr);
      if (msg->by_number[f.number]) {
        return SchemaError(line_no, "field number " + std::to_string(f.number) + " twice");
      }
      msg->by_number[f.number] = &f;
    }
    std::string name = msg->name;
    if (!schema->messages_.emplace(std::move(name), std::move(msg)).second) {
      return SchemaError(line_no, "message defined twice");
    }
  }
  for (auto& p : pending) {
    auto it = schema->messages_.find(p.message);
    if (it == schema->messages_.end()) return SchemaError(p.line, "undefined message " + p.message);
    p.field->message = it->second.get();
  }
  for (auto& [key, message] : kinds) {
    auto it = schema->messages_.find(message);
    if (it == schema->messages_.end()) {
      std::string what = "kind ";
      what.append(key).append(": no message ").append(message);
      return SchemaError(0, what);
    }
    schema->kinds_[key] = it->second.get();
    if (key.ends_with(" Status")) schema->status_["Status"] = it->second.get();
  }
  return std::shared_ptr<const ProtoSchema>(std::move(schema));
}

const ProtoSchema::Message* ProtoSchema::FindKind(std::string_view api_version,
                                                  std::string_view kind) const {
  std::string key;
  key.reserve(api_version.size() + 1 + kind.size());
  key.append(api_version).append(" ").append(kind);
  auto it = kinds_.find(key);
  if (it != kinds_.end()) return it->second;
  auto st = status_.find(kind);
  return st == status_.end() ? nullptr : st->second;
}

bool ProtoSchema::ServesGroupVersion(std::string_view api_version) const {
  std::string prefix(api_version);
  prefix.push_back(' ');
  auto it = kinds_.lower_bound(prefix);
  return it != kinds_.end() && it->first.starts_with(prefix);
}

bool IsProtobufContentType(std::string_view content_type) {
  return content_type.starts_with(kProtobufContentType);
}

ProtoNegotiator::ProtoNegotiator(std::shared_ptr<const ProtoSchema> schema)
    : schema_(std::move(schema)) {}

bool ProtoNegotiator::Wants(const std::string& api_version) const {
  if (!schema_ || !schema_->ServesGroupVersion(api_version)) return false;
  std::lock_guard<std::mutex> l(mu_);
  return !refused_.contains(api_version);
}

void ProtoNegotiator::Refuse(const std::string& api_version, const Status& why) {
  std::lock_guard<std::mutex> l(mu_);
  if (refused_.insert(api_version).second) {
    spdlog::warn("k8sclient: reading {} as JSON from now on: its protobuf was not understood ({})",
                 api_version, why.message());
  }
}

}  // namespace draco::k8s
