#include "controller/server/metrics_auth.h"

#include <array>
#include <cctype>
#include <utility>

#include <openssl/evp.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <spdlog/spdlog.h>

namespace draco::server {
namespace {

using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;

std::string Sha256(std::string_view in) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
  unsigned int len = 0;
  EVP_Digest(in.data(), in.size(), md.data(), &len, EVP_sha256(), nullptr);
  return {reinterpret_cast<const char*>(md.data()), len};
}

void WriteStrings(JsonWriter& w, const std::vector<std::string>& values) {
  w.StartArray();
  for (const auto& v : values) w.String(v.c_str(), static_cast<rapidjson::SizeType>(v.size()));
  w.EndArray();
}

std::vector<std::string> ReadStrings(const rapidjson::Value& v) {
  std::vector<std::string> out;
  if (!v.IsArray()) return out;
  for (const auto& s : v.GetArray()) {
    if (s.IsString()) out.emplace_back(s.GetString(), s.GetStringLength());
  }
  return out;
}

std::string StringField(const rapidjson::Value& obj, const char* name) {
  auto it = obj.FindMember(name);
  return it != obj.MemberEnd() && it->value.IsString()
             ? std::string(it->value.GetString(), it->value.GetStringLength())
             : "";
}

bool BoolField(const rapidjson::Value& obj, const char* name) {
  auto it = obj.FindMember(name);
  return it != obj.MemberEnd() && it->value.IsBool() && it->value.GetBool();
}

// The "status" object of a review the API server returned; InternalError when there is none.
StatusOr<const rapidjson::Value*> ReviewStatus(const rapidjson::Document& d,
                                               std::string_view kind) {
  if (d.HasParseError() || !d.IsObject()) {
    return InternalError(std::string(kind) + ": the API server's answer is not JSON");
  }
  auto it = d.FindMember("status");
  if (it == d.MemberEnd() || !it->value.IsObject()) {
    return InternalError(std::string(kind) + ": the API server's answer has no status");
  }
  return &it->value;
}

std::string TokenReviewBody(const std::string& token) {
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  w.StartObject();
  w.Key("apiVersion");
  w.String("authentication.k8s.io/v1");
  w.Key("kind");
  w.String("TokenReview");
  w.Key("spec");
  w.StartObject();
  w.Key("token");
  w.String(token.c_str(), static_cast<rapidjson::SizeType>(token.size()));
  w.EndObject();
  w.EndObject();
  return buf.GetString();
}

std::string AccessReviewBody(const UserInfo& user, std::string_view verb, std::string_view path) {
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  w.StartObject();
  w.Key("apiVersion");
  w.String("authorization.k8s.io/v1");
  w.Key("kind");
  w.String("SubjectAccessReview");
  w.Key("spec");
  w.StartObject();
  w.Key("user");
  w.String(user.username.c_str(), static_cast<rapidjson::SizeType>(user.username.size()));
  if (!user.uid.empty()) {
    w.Key("uid");
    w.String(user.uid.c_str(), static_cast<rapidjson::SizeType>(user.uid.size()));
  }
  w.Key("groups");
  WriteStrings(w, user.groups);
  if (!user.extra.empty()) {
    w.Key("extra");
    w.StartObject();
    for (const auto& [k, v] : user.extra) {
      w.Key(k.c_str(), static_cast<rapidjson::SizeType>(k.size()));
      WriteStrings(w, v);
    }
    w.EndObject();
  }
  w.Key("nonResourceAttributes");
  w.StartObject();
  w.Key("path");
  w.String(path.data(), static_cast<rapidjson::SizeType>(path.size()));
  w.Key("verb");
  w.String(verb.data(), static_cast<rapidjson::SizeType>(verb.size()));
  w.EndObject();
  w.EndObject();
  w.EndObject();
  return buf.GetString();
}

// The authorization cache key: every field of the access review, each length-prefixed.
std::string AccessKey(const UserInfo& user, std::string_view verb, std::string_view path) {
  std::string key;
  auto add = [&key](std::string_view s) {
    key += std::to_string(s.size());
    key += ':';
    key += s;
  };
  add(user.username);
  add(user.uid);
  add(std::to_string(user.groups.size()));
  for (const auto& g : user.groups) add(g);
  add(std::to_string(user.extra.size()));
  for (const auto& [k, v] : user.extra) {
    add(k);
    add(std::to_string(v.size()));
    for (const auto& s : v) add(s);
  }
  add(verb);
  add(path);
  return key;
}

}  // namespace

std::string BearerToken(std::string_view authorization) {
  constexpr std::string_view kScheme = "bearer";
  while (!authorization.empty() && authorization.front() == ' ') authorization.remove_prefix(1);
  if (authorization.size() <= kScheme.size() || authorization[kScheme.size()] != ' ') return "";
  for (size_t i = 0; i < kScheme.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(authorization[i])) != kScheme[i]) return "";
  }
  std::string_view token = authorization.substr(kScheme.size() + 1);
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  while (!token.empty() && token.back() == ' ') token.remove_suffix(1);
  if (token.find(' ') != std::string_view::npos) return "";
  return std::string(token);
}

MetricsAuth::MetricsAuth(k8s::RestClient& client, Clock& clock, MetricsAuthOptions opts)
    : client_(client), clock_(clock), opts_(opts) {}

int64_t MetricsAuth::reviews() const {
  std::lock_guard<std::mutex> l(mu_);
  return reviews_;
}

template <typename T>
void MetricsAuth::Put(std::map<std::string, T>& cache, const std::string& key, T value) {
  std::lock_guard<std::mutex> l(mu_);
  if (cache.size() >= opts_.max_entries && cache.find(key) == cache.end()) {
    const Clock::TimePoint now = clock_.Now();
    std::erase_if(cache, [now](const auto& e) { return e.second.expires <= now; });
    if (cache.size() >= opts_.max_entries) {
      auto soonest = cache.begin();
      for (auto it = cache.begin(); it != cache.end(); ++it) {
        if (it->second.expires < soonest->second.expires) soonest = it;
      }
      cache.erase(soonest);
    }
  }
  cache[key] = std::move(value);
}

Status MetricsAuth::Authenticate(const std::string& token, Authn& out) {
  const std::string key = Sha256(token);
  {
    std::lock_guard<std::mutex> l(mu_);
    auto it = authn_.find(key);
    if (it != authn_.end() && it->second.expires > clock_.Now()) {
      out = it->second;
      return OkStatus();
    }
    ++reviews_;
  }
  auto resp = client_.Create(kTokenReviews, "", TokenReviewBody(token));
  if (!resp.ok()) return resp.status().WithPrefix("TokenReview");
  rapidjson::Document d;
  d.Parse(resp->c_str());
  auto status = ReviewStatus(d, "TokenReview");
  if (!status.ok()) return status.status();
  const rapidjson::Value& s = **status;
  out = Authn{};
  out.authenticated = BoolField(s, "authenticated");
  if (auto u = s.FindMember("user");
      out.authenticated && u != s.MemberEnd() && u->value.IsObject()) {
    out.user.username = StringField(u->value, "username");
    out.user.uid = StringField(u->value, "uid");
    if (auto g = u->value.FindMember("groups"); g != u->value.MemberEnd()) {
      out.user.groups = ReadStrings(g->value);
    }
    if (auto x = u->value.FindMember("extra"); x != u->value.MemberEnd() && x->value.IsObject()) {
      for (const auto& m : x->value.GetObject()) {
        out.user.extra[std::string(m.name.GetString(), m.name.GetStringLength())] =
            ReadStrings(m.value);
      }
    }
  }
  // An authenticated review without a user name is not an identity anyone can be granted.
  out.authenticated = out.authenticated && !out.user.username.empty();
  out.expires = clock_.Now() + opts_.authn_ttl;
  Put(authn_, key, out);
  return OkStatus();
}

Status MetricsAuth::Review(const UserInfo& user, std::string_view verb, std::string_view path,
                           Authz& out) {
  const std::string key = AccessKey(user, verb, path);
  {
    std::lock_guard<std::mutex> l(mu_);
    auto it = authz_.find(key);
    if (it != authz_.end() && it->second.expires > clock_.Now()) {
      out = it->second;
      return OkStatus();
    }
    ++reviews_;
  }
  auto resp = client_.Create(kSubjectAccessReviews, "", AccessReviewBody(user, verb, path));
  if (!resp.ok()) return resp.status().WithPrefix("SubjectAccessReview");
  rapidjson::Document d;
  d.Parse(resp->c_str());
  auto status = ReviewStatus(d, "SubjectAccessReview");
  if (!status.ok()) return status.status();
  const rapidjson::Value& s = **status;
  out = Authz{};
  out.allowed = BoolField(s, "allowed") && !BoolField(s, "denied");
  out.reason = StringField(s, "reason");
  if (std::string e = StringField(s, "evaluationError"); !e.empty()) {
    out.reason += (out.reason.empty() ? "" : "; ") + e;
  }
  out.expires = clock_.Now() + (out.allowed ? opts_.allow_ttl : opts_.deny_ttl);
  Put(authz_, key, out);
  return OkStatus();
}

AuthDecision MetricsAuth::Authorize(std::string_view authorization, std::string_view verb,
                                    std::string_view path) {
  const std::string token = BearerToken(authorization);
  if (token.empty()) return {401, "Unauthorized"};
  Authn authn;
  if (Status st = Authenticate(token, authn); !st.ok()) {
    spdlog::error("{} {}: authentication failed: {}", verb, path, st.ToString());
    return {500, "Authentication failed"};
  }
  if (!authn.authenticated) return {401, "Unauthorized"};
  Authz authz;
  if (Status st = Review(authn.user, verb, path, authz); !st.ok()) {
    spdlog::error("{} {}: authorization for user {} failed: {}", verb, path, authn.user.username,
                  st.ToString());
    return {500, "Authorization for user " + authn.user.username + " failed"};
  }
  if (!authz.allowed) {
    spdlog::debug("{} {}: denied for user {}: {}", verb, path, authn.user.username, authz.reason);
    return {403, "Authorization denied for user " + authn.user.username};
  }
  return {200, ""};
}

}  // namespace draco::server
