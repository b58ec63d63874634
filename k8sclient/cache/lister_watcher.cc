#include "k8sclient/cache/lister_watcher.h"

namespace draco::k8s::cache {

ListWatch::ListWatch(RestClient& client, GroupVersionResource gvr, std::string ns,
                     std::string label_selector, std::string field_selector)
    : client_(client),
      gvr_(std::move(gvr)),
      ns_(std::move(ns)),
      label_selector_(std::move(label_selector)),
      field_selector_(std::move(field_selector)) {}

ListOptions ListWatch::WithSelectors(ListOptions opts) const {
  if (!label_selector_.empty()) opts.label_selector = label_selector_;
  if (!field_selector_.empty()) opts.field_selector = field_selector_;
  return opts;
}

StatusOr<ObjectList> ListWatch::List(const ListOptions& opts) {
  return client_.List(gvr_, ns_, WithSelectors(opts));
}

StatusOr<std::unique_ptr<Watcher>> ListWatch::Watch(const ListOptions& opts) {
  return client_.Watch(gvr_, ns_, WithSelectors(opts));
}

}  // namespace draco::k8s::cache
