// FakeReviewApi: an API server answering TokenReviews and SubjectAccessReviews, for the secure
// metrics tests. Thread-safe.
#pragma once

#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "controller/server/metrics_auth.h"

namespace draco::server::testing {

class FakeReviewApi : public k8s::RestClient {
 public:
  std::map<std::string, UserInfo> users;  // token -> user; other tokens are not authenticated
  std::set<std::string> allowed;          // user names allowed get on /metrics
  std::atomic<bool> fail_token_reviews{false};
  std::atomic<bool> fail_access_reviews{false};
  std::atomic<bool> garbage{false};  // answer reviews with something that is not a review
  std::atomic<int> token_reviews{0};
  std::atomic<int> access_reviews{0};
  std::vector<std::string> last_access_review;  // guarded by mu_

  StatusOr<std::string> Create(const k8s::GroupVersionResource& gvr, std::string_view ns,
                               std::string_view body, const k8s::CreateOptions&) override {
    std::lock_guard<std::mutex> l(mu_);
    if (!ns.empty()) return InvalidArgumentError("reviews are cluster-scoped");
    rapidjson::Document d;
    d.Parse(body.data(), body.size());
    if (d.HasParseError()) return InvalidArgumentError("bad JSON");
    if (gvr == kTokenReviews) {
      ++token_reviews;
      if (fail_token_reviews) return UnavailableError("503 Service Unavailable");
      if (garbage) return std::string("<html>");
      auto it = users.find(d["spec"]["token"].GetString());
      if (it == users.end()) return std::string(R"({"status":{"authenticated":false}})");
      return R"({"status":{"authenticated":true,"user":)" + UserJson(it->second) + "}}";
    }
    if (gvr == kSubjectAccessReviews) {
      ++access_reviews;
      last_access_review = {std::string(body)};
      if (fail_access_reviews) return UnavailableError("503 Service Unavailable");
      if (garbage) return std::string("{}");
      const bool ok =
          allowed.count(d["spec"]["user"].GetString()) > 0 &&
          std::string(d["spec"]["nonResourceAttributes"]["path"].GetString()) == "/metrics" &&
          std::string(d["spec"]["nonResourceAttributes"]["verb"].GetString()) == "get";
      return std::string(ok ? R"({"status":{"allowed":true}})"
                            : R"({"status":{"allowed":false,"reason":"no rule"}})");
    }
    return NotFoundError("unexpected resource " + gvr.resource);
  }

  StatusOr<std::string> Get(const k8s::GroupVersionResource&, std::string_view, std::string_view,
                            const k8s::GetOptions&) override {
    return UnimplementedError("Get");
  }
  StatusOr<k8s::ObjectList> List(const k8s::GroupVersionResource&, std::string_view,
                                 const k8s::ListOptions&) override {
    return UnimplementedError("List");
  }
  StatusOr<std::unique_ptr<k8s::Watcher>> Watch(const k8s::GroupVersionResource&, std::string_view,
                                                const k8s::ListOptions&) override {
    return UnimplementedError("Watch");
  }
  StatusOr<std::string> Update(const k8s::GroupVersionResource&, std::string_view, std::string_view,
                               std::string_view, const k8s::UpdateOptions&) override {
    return UnimplementedError("Update");
  }
  StatusOr<std::string> UpdateStatus(const k8s::GroupVersionResource&, std::string_view,
                                     std::string_view, std::string_view,
                                     const k8s::UpdateOptions&) override {
    return UnimplementedError("UpdateStatus");
  }
  StatusOr<std::string> Patch(const k8s::GroupVersionResource&, std::string_view, std::string_view,
                              k8s::PatchType, std::string_view, const k8s::PatchOptions&,
                              std::string_view) override {
    return UnimplementedError("Patch");
  }
  StatusOr<std::string> Delete(const k8s::GroupVersionResource&, std::string_view, std::string_view,
                               const k8s::DeleteOptions&) override {
    return UnimplementedError("Delete");
  }

 private:
  static std::string UserJson(const UserInfo& u) {
    rapidjson::StringBuffer buf;
    rapidjson::Writer<rapidjson::StringBuffer> w(buf);
    w.StartObject();
    w.Key("username");
    w.String(u.username.c_str());
    w.Key("uid");
    w.String(u.uid.c_str());
    w.Key("groups");
    w.StartArray();
    for (const auto& g : u.groups) w.String(g.c_str());
    w.EndArray();
    w.Key("extra");
    w.StartObject();
    for (const auto& [k, v] : u.extra) {
      w.Key(k.c_str());
      w.StartArray();
      for (const auto& s : v) w.String(s.c_str());
      w.EndArray();
    }
    w.EndObject();
    w.EndObject();
    return buf.GetString();
  }
  std::mutex mu_;
};

}  // namespace draco::server::testing
