#include "k8sclient/discovery.h"

#include <cctype>

#include <rapidjson/document.h>

#include "k8sclient/api_error.h"

namespace draco::k8s {
namespace {

using rapidjson::Value;

Status Parse(std::string_view json, rapidjson::Document& doc, const char* what) {
  doc.Parse(json.data(), json.size());
  if (doc.HasParseError() || !doc.IsObject()) {
    return InvalidArgumentError(std::string(what) + ": invalid JSON object");
  }
  return OkStatus();
}

std::string Str(const Value& v, const char* key) {
  if (!v.IsObject()) return "";
  auto it = v.FindMember(key);
  if (it == v.MemberEnd() || !it->value.IsString()) return "";
  return {it->value.GetString(), it->value.GetStringLength()};
}

int LeadingInt(const std::string& s) {
  int n = 0;
  size_t i = 0;
  for (; i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) != 0 && i < 6; ++i) {
    n = n * 10 + (s[i] - '0');
  }
  return i == 0 ? -1 : n;
}

}  // namespace

StatusOr<ServerVersion> ParseServerVersion(std::string_view json) {
  rapidjson::Document doc;
  if (Status s = Parse(json, doc, "/version"); !s.ok()) return s;
  ServerVersion v;
  v.git_version = Str(doc, "gitVersion");
  v.major = LeadingInt(Str(doc, "major"));
  v.minor = LeadingInt(Str(doc, "minor"));
  if (v.major < 0 || v.minor < 0) {
    return InvalidArgumentError("/version: major/minor are not numbers");
  }
  return v;
}

StatusOr<std::map<std::string, std::vector<std::string>>> ParseApiGroupList(std::string_view json) {
  rapidjson::Document doc;
  if (Status s = Parse(json, doc, "/apis"); !s.ok()) return s;
  std::map<std::string, std::vector<std::string>> out;
  auto groups = doc.FindMember("groups");
  if (groups == doc.MemberEnd() || !groups->value.IsArray()) return out;
  for (const Value& g : groups->value.GetArray()) {
    std::string name = Str(g, "name");
    if (name.empty()) continue;
    std::string preferred;
    if (auto p = g.FindMember("preferredVersion"); p != g.MemberEnd()) {
      preferred = Str(p->value, "version");
    }
    std::vector<std::string>& versions = out[name];
    if (!preferred.empty()) versions.push_back(preferred);
    if (auto vs = g.FindMember("versions"); vs != g.MemberEnd() && vs->value.IsArray()) {
      for (const Value& v : vs->value.GetArray()) {
        std::string ver = Str(v, "version");
        if (!ver.empty() && ver != preferred) versions.push_back(ver);
      }
    }
  }
  return out;
}

StatusOr<std::set<std::string>> ParseApiResourceList(std::string_view json) {
  rapidjson::Document doc;
  if (Status s = Parse(json, doc, "resource list"); !s.ok()) return s;
  std::set<std::string> out;
  auto rs = doc.FindMember("resources");
  if (rs == doc.MemberEnd() || !rs->value.IsArray()) return out;
  for (const Value& r : rs->value.GetArray()) {
    std::string name = Str(r, "name");
    if (!name.empty()) out.insert(std::move(name));
  }
  return out;
}

StatusOr<ServerVersion> Discovery::Version() {
  std::lock_guard<std::mutex> l(mu_);
  if (version_) return *version_;
  StatusOr<std::string> body = client_.GetPath("/version");
  if (!body.ok()) return body.status().WithPrefix("GET /version");
  StatusOr<ServerVersion> v = ParseServerVersion(*body);
  if (v.ok()) version_ = *v;
  return v;
}

StatusOr<std::vector<std::string>> Discovery::GroupVersions(const std::string& group) {
  std::lock_guard<std::mutex> l(mu_);
  if (group.empty()) return std::vector<std::string>{"v1"};  // /api serves only v1
  if (!groups_) {
    StatusOr<std::string> body = client_.GetPath("/apis");
    if (!body.ok()) return body.status().WithPrefix("GET /apis");
    auto parsed = ParseApiGroupList(*body);
    if (!parsed.ok()) return parsed.status();
    groups_ = std::move(parsed).value();
  }
  auto it = groups_->find(group);
  return it == groups_->end() ? std::vector<std::string>{} : it->second;
}

StatusOr<bool> Discovery::Serves(const GroupVersionResource& gvr) {
  StatusOr<std::vector<std::string>> versions = GroupVersions(gvr.group);
  if (!versions.ok()) return versions.status();
  bool served = false;
  for (const auto& v : *versions) served = served || v == gvr.version;
  if (!served) return false;
  std::string key = gvr.group + "/" + gvr.version;
  std::lock_guard<std::mutex> l(mu_);
  auto it = resources_.find(key);
  if (it == resources_.end()) {
    std::string path = gvr.group.empty() ? "/api/" + gvr.version : "/apis/" + key;
    StatusOr<std::string> body = client_.GetPath(path);
    if (!body.ok()) {
      if (IsNotFound(body.status())) return false;
      return body.status().WithPrefix("GET " + path);
    }
    auto parsed = ParseApiResourceList(*body);
    if (!parsed.ok()) return parsed.status();
    it = resources_.emplace(key, std::move(parsed).value()).first;
  }
  return it->second.count(gvr.resource) > 0;
}

StatusOr<std::optional<std::string>> Discovery::FirstServed(
    const std::string& group, const std::string& resource,
    const std::vector<std::string>& versions) {
  for (const auto& v : versions) {
    StatusOr<bool> s = Serves({group, v, resource});
    if (!s.ok()) return s.status();
    if (*s) return std::optional<std::string>(v);
  }
  return std::optional<std::string>();
}

}  // namespace draco::k8s
