#include "controller/admission/review.h"

#include <utility>
#include <vector>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "controller/admission/certs.h"
#include "controller/admission/gate.h"
#include "controller/api/codec.h"

namespace draco::admission {
namespace {

constexpr std::string_view kReviewApiVersion = "admission.k8s.io/v1";

// Reads an optional string member; InvalidArgument when present with another type.
Status OptString(const rapidjson::Value& obj, const char* member, const std::string& path,
                 std::string& out) {
  auto it = obj.FindMember(member);
  if (it == obj.MemberEnd() || it->value.IsNull()) return OkStatus();
  if (!it->value.IsString()) return InvalidArgumentError(path + ": expected string");
  out.assign(it->value.GetString(), it->value.GetStringLength());
  return OkStatus();
}

// True when `v` nests deeper than `limit` (checked without recursion, so that hostile input
// cannot exhaust the stack before the recursive writer below runs).
bool DeeperThan(const rapidjson::Value& v, int limit) {
  std::vector<std::pair<const rapidjson::Value*, int>> stack = {{&v, 1}};
  while (!stack.empty()) {
    auto [cur, depth] = stack.back();
    stack.pop_back();
    if (depth > limit) return true;
    if (cur->IsObject()) {
      for (auto it = cur->MemberBegin(); it != cur->MemberEnd(); ++it) {
        stack.emplace_back(&it->value, depth + 1);
      }
    } else if (cur->IsArray()) {
      for (const auto& e : cur->GetArray()) stack.emplace_back(&e, depth + 1);
    }
  }
  return false;
}

}  // namespace

StatusOr<AdmissionRequest> ParseAdmissionReview(std::string_view body) {
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseIterativeFlag | rapidjson::kParseStopWhenDoneFlag>(body.data(),
                                                                                body.size());
  if (doc.HasParseError()) {
    return InvalidArgumentError("AdmissionReview: not JSON (offset " +
                                std::to_string(doc.GetErrorOffset()) + ")");
  }
  if (!doc.IsObject()) return InvalidArgumentError("AdmissionReview: expected a JSON object");
  std::string api_version, kind;
  if (Status st = OptString(doc, "apiVersion", "apiVersion", api_version); !st.ok()) return st;
  if (Status st = OptString(doc, "kind", "kind", kind); !st.ok()) return st;
  if (api_version != kReviewApiVersion || kind != "AdmissionReview") {
    return InvalidArgumentError("expected apiVersion " + std::string(kReviewApiVersion) +
                                " kind AdmissionReview, got '" + api_version + "' '" + kind + "'");
  }
  auto req = doc.FindMember("request");
  if (req == doc.MemberEnd() || !req->value.IsObject()) {
    return InvalidArgumentError("AdmissionReview: request: expected object");
  }
  const rapidjson::Value& r = req->value;
  AdmissionRequest out;
  for (auto [member, field] :
       {std::pair{"uid", &out.uid}, std::pair{"operation", &out.operation},
        std::pair{"namespace", &out.namespace_name}, std::pair{"name", &out.name}}) {
    if (Status st = OptString(r, member, std::string("request.") + member, *field); !st.ok()) {
      return st;
    }
  }
  if (out.uid.empty()) return InvalidArgumentError("AdmissionReview: request.uid: required");
  if (auto k = r.FindMember("kind"); k != r.MemberEnd() && !k->value.IsNull()) {
    if (!k->value.IsObject()) return InvalidArgumentError("request.kind: expected object");
    for (auto [member, field] :
         {std::pair{"group", &out.kind_group}, std::pair{"version", &out.kind_version},
          std::pair{"kind", &out.kind}}) {
      if (Status st = OptString(k->value, member, std::string("request.kind.") + member, *field);
          !st.ok()) {
        return st;
      }
    }
  }
  if (auto o = r.FindMember("object"); o != r.MemberEnd() && !o->value.IsNull()) {
    if (!o->value.IsObject()) return InvalidArgumentError("request.object: expected object");
    if (DeeperThan(o->value, api::kMaxNestingDepth)) {
      return InvalidArgumentError("request.object: nested deeper than " +
                                  std::to_string(api::kMaxNestingDepth) + " levels");
    }
    rapidjson::StringBuffer buf;
    rapidjson::Writer<rapidjson::StringBuffer> w(buf);
    o->value.Accept(w);
    out.object_json.assign(buf.GetString(), buf.GetSize());
  }
  return out;
}

std::string EncodeAdmissionResponse(const AdmissionResponse& response) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.StartObject();
  w.Key("apiVersion");
  w.String(kReviewApiVersion.data(), static_cast<rapidjson::SizeType>(kReviewApiVersion.size()));
  w.Key("kind");
  w.String("AdmissionReview");
  w.Key("response");
  w.StartObject();
  w.Key("uid");
  w.String(response.uid.c_str(), static_cast<rapidjson::SizeType>(response.uid.size()));
  w.Key("allowed");
  w.Bool(response.allowed);
  if (response.json_patch) {
    std::string patch = Base64Encode(*response.json_patch);
    w.Key("patchType");
    w.String("JSONPatch");
    w.Key("patch");
    w.String(patch.c_str(), static_cast<rapidjson::SizeType>(patch.size()));
  }
  if (!response.allowed) {
    w.Key("status");
    w.StartObject();
    w.Key("code");
    w.Int(response.status_code);
    w.Key("message");
    w.String(response.status_message.c_str(),
             static_cast<rapidjson::SizeType>(response.status_message.size()));
    w.EndObject();
  }
  w.EndObject();
  w.EndObject();
  return {buf.GetString(), buf.GetSize()};
}

ReviewResult HandleReview(std::string_view body) {
  if (body.size() > kMaxReviewBytes) {
    return {413, "AdmissionReview larger than " + std::to_string(kMaxReviewBytes) + " bytes\n"};
  }
  auto req = ParseAdmissionReview(body);
  if (!req.ok()) return {400, req.status().message() + "\n"};
  AdmissionResponse resp;
  resp.uid = req->uid;
  const bool pod_create = req->operation == "CREATE" && req->kind_group.empty() &&
                          req->kind_version == "v1" && req->kind == "Pod";
  bool gated = false;
  if (pod_create && !req->object_json.empty()) {
    auto pod = api::Decode<api::Pod>(req->object_json);
    if (!pod.ok()) {
      resp.allowed = false;
      resp.status_code = 400;
      resp.status_message =
          "draco admission webhook cannot decode the pod: " + pod.status().message();
    } else if (ShouldGate(*pod)) {
      resp.json_patch = GatePatch(*pod);
      gated = true;
    }
  }
  return {200, EncodeAdmissionResponse(resp), gated};
}

}  // namespace draco::admission
