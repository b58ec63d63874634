// Protobuf objects, lists and watch events as k8sclient Objects (proto_json.h).
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "k8sclient/proto_json.h"
#include "k8sclient/proto_wire.h"

namespace draco::k8s {
namespace {

using proto_internal::Bad;
using proto_internal::Envelope;
using proto_internal::Item;
using proto_internal::ReadEnvelope;
using proto_internal::Reader;
using proto_internal::Scan;
using proto_internal::TranscodeMembers;
using Field = ProtoSchema::Field;
using Message = ProtoSchema::Message;
using Type = ProtoSchema::Type;
using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

// The metadata an Object keeps, from the bytes of a metav1.ObjectMeta.
Status ReadMeta(std::string_view data, Object::Fields& f) {
  std::vector<Item> items;
  if (auto s = Scan(data, items); !s.ok()) return s;
  for (const auto& it : items) {
    if (it.wire != 2) continue;
    switch (it.number) {
      case 1:
        f.name = std::string(it.data);
        break;
      case 3:
        f.namespace_name = std::string(it.data);
        break;
      case 5:
        f.uid = std::string(it.data);
        break;
      case 6:
        f.resource_version = std::string(it.data);
        break;
      case 9:
        f.has_deletion_timestamp = !it.data.empty();
        break;
      case 11:
      case 12: {
        std::vector<Item> entry;
        if (auto s = Scan(it.data, entry); !s.ok()) return s;
        std::string key, value;
        for (const auto& e : entry) {
          if (e.wire != 2) return Bad("bad label or annotation");
          if (e.number == 1) key = std::string(e.data);
          if (e.number == 2) value = std::string(e.data);
        }
        (it.number == 11 ? f.labels : f.annotations)[std::move(key)] = std::move(value);
        break;
      }
      default:
        break;
    }
  }
  return OkStatus();
}

// `raw` (a `msg`) as JSON text, "kind" and "apiVersion" first when given, and as an Object when
// `fields` is set (its metadata read from field 1, ObjectMeta in every kind).
StatusOr<std::string> Transcode(const ProtoSchema& schema, const Message& msg, std::string_view raw,
                                std::string_view api_version, std::string_view kind,
                                Object::Fields* fields) {
  rapidjson::StringBuffer sb;
  sb.Reserve(raw.size() * 2 + 64);
  Writer w(sb);
  w.StartObject();
  if (!kind.empty()) {
    w.Key("kind");
    w.String(kind.data(), static_cast<rapidjson::SizeType>(kind.size()), true);
    w.Key("apiVersion");
    w.String(api_version.data(), static_cast<rapidjson::SizeType>(api_version.size()), true);
  }
  if (auto s = TranscodeMembers(msg, raw, w, schema.options().drop_managed_fields); !s.ok()) {
    return s;
  }
  w.EndObject();
  if (fields != nullptr) {
    Reader r(raw);
    while (!r.done()) {
      Item it;
      if (auto s = r.Next(it); !s.ok()) return s;
      if (it.number == 1 && it.wire == 2) {
        if (auto s = ReadMeta(it.data, *fields); !s.ok()) return s;
      }
    }
  }
  return std::string(sb.GetString(), sb.GetSize());
}

// An encoded object's envelope and the schema's message for its kind.
struct Opened {
  Envelope env;
  const Message* msg = nullptr;
};
StatusOr<Opened> Open(const ProtoSchema& schema, std::string_view encoded) {
  auto env = ReadEnvelope(encoded);
  if (!env.ok()) return env.status();
  const Message* msg = schema.FindKind(env->api_version, env->kind);
  if (msg == nullptr) {
    return Bad("kind " + std::string(env->api_version) + " " + std::string(env->kind) +
               " is not in the schema");
  }
  return Opened{*env, msg};
}

}  // namespace

StatusOr<std::string> ProtoObjectToJson(const ProtoSchema& schema, std::string_view encoded) {
  auto o = Open(schema, encoded);
  if (!o.ok()) return o.status();
  return Transcode(schema, *o->msg, o->env.raw, o->env.api_version, o->env.kind, nullptr);
}

StatusOr<ObjectPtr> ProtoObjectToObject(const ProtoSchema& schema, std::string_view encoded) {
  auto o = Open(schema, encoded);
  if (!o.ok()) return o.status();
  Object::Fields f;
  auto json = Transcode(schema, *o->msg, o->env.raw, o->env.api_version, o->env.kind, &f);
  if (!json.ok()) return json.status();
  f.api_version = std::string(o->env.api_version);
  f.kind = std::string(o->env.kind);
  return Object::FromParts(std::move(json).value(), std::move(f));
}

std::string ProtoObjectName(std::string_view encoded) {
  auto env = ReadEnvelope(encoded);
  if (!env.ok()) return "";
  Reader r(env->raw);
  while (!r.done()) {
    Item it;
    if (!r.Next(it).ok()) return "";
    Object::Fields f;
    if (it.number == 1 && it.wire == 2 && ReadMeta(it.data, f).ok()) return f.name;
  }
  return "";
}

StatusOr<ObjectList> ProtoListToObjects(const ProtoSchema& schema, std::string_view encoded) {
  auto o = Open(schema, encoded);
  if (!o.ok()) return o.status();
  const Field* items_field = o->msg->Find(2);
  if (items_field == nullptr || items_field->type != Type::kMessage || !items_field->repeated) {
    return Bad(std::string(o->env.kind) + " is not a list");
  }
  std::vector<Item> items;
  if (auto s = Scan(o->env.raw, items); !s.ok()) return s;
  ObjectList out;
  out.items.reserve(items.size());
  for (const auto& it : items) {
    if (it.number == 1 && it.wire == 2) {
      std::vector<Item> meta;
      if (auto s = Scan(it.data, meta); !s.ok()) return s;
      for (const auto& m : meta) {
        if (m.number == 2 && m.wire == 2) out.resource_version = std::string(m.data);
        if (m.number == 3 && m.wire == 2) out.continue_token = std::string(m.data);
        if (m.number == 4 && m.wire == 0) out.remaining_item_count = static_cast<int64_t>(m.value);
      }
    } else if (it.number == 2 && it.wire == 2) {
      Object::Fields f;
      auto json = Transcode(schema, *items_field->message, it.data, "", "", &f);
      if (!json.ok()) return json.status();
      out.items.push_back(Object::FromParts(std::move(json).value(), std::move(f)));
    } else {
      return Bad("field " + std::to_string(it.number) + " of " + std::string(o->env.kind) +
                 " is not understood");
    }
  }
  return out;
}

StatusOr<ProtoWatchEvent> DecodeProtoWatchEvent(const ProtoSchema& schema, std::string_view frame) {
  std::vector<Item> items;
  if (auto s = Scan(frame, items); !s.ok()) return s;
  ProtoWatchEvent ev;
  std::string_view object;
  for (const auto& it : items) {
    if (it.wire != 2) return Bad("bad watch event");
    if (it.number == 1) {
      ev.type = std::string(it.data);
    } else if (it.number == 2) {
      std::vector<Item> raw;
      if (auto s = Scan(it.data, raw); !s.ok()) return s;
      for (const auto& r : raw) {
        if (r.number == 1 && r.wire == 2) object = r.data;
      }
    }
  }
  if (ev.type.empty()) return Bad("watch event without type");
  if (ev.type == "ERROR") {
    auto json = ProtoObjectToJson(schema, object);
    if (!json.ok()) return json.status();
    ev.object_json = std::move(json).value();
    return ev;
  }
  auto obj = ProtoObjectToObject(schema, object);
  if (!obj.ok()) return obj.status();
  ev.object = std::move(obj).value();
  return ev;
}

}  // namespace draco::k8s
