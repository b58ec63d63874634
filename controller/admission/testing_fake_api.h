// FakeApi: an in-memory API server for the admission tests (Secrets and
// MutatingWebhookConfigurations). Thread-safe.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/pointer.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "controller/admission/cert_sync.h"
#include "k8sclient/config.h"

namespace draco::admission::testing {

// An in-memory API server for Secrets and MutatingWebhookConfigurations: resourceVersions,
// optimistic Update, Create conflicts, and the JSON patch ops CertSync sends (test, add).
class FakeApi : public k8s::RestClient {
 public:
  std::recursive_mutex mu;  // the webhook's sync thread and the test thread share the fake
  std::map<std::string, std::string> objects;  // "resource/ns/name" -> JSON
  int rv = 100;
  int writes = 0;

  static std::string Key(const k8s::GroupVersionResource& gvr, std::string_view ns,
                         std::string_view name) {
    return gvr.resource + "/" + std::string(ns) + "/" + std::string(name);
  }
  std::string Store(const std::string& key, rapidjson::Document& d) {
    rapidjson::Pointer("/metadata/resourceVersion").Set(d, std::to_string(++rv).c_str());
    rapidjson::StringBuffer buf;
    rapidjson::Writer<rapidjson::StringBuffer> w(buf);
    d.Accept(w);
    ++writes;
    return objects[key] = buf.GetString();
  }
  static std::string RvOf(const std::string& json) {
    rapidjson::Document d;
    d.Parse(json.c_str());
    auto* v = rapidjson::Pointer("/metadata/resourceVersion").Get(d);
    return v && v->IsString() ? v->GetString() : "";
  }
  StatusOr<std::string> Get(const k8s::GroupVersionResource& gvr, std::string_view ns,
                            std::string_view name, const k8s::GetOptions&) override {
    std::lock_guard<std::recursive_mutex> l(mu);
    auto it = objects.find(Key(gvr, ns, name));
    if (it == objects.end()) return NotFoundError(std::string(name) + " not found");
    return it->second;
  }
  StatusOr<std::string> Create(const k8s::GroupVersionResource& gvr, std::string_view ns,
                               std::string_view body, const k8s::CreateOptions&) override {
    std::lock_guard<std::recursive_mutex> l(mu);
    rapidjson::Document d;
    d.Parse(body.data(), body.size());
    std::string key = Key(gvr, ns, d["metadata"]["name"].GetString());
    if (objects.count(key)) return AlreadyExistsError("already exists");
    return Store(key, d);
  }
  StatusOr<std::string> Update(const k8s::GroupVersionResource& gvr, std::string_view ns,
                               std::string_view name, std::string_view body,
                               const k8s::UpdateOptions&) override {
    std::lock_guard<std::recursive_mutex> l(mu);
    std::string key = Key(gvr, ns, name);
    auto it = objects.find(key);
    if (it == objects.end()) return NotFoundError("not found");
    rapidjson::Document d;
    d.Parse(body.data(), body.size());
    if (RvOf(std::string(body)) != RvOf(it->second)) return AbortedError("conflict");
    return Store(key, d);
  }
  StatusOr<std::string> Patch(const k8s::GroupVersionResource& gvr, std::string_view ns,
                              std::string_view name, k8s::PatchType type, std::string_view body,
                              const k8s::PatchOptions&, std::string_view) override {
    std::lock_guard<std::recursive_mutex> l(mu);
    EXPECT_EQ(type, k8s::PatchType::kJsonPatch);
    std::string key = Key(gvr, ns, name);
    auto it = objects.find(key);
    if (it == objects.end()) return NotFoundError("not found");
    rapidjson::Document obj, ops;
    obj.Parse(it->second.c_str());
    ops.Parse(body.data(), body.size());
    for (const auto& op : ops.GetArray()) {
      rapidjson::Pointer p(op["path"].GetString());
      if (std::string(op["op"].GetString()) == "test") {
        auto* have = p.Get(obj);
        if (!have || *have != op["value"]) return AbortedError("test failed");
      } else {
        EXPECT_STREQ(op["op"].GetString(), "add");
        p.Set(obj, op["value"].GetString());
      }
    }
    return Store(key, obj);
  }
  StatusOr<k8s::ObjectList> List(const k8s::GroupVersionResource&, std::string_view,
                                 const k8s::ListOptions&) override {
    return UnimplementedError("List");
  }
  StatusOr<std::unique_ptr<k8s::Watcher>> Watch(const k8s::GroupVersionResource&, std::string_view,
                                                const k8s::ListOptions&) override {
    return UnimplementedError("Watch");
  }
  StatusOr<std::string> UpdateStatus(const k8s::GroupVersionResource&, std::string_view,
                                     std::string_view, std::string_view,
                                     const k8s::UpdateOptions&) override {
    return UnimplementedError("UpdateStatus");
  }
  StatusOr<std::string> Delete(const k8s::GroupVersionResource&, std::string_view, std::string_view,
                               const k8s::DeleteOptions&) override {
    return UnimplementedError("Delete");
  }

  void AddWebhookConfig(int webhooks) {
    std::lock_guard<std::recursive_mutex> l(mu);
    std::string hooks;
    for (int i = 0; i < webhooks; ++i) {
      hooks += std::string(i ? "," : "") + R"({"name":"h)" + std::to_string(i) +
               R"(.draco.dev","clientConfig":{"service":{"name":"s","namespace":"draco"}}})";
    }
    rapidjson::Document d;
    d.Parse((R"({"metadata":{"name":"draco-gate"},"webhooks":[)" + hooks + "]}").c_str());
    Store(Key(kMutatingWebhookConfigurations, "", "draco-gate"), d);
  }
  std::vector<std::string> CaBundles() {
    std::lock_guard<std::recursive_mutex> l(mu);
    rapidjson::Document d;
    d.Parse(objects[Key(kMutatingWebhookConfigurations, "", "draco-gate")].c_str());
    std::vector<std::string> out;
    for (const auto& h : d["webhooks"].GetArray()) {
      auto b = h["clientConfig"].FindMember("caBundle");
      out.push_back(b == h["clientConfig"].MemberEnd() ? ""
                                                       : *k8s::Base64Decode(b->value.GetString()));
    }
    return out;
  }
};

}  // namespace draco::admission::testing
