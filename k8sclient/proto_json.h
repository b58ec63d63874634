// Protobuf responses from the API server, read as the JSON the server would have sent.
//
// Built-in kinds can be served as Kubernetes protobuf (Accept:
// application/vnd.kubernetes.protobuf): encoding it costs the API server a fraction of JSON, and
// its watch cache shares one encoding among every protobuf watcher (client-go's clientsets ask for
// protobuf by default, so a JSON watcher makes the server encode each event once more just for it).
// k8sclient keeps JSON text as its canonical object form (object.h), so a protobuf response is
// transcoded to that text here: the message is walked with a schema that names each field's JSON
// key and the JSON rules of its Go field (omitempty, omitzero, pointer, inline, special types),
// generated from k8s.io/api's Go types by tests/protoschema.
//
// The schema is data (k8sclient knows no kinds): the caller passes its text to ProtoSchema::Parse.
// Text format, one line each, `#` comments:
//   K <apiVersion> <kind> <message>          a kind served in protobuf and its message
//   M <message> <field> <field> ...          field = number,jsonName,type,flags
// type: s string, b bool, i signed varint, u unsigned varint, d double, y bytes (base64 in JSON),
//   t metav1.Time (RFC 3339, seconds), mt metav1.MicroTime (RFC 3339, microseconds),
//   q resource.Quantity (its string), ios intstr.IntOrString, raw runtime.RawExtension or
//   metav1.FieldsV1 (embedded JSON), m:<message>, map:<type> (string keys).
// flags: r repeated, p pointer (emitted when present, even if zero), o omitempty, z omitzero,
//   n inline (the message's fields are the parent's; its jsonName is empty).
//
// A response the schema does not cover completely - an unknown field number (a newer server), an
// unknown kind, a wire type that does not match, a RawExtension holding protobuf - is an error,
// never a lossy object: the caller falls back to JSON for that resource. Nothing here throws;
// ProtoSchema is immutable after Parse and safe to share between threads.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "k8sclient/object.h"

namespace draco::k8s {

inline constexpr std::string_view kProtobufContentType = "application/vnd.kubernetes.protobuf";

class ProtoSchema {
 public:
  enum class Type {
    kString,
    kBool,
    kInt,
    kUint,
    kDouble,
    kBytes,
    kTime,
    kMicroTime,
    kQuantity,
    kIntOrString,
    kRaw,
    kMessage
  };
  struct Message;
  struct Field {
    uint32_t number = 0;
    std::string json;
    Type type = Type::kString;
    bool map = false;  // map<string, type>: repeated entries {1: key, 2: value}
    bool repeated = false;
    bool pointer = false;
    bool omitempty = false;
    bool omitzero = false;
    bool inline_fields = false;
    const Message* message = nullptr;  // kMessage
    size_t order = 0;                  // position in the Go struct (JSON key order)
  };
  struct Message {
    std::string name;
    std::vector<Field> fields;            // in Go struct order
    std::vector<const Field*> by_number;  // index = field number (sparse; null where none)
    const Field* Find(uint32_t number) const {
      return number < by_number.size() ? by_number[number] : nullptr;
    }
  };

  // How objects are read with the schema.
  struct Options {
    // The top-level object's metadata.managedFields is left out of every object read (as
    // client-go's informers' TransformStripManagedFields does): often half of a pod's bytes, and
    // read by no controller. An Update built from such an object carries no managedFields, which
    // makes the API server keep the live ones. JSON responses are kept as the server sent them.
    bool drop_managed_fields = false;
  };

  // Parses the schema text; every message a field names must be defined.
  static StatusOr<std::shared_ptr<const ProtoSchema>> Parse(std::string_view text,
                                                            const Options& options);
  static StatusOr<std::shared_ptr<const ProtoSchema>> Parse(std::string_view text) {
    return Parse(text, Options{});
  }
  const Options& options() const { return options_; }

  // The message of `kind` served under `api_version`, or null. Status is found under any version.
  const Message* FindKind(std::string_view api_version, std::string_view kind) const;
  // Whether any kind of this group/version ("v1", "resource.k8s.io/v1") is in the schema.
  bool ServesGroupVersion(std::string_view api_version) const;

 private:
  Options options_;
  std::map<std::string, std::unique_ptr<Message>, std::less<>> messages_;
  std::map<std::string, const Message*, std::less<>> kinds_;   // "apiVersion kind"
  std::map<std::string, const Message*, std::less<>> status_;  // kind Status by any version
};

// An encoded object ("k8s\0" + runtime.Unknown{typeMeta, raw}) -> its JSON text, "kind" and
// "apiVersion" first (as the server writes them). Lists come out as the server's JSON lists.
StatusOr<std::string> ProtoObjectToJson(const ProtoSchema& schema, std::string_view encoded);

// The same as an Object whose metadata were read from the protobuf (no JSON parse).
StatusOr<ObjectPtr> ProtoObjectToObject(const ProtoSchema& schema, std::string_view encoded);

// metadata.name of an encoded object, without a schema ("" when there is none).
std::string ProtoObjectName(std::string_view encoded);

// An encoded *List -> its items as Objects (without kind and apiVersion, like the server's JSON
// lists) and its list metadata.
StatusOr<ObjectList> ProtoListToObjects(const ProtoSchema& schema, std::string_view encoded);

// One frame payload of a protobuf watch stream (metav1.WatchEvent{type, object: RawExtension
// holding an encoded object}) -> `type` and the object (an ERROR's Status as JSON text).
struct ProtoWatchEvent {
  std::string type;
  std::string object_json;  // for ERROR (a Status)
  ObjectPtr object;         // for every other type
};
StatusOr<ProtoWatchEvent> DecodeProtoWatchEvent(const ProtoSchema& schema, std::string_view frame);

// Whether a Content-Type header value names Kubernetes protobuf.
bool IsProtobufContentType(std::string_view content_type);

// Which reads and write answers a client asks in protobuf: those of group/versions the schema
// serves, until a response of that group/version could not be transcoded (then JSON for the
// client's lifetime, logged once). Thread-safe.
class ProtoNegotiator {
 public:
  static constexpr std::string_view kAcceptProtobuf =
      "application/vnd.kubernetes.protobuf, application/json";
  static constexpr std::string_view kAcceptJson = "application/json";

  // `schema` may be null: everything JSON.
  explicit ProtoNegotiator(std::shared_ptr<const ProtoSchema> schema);
  // `api_version`: "v1" for the core group, else "group/version".
  bool Wants(const std::string& api_version) const;
  void Refuse(const std::string& api_version, const Status& why);
  const std::shared_ptr<const ProtoSchema>& schema() const { return schema_; }

 private:
  std::shared_ptr<const ProtoSchema> schema_;
  mutable std::mutex mu_;
  std::set<std::string, std::less<>> refused_;
};

}  // namespace draco::k8s
