#include <spdlog/spdlog.h>

#include "controller/run/proto_schema.h"

namespace draco::run {

std::shared_ptr<const k8s::ProtoSchema> KubeProtoSchema() {
  static const std::shared_ptr<const k8s::ProtoSchema> kSchema = [] {
    auto parsed = k8s::ProtoSchema::Parse(KubeProtoSchemaText());
    if (!parsed.ok()) {
      spdlog::error("built-in protobuf schema: {}; reading JSON only", parsed.status().message());
      return std::shared_ptr<const k8s::ProtoSchema>();
    }
    return std::move(parsed).value();
  }();
  return kSchema;
}

}  // namespace draco::run
