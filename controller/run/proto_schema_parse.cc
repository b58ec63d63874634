#include <spdlog/spdlog.h>

#include "controller/run/proto_schema.h"

namespace draco::run {

namespace {

std::shared_ptr<const k8s::ProtoSchema> ParseOnce(bool drop_managed_fields) {
  k8s::ProtoSchema::Options o;
  o.drop_managed_fields = drop_managed_fields;
  auto parsed = k8s::ProtoSchema::Parse(KubeProtoSchemaText(), o);
  if (!parsed.ok()) {
    spdlog::error("built-in protobuf schema: {}; reading JSON only", parsed.status().message());
    return nullptr;
  }
  return std::move(parsed).value();
}

}  // namespace

std::shared_ptr<const k8s::ProtoSchema> KubeProtoSchema(bool drop_managed_fields) {
  static const std::shared_ptr<const k8s::ProtoSchema> kExact = ParseOnce(false);
  static const std::shared_ptr<const k8s::ProtoSchema> kDropping = ParseOnce(true);
  return drop_managed_fields ? kDropping : kExact;
}

}  // namespace draco::run
