// Object: an immutable, shared, schema-free Kubernetes object.
//
// The client and the cache know nothing of concrete kinds. An Object keeps the object's exact JSON
// text plus the metadata the machinery needs (namespace, name, uid, resourceVersion, labels,
// annotations, kind). Typed layers (e.g. controller/api) decode json() or doc() with their own
// codec. The text is the canonical representation because it is compact (a parsed RapidJSON tree
// costs several times the text) and it is what a codec wants anyway; doc() parses it lazily, once.
//
// Objects are immutable after construction and shared via ObjectPtr; every accessor is
// thread-safe. Nothing here throws.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>

#include "base/status.h"

namespace draco::k8s {

class Object;
using ObjectPtr = std::shared_ptr<const Object>;

class Object {
 public:
  // Parses `json`; it must be a JSON object. Missing metadata fields are left empty.
  static StatusOr<ObjectPtr> Parse(std::string json);
  // Serializes `value` (which must be a JSON object) and extracts its metadata.
  static StatusOr<ObjectPtr> FromValue(const rapidjson::Value& value);
  // The metadata a producer that already knows it hands over with the JSON text (the protobuf
  // transcoder, proto_json.h): no parse. The caller vouches that they match the text.
  struct Fields {
    std::string api_version, kind, namespace_name, name, uid, resource_version;
    std::map<std::string, std::string> labels, annotations;
    bool has_deletion_timestamp = false;
  };
  static ObjectPtr FromParts(std::string json, Fields fields);

  Object(const Object&) = delete;
  Object& operator=(const Object&) = delete;
  ~Object() = default;

  const std::string& json() const { return json_; }
  const std::string& api_version() const { return api_version_; }
  const std::string& kind() const { return kind_; }
  const std::string& namespace_name() const { return namespace_; }
  const std::string& name() const { return name_; }
  const std::string& uid() const { return uid_; }
  const std::string& resource_version() const { return resource_version_; }
  const std::map<std::string, std::string>& labels() const { return labels_; }
  const std::map<std::string, std::string>& annotations() const { return annotations_; }
  bool has_deletion_timestamp() const { return has_deletion_timestamp_; }

  // "namespace/name", or "name" for cluster-scoped objects (client-go MetaNamespaceKeyFunc).
  std::string Key() const;

  // The parsed document, built on first use. Valid as long as this Object lives.
  const rapidjson::Document& doc() const;

 private:
  Object() = default;
  void ExtractMetadata(const rapidjson::Value& v);

  std::string json_;
  std::string api_version_;
  std::string kind_;
  std::string namespace_;
  std::string name_;
  std::string uid_;
  std::string resource_version_;
  std::map<std::string, std::string> labels_;
  std::map<std::string, std::string> annotations_;
  bool has_deletion_timestamp_ = false;

  mutable std::once_flag doc_once_;
  mutable std::unique_ptr<rapidjson::Document> doc_;
};

// A page of a LIST response: items plus the list metadata.
struct ObjectList {
  std::string resource_version;
  std::string continue_token;
  // metadata.remainingItemCount when the server reported it, else -1.
  int64_t remaining_item_count = -1;
  std::vector<ObjectPtr> items;
};

// Parses a LIST response body (any *List kind).
StatusOr<ObjectList> ParseObjectList(std::string_view json);

// Compact serialization of a RapidJSON value.
std::string ToJson(const rapidjson::Value& value);

}  // namespace draco::k8s
