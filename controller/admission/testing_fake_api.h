// FakeApi: an in-memory API server for the admission tests (Secrets and
// MutatingWebhookConfigurations). Thread-safe.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/pointer.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "controller/admission/cert_sync.h"
#include "k8sclient/cache/testing/fake_lister_watcher.h"
#include "k8sclient/config.h"

namespace draco::admission::testing {

// One watch on FakeApi: the events of the objects whose key starts with `prefix`, queued on
// k8sclient's fake watch stream.
class FakeWatcher : public k8s::Watcher {
 public:
  explicit FakeWatcher(std::string key) : prefix(std::move(key)) {}
  const std::string prefix;
  void Push(const std::string& json, k8s::WatchEvent::Type type) {
    auto obj = k8s::Object::Parse(json);
    ASSERT_TRUE(obj.ok());
    stream_.Push(k8s::WatchEvent{type, *obj, OkStatus()});
  }
  StatusOr<std::optional<k8s::WatchEvent>> Next() override { return stream_.Next(); }
  void Stop() override { stream_.Stop(); }

 private:
  k8s::cache::testing::FakeWatcher stream_;
};

// An in-memory API server for Secrets and MutatingWebhookConfigurations: resourceVersions,
// optimistic Update, Create conflicts, the JSON patch ops CertSync sends (test, add), and watches
// by metadata.name (an ADDED event for the object as it is, then one MODIFIED per write).
class FakeApi : public k8s::RestClient {
 public:
  std::vector<std::shared_ptr<FakeWatcher>> watchers;  // guarded by mu
  int watches = 0;                                     // Watch calls, guarded by mu
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
    bool added = !objects.count(key);
    objects[key] = buf.GetString();
    for (auto& watcher : watchers) {
      if (watcher->prefix == key) {
        watcher->Push(objects[key],
                      added ? k8s::WatchEvent::Type::kAdded : k8s::WatchEvent::Type::kModified);
      }
    }
    return objects[key];
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
  StatusOr<std::unique_ptr<k8s::Watcher>> Watch(const k8s::GroupVersionResource& gvr,
                                                std::string_view ns,
                                                const k8s::ListOptions& opts) override {
    std::lock_guard<std::recursive_mutex> l(mu);
    ++watches;
    const std::string kName = "metadata.name=";
    if (opts.field_selector.rfind(kName, 0) != 0) return UnimplementedError("Watch without name");
    std::string key = Key(gvr, ns, opts.field_selector.substr(kName.size()));
    auto shared = std::make_shared<FakeWatcher>(key);
    watchers.push_back(shared);
    if (auto it = objects.find(key); it != objects.end()) {
      shared->Push(it->second, k8s::WatchEvent::Type::kAdded);
    }
    // The caller owns a forwarding handle; the fake keeps the shared state to push into.
    struct Handle : k8s::Watcher {
      std::shared_ptr<FakeWatcher> w;
      StatusOr<std::optional<k8s::WatchEvent>> Next() override { return w->Next(); }
      void Stop() override { w->Stop(); }
    };
    auto h = std::make_unique<Handle>();
    h->w = shared;
    return std::unique_ptr<k8s::Watcher>(std::move(h));
  }
  // Replaces the object as a re-apply of a manifest would (a PUT without the fields it lacks).
  void Replace(const std::string& key, const std::string& json) {
    std::lock_guard<std::recursive_mutex> l(mu);
    rapidjson::Document d;
    d.Parse(json.c_str());
    Store(key, d);
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
