// ListerWatcher: the seam between the cache and the API server (client-go listwatch.go).
//
// A Reflector only ever calls List and Watch on this interface. ListWatch adapts a RestClient for
// one resource (and optional namespace/selectors); tests script a fake instead.
//
// Implementations must be thread-safe; the calls block like the underlying RestClient calls.
#pragma once

#include <memory>
#include <string>

#include "k8sclient/rest_client.h"

namespace draco::k8s::cache {

class ListerWatcher {
 public:
  virtual ~ListerWatcher() = default;
  // One LIST page.
  virtual StatusOr<ObjectList> List(const ListOptions& opts) = 0;
  virtual StatusOr<std::unique_ptr<Watcher>> Watch(const ListOptions& opts) = 0;
};

// Lists/watches `gvr` in `ns` ("" = all namespaces or cluster-scoped) through `client`, adding
// the given selectors to every request. `client` must outlive this object.
class ListWatch final : public ListerWatcher {
 public:
  ListWatch(RestClient& client, GroupVersionResource gvr, std::string ns = "",
            std::string label_selector = "", std::string field_selector = "");
  StatusOr<ObjectList> List(const ListOptions& opts) override;
  StatusOr<std::unique_ptr<Watcher>> Watch(const ListOptions& opts) override;

 private:
  ListOptions WithSelectors(ListOptions opts) const;

  RestClient& client_;
  const GroupVersionResource gvr_;
  const std::string ns_;
  const std::string label_selector_;
  const std::string field_selector_;
};

}  // namespace draco::k8s::cache
