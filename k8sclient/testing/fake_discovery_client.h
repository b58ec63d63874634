// FakeDiscoveryClient: a RestClient for tests that answers GetPath() from a map of discovery
// documents (404 NotFound for other paths) and counts the GETs; every resource verb returns
// Unimplemented. Not thread-safe.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "k8sclient/rest_client.h"

namespace draco::k8s::testing {

class FakeDiscoveryClient : public RestClient {
 public:
  std::map<std::string, std::string> paths;
  std::map<std::string, int> gets;

  StatusOr<std::string> GetPath(std::string_view path) override {
    ++gets[std::string(path)];
    auto it = paths.find(std::string(path));
    if (it == paths.end()) return NotFoundError("the server could not find the requested resource");
    return it->second;
  }
  StatusOr<std::string> Get(const GroupVersionResource&, std::string_view, std::string_view,
                            const GetOptions&) override {
    return UnimplementedError("Get");
  }
  StatusOr<ObjectList> List(const GroupVersionResource&, std::string_view,
                            const ListOptions&) override {
    return UnimplementedError("List");
  }
  StatusOr<std::unique_ptr<Watcher>> Watch(const GroupVersionResource&, std::string_view,
                                           const ListOptions&) override {
    return UnimplementedError("Watch");
  }
  StatusOr<std::string> Create(const GroupVersionResource&, std::string_view, std::string_view,
                               const CreateOptions&) override {
    return UnimplementedError("Create");
  }
  StatusOr<std::string> Update(const GroupVersionResource&, std::string_view, std::string_view,
                               std::string_view, const UpdateOptions&) override {
    return UnimplementedError("Update");
  }
  StatusOr<std::string> UpdateStatus(const GroupVersionResource&, std::string_view,
                                     std::string_view, std::string_view,
                                     const UpdateOptions&) override {
    return UnimplementedError("UpdateStatus");
  }
  StatusOr<std::string> Patch(const GroupVersionResource&, std::string_view, std::string_view,
                              PatchType, std::string_view, const PatchOptions&,
                              std::string_view) override {
    return UnimplementedError("Patch");
  }
  StatusOr<std::string> Delete(const GroupVersionResource&, std::string_view, std::string_view,
                               const DeleteOptions&) override {
    return UnimplementedError("Delete");
  }
};

}  // namespace draco::k8s::testing
