#include "k8sclient/watch_decoder.h"

#include <cctype>

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include "k8sclient/api_error.h"

namespace draco::k8s {
namespace {
Status DataLossError(std::string m) { return {StatusCode::kDataLoss, std::move(m)}; }

// The event type named `name` (ADDED, MODIFIED, DELETED, BOOKMARK, ERROR); false if none.
bool EventType(std::string_view name, WatchEvent::Type& type) {
  for (auto t : {WatchEvent::Type::kAdded, WatchEvent::Type::kModified, WatchEvent::Type::kDeleted,
                 WatchEvent::Type::kBookmark, WatchEvent::Type::kError}) {
    if (WatchEventTypeName(t) == name) {
      type = t;
      return true;
    }
  }
  return false;
}
}  // namespace

std::string_view WatchEventTypeName(WatchEvent::Type t) {
  switch (t) {
    case WatchEvent::Type::kAdded:
      return "ADDED";
    case WatchEvent::Type::kModified:
      return "MODIFIED";
    case WatchEvent::Type::kDeleted:
      return "DELETED";
    case WatchEvent::Type::kBookmark:
      return "BOOKMARK";
    case WatchEvent::Type::kError:
      return "ERROR";
  }
  return "UNKNOWN";
}

StatusOr<WatchEvent> WatchDecoder::DecodeLine(std::string_view line) {
  rapidjson::Document d;
  d.Parse(line.data(), line.size());
  if (d.HasParseError()) {
    return DataLossError(std::string("watch event JSON parse error at offset ") +
                         std::to_string(d.GetErrorOffset()) + ": " +
                         rapidjson::GetParseError_En(d.GetParseError()));
  }
  if (!d.IsObject()) return DataLossError("watch event is not a JSON object");
  auto type_it = d.FindMember("type");
  auto obj_it = d.FindMember("object");
  if (type_it == d.MemberEnd() || !type_it->value.IsString()) {
    return DataLossError("watch event without type");
  }
  if (obj_it == d.MemberEnd() || !obj_it->value.IsObject()) {
    return DataLossError("watch event without object");
  }
  std::string_view type(type_it->value.GetString(), type_it->value.GetStringLength());
  WatchEvent ev;
  if (!EventType(type, ev.type)) {
    return DataLossError("unknown watch event type " + std::string(type));
  }
  if (ev.type == WatchEvent::Type::kError) {
    ev.error = DecodeApiErrorObject(ToJson(obj_it->value)).ToStatus();
    return ev;
  }
  auto obj = Object::FromValue(obj_it->value);
  if (!obj.ok()) return obj.status();
  ev.object = std::move(obj).value();
  return ev;
}

StatusOr<WatchEvent> WatchDecoder::DecodeFrame(const ProtoSchema& schema, std::string_view frame) {
  auto pe = DecodeProtoWatchEvent(schema, frame);
  if (!pe.ok()) return pe.status();
  WatchEvent ev;
  if (!EventType(pe->type, ev.type)) return DataLossError("unknown watch event type " + pe->type);
  if (ev.type == WatchEvent::Type::kError) {
    ev.error = DecodeApiErrorObject(pe->object_json).ToStatus();
    return ev;
  }
  ev.object = std::move(pe->object);
  return ev;
}

Status WatchDecoder::FeedFrames(std::string_view bytes, std::deque<WatchEvent>& out) {
  buf_.append(bytes);
  size_t pos = 0;
  Status result = OkStatus();
  while (buf_.size() - pos >= 4) {
    const auto* p = reinterpret_cast<const unsigned char*>(buf_.data() + pos);
    const size_t len = (size_t{p[0]} << 24) | (size_t{p[1]} << 16) | (size_t{p[2]} << 8) | p[3];
    if (len > kMaxLineBytes) {
      result = DataLossError("watch frame too long");
      break;
    }
    if (buf_.size() - pos - 4 < len) break;
    const std::string_view frames = buf_;
    auto ev = DecodeFrame(*proto_, frames.substr(pos + 4, len));
    pos += 4 + len;
    if (!ev.ok()) {
      result = ev.status();
      break;
    }
    out.push_back(std::move(ev).value());
  }
  if (!result.ok()) {
    buf_.clear();
    return result;
  }
  buf_.erase(0, pos);
  return OkStatus();
}

Status WatchDecoder::Feed(std::string_view bytes, std::deque<WatchEvent>& out) {
  if (proto_) return FeedFrames(bytes, out);
  size_t start = 0;
  while (start < bytes.size()) {
    size_t nl = bytes.find('\n', start);
    if (nl == std::string_view::npos) {
      buf_.append(bytes.substr(start));
      if (buf_.size() > kMaxLineBytes) return DataLossError("watch event line too long");
      return OkStatus();
    }
    std::string_view piece = bytes.substr(start, nl - start);
    start = nl + 1;
    std::string_view line = piece;
    if (!buf_.empty()) {
      buf_.append(piece);
      line = buf_;
    }
    // Tolerate blank lines and CRLF.
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    if (!line.empty()) {
      auto ev = DecodeLine(line);
      if (!ev.ok()) {
        buf_.clear();
        return ev.status();
      }
      out.push_back(std::move(ev).value());
    }
    buf_.clear();
  }
  return OkStatus();
}

Status WatchDecoder::Finish(std::deque<WatchEvent>& out) {
  if (proto_) {
    const bool partial = !buf_.empty();
    buf_.clear();
    return partial ? DataLossError("watch stream ended inside a frame") : OkStatus();
  }
  std::string_view line = buf_;
  while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) {
    line.remove_suffix(1);
  }
  if (line.empty()) {
    buf_.clear();
    return OkStatus();
  }
  auto ev = DecodeLine(line);
  buf_.clear();
  if (!ev.ok()) return ev.status();
  out.push_back(std::move(ev).value());
  return OkStatus();
}

}  // namespace draco::k8s
