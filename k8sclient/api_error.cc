#include "k8sclient/api_error.h"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace draco::k8s {
namespace {

constexpr std::string_view kTailMarker = " k8s-status:";

std::string Str(const rapidjson::Value& obj, const char* field) {
  if (!obj.IsObject()) return {};
  auto it = obj.FindMember(field);
  if (it == obj.MemberEnd() || !it->value.IsString()) return {};
  return {it->value.GetString(), it->value.GetStringLength()};
}

int Int(const rapidjson::Value& obj, const char* field) {
  if (!obj.IsObject()) return 0;
  auto it = obj.FindMember(field);
  if (it == obj.MemberEnd() || !it->value.IsInt()) return 0;
  return it->value.GetInt();
}

// Reason for a response that carried no metav1.Status (client-go NewGenericServerResponse).
std::string ReasonForCode(int code) {
  switch (code) {
    case 400:
      return "BadRequest";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "NotFound";
    case 405:
      return "MethodNotAllowed";
    case 406:
      return "NotAcceptable";
    case 409:
      return "Conflict";
    case 410:
      return "Gone";
    case 413:
      return "RequestEntityTooLarge";
    case 415:
      return "UnsupportedMediaType";
    case 422:
      return "Invalid";
    case 429:
      return "TooManyRequests";
    case 500:
      return "InternalError";
    case 503:
      return "ServiceUnavailable";
    case 504:
      return "Timeout";
    default:
      return "Unknown";
  }
}

StatusCode CodeFor(int http, const std::string& reason) {
  if (reason == "AlreadyExists") return StatusCode::kAlreadyExists;
  if (reason == "Conflict") return StatusCode::kAborted;
  if (reason == "Expired" || reason == "Gone") return StatusCode::kOutOfRange;
  if (reason == "ServerTimeout" || reason == "Timeout") return StatusCode::kDeadlineExceeded;
  if (reason == "NotFound") return StatusCode::kNotFound;
  if (reason == "Invalid") return StatusCode::kInvalidArgument;
  switch (http) {
    case 400:
    case 406:
    case 413:
    case 415:
    case 422:
      return StatusCode::kInvalidArgument;
    case 401:
      return StatusCode::kUnauthenticated;
    case 403:
      return StatusCode::kPermissionDenied;
    case 404:
      return StatusCode::kNotFound;
    case 405:
      return StatusCode::kUnimplemented;
    case 409:
      return StatusCode::kAborted;
    case 410:
      return StatusCode::kOutOfRange;
    case 429:
      return StatusCode::kResourceExhausted;
    case 500:
      return StatusCode::kInternal;
    case 502:
    case 503:
      return StatusCode::kUnavailable;
    case 504:
      return StatusCode::kDeadlineExceeded;
    default:
      return http >= 500 ? StatusCode::kUnavailable : StatusCode::kUnknown;
  }
}

void FillFromStatusObject(const rapidjson::Value& st, ApiError& e) {
  if (!st.IsObject()) return;
  if (Str(st, "kind") != "Status" && !st.HasMember("reason") && !st.HasMember("code")) return;
  if (int code = Int(st, "code"); code != 0) e.http_code = code;
  e.reason = Str(st, "reason");
  if (std::string m = Str(st, "message"); !m.empty()) e.message = std::move(m);
  auto details = st.FindMember("details");
  if (details != st.MemberEnd() && details->value.IsObject()) {
    const rapidjson::Value& d = details->value;
    e.details_name = Str(d, "name");
    e.details_group = Str(d, "group");
    e.details_kind = Str(d, "kind");
    if (int ra = Int(d, "retryAfterSeconds"); ra > 0) e.retry_after_seconds = ra;
    auto causes = d.FindMember("causes");
    if (causes != d.MemberEnd() && causes->value.IsArray()) {
      for (const auto& c : causes->value.GetArray()) {
        e.causes.push_back({Str(c, "reason"), Str(c, "message"), Str(c, "field")});
      }
    }
  }
}

}  // namespace

ApiError DecodeApiError(int http_code, std::string_view body,
                        std::optional<int> retry_after_header) {
  ApiError e;
  e.http_code = http_code;
  rapidjson::Document d;
  d.Parse(body.data(), body.size());
  if (!d.HasParseError() && d.IsObject()) FillFromStatusObject(d, e);
  // The HTTP status line is authoritative for the code (client-go does the same when they differ).
  e.http_code = http_code;
  if (e.reason.empty()) e.reason = ReasonForCode(http_code);
  if (e.message.empty()) {
    std::string_view snippet = body.substr(0, 512);
    e.message = "the server responded with HTTP " + std::to_string(http_code) +
                (snippet.empty() ? std::string() : ": " + std::string(snippet));
  }
  if (retry_after_header.has_value() && *retry_after_header > 0 && e.retry_after_seconds == 0) {
    e.retry_after_seconds = *retry_after_header;
  }
  return e;
}

ApiError DecodeApiErrorObject(std::string_view status_json) {
  ApiError e;
  rapidjson::Document d;
  d.Parse(status_json.data(), status_json.size());
  if (!d.HasParseError() && d.IsObject()) FillFromStatusObject(d, e);
  if (e.http_code == 0) e.http_code = 500;
  if (e.reason.empty()) e.reason = ReasonForCode(e.http_code);
  if (e.message.empty()) {
    e.message = "watch ERROR event: " + std::string(status_json.substr(0, 512));
  }
  return e;
}

Status ApiError::ToStatus() const {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.StartObject();
  w.Key("code");
  w.Int(http_code);
  w.Key("reason");
  w.String(reason.c_str(), static_cast<rapidjson::SizeType>(reason.size()));
  if (retry_after_seconds > 0) {
    w.Key("retryAfterSeconds");
    w.Int(retry_after_seconds);
  }
  auto opt = [&w](const char* k, const std::string& v) {
    if (v.empty()) return;
    w.Key(k);
    w.String(v.c_str(), static_cast<rapidjson::SizeType>(v.size()));
  };
  opt("name", details_name);
  opt("group", details_group);
  opt("kind", details_kind);
  if (!causes.empty()) {
    w.Key("causes");
    w.StartArray();
    for (const auto& c : causes) {
      w.StartObject();
      opt("reason", c.type);
      opt("message", c.message);
      opt("field", c.field);
      w.EndObject();
    }
    w.EndArray();
  }
  w.EndObject();
  std::string msg = message;
  msg.append(kTailMarker).append(buf.GetString(), buf.GetSize());
  return {CodeFor(http_code, reason), std::move(msg)};
}

std::optional<ApiError> ApiError::FromStatus(const Status& status) {
  if (status.ok()) return std::nullopt;
  const std::string& m = status.message();
  size_t pos = m.rfind(kTailMarker);
  if (pos == std::string::npos) return std::nullopt;
  const std::string_view message = m;
  std::string_view tail = message.substr(pos + kTailMarker.size());
  rapidjson::Document d;
  d.Parse(tail.data(), tail.size());
  if (d.HasParseError() || !d.IsObject()) return std::nullopt;
  ApiError e;
  e.http_code = Int(d, "code");
  e.reason = Str(d, "reason");
  e.message = m.substr(0, pos);
  e.retry_after_seconds = Int(d, "retryAfterSeconds");
  e.details_name = Str(d, "name");
  e.details_group = Str(d, "group");
  e.details_kind = Str(d, "kind");
  auto causes = d.FindMember("causes");
  if (causes != d.MemberEnd() && causes->value.IsArray()) {
    for (const auto& c : causes->value.GetArray()) {
      e.causes.push_back({Str(c, "reason"), Str(c, "message"), Str(c, "field")});
    }
  }
  return e;
}

namespace {
bool ReasonOrCode(const Status& s, std::string_view reason, int http) {
  if (s.ok()) return false;
  auto e = ApiError::FromStatus(s);
  if (!e) return false;
  if (!e->reason.empty() && e->reason == reason) return true;
  return http != 0 && e->http_code == http && (e->reason.empty() || e->reason == "Unknown");
}
}  // namespace

bool IsNotFound(const Status& s) { return s.code() == StatusCode::kNotFound; }
bool IsAlreadyExists(const Status& s) { return s.code() == StatusCode::kAlreadyExists; }
bool IsConflict(const Status& s) {
  if (s.code() != StatusCode::kAborted) return false;
  auto e = ApiError::FromStatus(s);
  return !e || e->http_code == 409;
}
bool IsGone(const Status& s) {
  if (s.code() != StatusCode::kOutOfRange) return false;
  auto e = ApiError::FromStatus(s);
  return !e || e->http_code == 410 || e->reason == "Gone" || e->reason == "Expired";
}
bool IsResourceExpired(const Status& s) { return IsGone(s); }
bool IsTooLargeResourceVersion(const Status& s) {
  auto e = ApiError::FromStatus(s);
  if (!e) return false;
  for (const auto& c : e->causes) {
    if (c.type == "ResourceVersionTooLarge") return true;
  }
  return false;
}
bool IsRefusal(const Status& s) {
  auto e = ApiError::FromStatus(s);
  return e && e->http_code >= 400 && e->http_code < 500 && e->http_code != 408 &&
         e->http_code != 429;
}
bool IsTransportError(const Status& s) {
  return !s.ok() && !ApiError::FromStatus(s) &&
         (s.code() == StatusCode::kUnavailable || s.code() == StatusCode::kDeadlineExceeded);
}
bool IsRetryable(const Status& s) {
  if (IsTransportError(s)) return true;
  auto e = ApiError::FromStatus(s);
  return e && (e->http_code == 408 || e->http_code == 429 || e->http_code >= 500);
}
bool IsInvalid(const Status& s) { return ReasonOrCode(s, "Invalid", 422); }
bool IsBadRequest(const Status& s) { return ReasonOrCode(s, "BadRequest", 400); }
bool IsForbidden(const Status& s) { return s.code() == StatusCode::kPermissionDenied; }
bool IsUnauthorized(const Status& s) { return s.code() == StatusCode::kUnauthenticated; }
bool IsTooManyRequests(const Status& s) { return s.code() == StatusCode::kResourceExhausted; }
bool IsServerTimeout(const Status& s) { return ReasonOrCode(s, "ServerTimeout", 0); }
bool IsTimeout(const Status& s) { return ReasonOrCode(s, "Timeout", 504); }
bool IsInternalError(const Status& s) { return ReasonOrCode(s, "InternalError", 500); }
bool IsServiceUnavailable(const Status& s) { return ReasonOrCode(s, "ServiceUnavailable", 503); }

std::optional<int> RetryAfterSeconds(const Status& s) {
  auto e = ApiError::FromStatus(s);
  if (!e || e->retry_after_seconds <= 0) return std::nullopt;
  return e->retry_after_seconds;
}

std::vector<StatusCause> Causes(const Status& s) {
  auto e = ApiError::FromStatus(s);
  if (!e) return {};
  return e->causes;
}

}  // namespace draco::k8s
