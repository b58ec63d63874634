#include "k8sclient/rest_client.h"

namespace draco::k8s {

std::string ResourcePath(const GroupVersionResource& gvr, std::string_view ns,
                         std::string_view name, std::string_view subresource) {
  std::string p =
      gvr.group.empty() ? "/api/" + gvr.version : "/apis/" + gvr.group + "/" + gvr.version;
  if (!ns.empty()) p.append("/namespaces/").append(ns);
  p.append("/").append(gvr.resource);
  if (!name.empty()) p.append("/").append(name);
  if (!subresource.empty()) p.append("/").append(subresource);
  return p;
}

StatusOr<ObjectList> ListAll(RestClient& client, const GroupVersionResource& gvr,
                             std::string_view ns, ListOptions opts, int64_t page_size) {
  opts.limit = page_size;
  opts.continue_token.clear();
  ObjectList all;
  bool first = true;
  while (true) {
    auto page = client.List(gvr, ns, opts);
    if (!page.ok()) return page.status();
    if (first) {
      all.resource_version = page->resource_version;
      first = false;
    }
    all.items.insert(all.items.end(), std::make_move_iterator(page->items.begin()),
                     std::make_move_iterator(page->items.end()));
    if (page->continue_token.empty()) break;
    opts.continue_token = page->continue_token;
    // A continue token pins the snapshot; resourceVersion must not be sent with it.
    opts.resource_version.clear();
    opts.resource_version_match.clear();
  }
  return all;
}

}  // namespace draco::k8s
