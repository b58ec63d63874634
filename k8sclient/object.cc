#include "k8sclient/object.h"

#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace draco::k8s {
namespace {

std::string GetString(const rapidjson::Value& obj, const char* field) {
  auto it = obj.FindMember(field);
  if (it == obj.MemberEnd() || !it->value.IsString()) return {};
  return {it->value.GetString(), it->value.GetStringLength()};
}

void GetStringMap(const rapidjson::Value& obj, const char* field,
                  std::map<std::string, std::string>& out) {
  auto it = obj.FindMember(field);
  if (it == obj.MemberEnd() || !it->value.IsObject()) return;
  for (const auto& m : it->value.GetObject()) {
    if (!m.value.IsString()) continue;
    out.emplace(std::string(m.name.GetString(), m.name.GetStringLength()),
                std::string(m.value.GetString(), m.value.GetStringLength()));
  }
}

}  // namespace

std::string ToJson(const rapidjson::Value& value) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buf);
  value.Accept(writer);
  return {buf.GetString(), buf.GetSize()};
}

void Object::ExtractMetadata(const rapidjson::Value& v) {
  api_version_ = GetString(v, "apiVersion");
  kind_ = GetString(v, "kind");
  auto meta = v.FindMember("metadata");
  if (meta == v.MemberEnd() || !meta->value.IsObject()) return;
  const rapidjson::Value& m = meta->value;
  namespace_ = GetString(m, "namespace");
  name_ = GetString(m, "name");
  uid_ = GetString(m, "uid");
  resource_version_ = GetString(m, "resourceVersion");
  GetStringMap(m, "labels", labels_);
  GetStringMap(m, "annotations", annotations_);
  auto dt = m.FindMember("deletionTimestamp");
  has_deletion_timestamp_ = dt != m.MemberEnd() && !dt->value.IsNull();
}

StatusOr<ObjectPtr> Object::Parse(std::string json) {
  rapidjson::Document d;
  d.Parse(json.data(), json.size());
  if (d.HasParseError()) {
    return InvalidArgumentError(std::string("object JSON parse error at offset ") +
                                std::to_string(d.GetErrorOffset()) + ": " +
                                rapidjson::GetParseError_En(d.GetParseError()));
  }
  if (!d.IsObject()) return InvalidArgumentError("object JSON is not an object");
  std::shared_ptr<Object> obj(new Object());
  obj->ExtractMetadata(d);
  obj->json_ = std::move(json);
  return ObjectPtr(std::move(obj));
}

ObjectPtr Object::FromParts(std::string json, Fields f) {
  std::shared_ptr<Object> obj(new Object());
  obj->json_ = std::move(json);
  obj->api_version_ = std::move(f.api_version);
  obj->kind_ = std::move(f.kind);
  obj->namespace_ = std::move(f.namespace_name);
  obj->name_ = std::move(f.name);
  obj->uid_ = std::move(f.uid);
  obj->resource_version_ = std::move(f.resource_version);
  obj->labels_ = std::move(f.labels);
  obj->annotations_ = std::move(f.annotations);
  obj->has_deletion_timestamp_ = f.has_deletion_timestamp;
  return obj;
}

StatusOr<ObjectPtr> Object::FromValue(const rapidjson::Value& value) {
  if (!value.IsObject()) return InvalidArgumentError("object is not a JSON object");
  std::shared_ptr<Object> obj(new Object());
  obj->ExtractMetadata(value);
  obj->json_ = ToJson(value);
  return ObjectPtr(std::move(obj));
}

std::string Object::Key() const {
  if (namespace_.empty()) return name_;
  std::string key;
  key.reserve(namespace_.size() + 1 + name_.size());
  key.append(namespace_).append("/").append(name_);
  return key;
}

const rapidjson::Document& Object::doc() const {
  std::call_once(doc_once_, [this] {
    doc_ = std::make_unique<rapidjson::Document>();
    // Parse() succeeded at construction time, or json_ came from our own writer.
    doc_->Parse(json_.data(), json_.size());
  });
  return *doc_;
}

StatusOr<ObjectList> ParseObjectList(std::string_view json) {
  rapidjson::Document d;
  d.Parse(json.data(), json.size());
  if (d.HasParseError()) {
    return InvalidArgumentError(std::string("list JSON parse error at offset ") +
                                std::to_string(d.GetErrorOffset()) + ": " +
                                rapidjson::GetParseError_En(d.GetParseError()));
  }
  if (!d.IsObject()) return InvalidArgumentError("list JSON is not an object");
  ObjectList out;
  auto meta = d.FindMember("metadata");
  if (meta != d.MemberEnd() && meta->value.IsObject()) {
    out.resource_version = GetString(meta->value, "resourceVersion");
    out.continue_token = GetString(meta->value, "continue");
    auto rem = meta->value.FindMember("remainingItemCount");
    if (rem != meta->value.MemberEnd() && rem->value.IsInt64()) {
      out.remaining_item_count = rem->value.GetInt64();
    }
  }
  auto items = d.FindMember("items");
  if (items == d.MemberEnd() || items->value.IsNull()) return out;
  if (!items->value.IsArray()) return InvalidArgumentError("list items is not an array");
  out.items.reserve(items->value.Size());
  for (const auto& item : items->value.GetArray()) {
    auto obj = Object::FromValue(item);
    if (!obj.ok()) return obj.status();
    out.items.push_back(std::move(obj).value());
  }
  return out;
}

}  // namespace draco::k8s
