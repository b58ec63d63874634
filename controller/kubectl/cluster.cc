#include "controller/kubectl/cluster.h"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "k8sclient/api_error.h"

namespace draco::kubectl {
namespace {

std::string Resource(const k8s::GroupVersionResource& gvr) {
  return gvr.group.empty() ? gvr.resource : gvr.resource + "." + gvr.group;
}

}  // namespace

const std::vector<ClusterKind>& ClusterKinds() {
  static const std::vector<ClusterKind> kKinds = {
      {{"resource.k8s.io", "v1", "deviceclasses"}, "resource.k8s.io/v1", "DeviceClass", true},
      {{"resource.k8s.io", "v1", "resourceslices"}, "resource.k8s.io/v1", "ResourceSlice", true},
      {{"resource.k8s.io", "v1", "devicetaintrules"},
       "resource.k8s.io/v1",
       "DeviceTaintRule",
       false},
      {{"draco.dev", "v1alpha1", "allocationpolicies"},
       "draco.dev/v1alpha1",
       "AllocationPolicy",
       false},
      {{"resource.k8s.io", "v1", "resourceclaims"}, "resource.k8s.io/v1", "ResourceClaim", true},
      {{"resource.k8s.io", "v1", "resourceclaimtemplates"},
       "resource.k8s.io/v1",
       "ResourceClaimTemplate",
       true},
      {{"", "v1", "nodes"}, "v1", "Node", true},
      {{"", "v1", "namespaces"}, "v1", "Namespace", false},
      {{"", "v1", "persistentvolumes"}, "v1", "PersistentVolume", false},
      {{"", "v1", "persistentvolumeclaims"}, "v1", "PersistentVolumeClaim", false},
      {{"storage.k8s.io", "v1", "storageclasses"}, "storage.k8s.io/v1", "StorageClass", false},
      {{"storage.k8s.io", "v1", "csinodes"}, "storage.k8s.io/v1", "CSINode", false},
      {{"", "v1", "pods"}, "v1", "Pod", true},
  };
  return kKinds;
}

std::string DescribeListError(const ClusterKind& k, const Status& s, const std::string& host) {
  const std::string what = "cannot list " + Resource(k.gvr) + " at the cluster scope";
  if (k8s::IsForbidden(s)) {
    return what + R"(: forbidden; kubectl draco needs RBAC verb "list" on resource ")" +
           k.gvr.resource + "\" in API group \"" + k.gvr.group +
           "\" cluster-wide (check with: kubectl auth can-i list " + Resource(k.gvr) +
           " --all-namespaces)";
  }
  if (k8s::IsUnauthorized(s)) {
    return what + ": unauthorized; the kubeconfig's credentials were refused by " + host;
  }
  if (k8s::IsNotFound(s)) {
    return what + ": the API server does not serve " + k.gvr.group + "/" + k.gvr.version + " " +
           k.gvr.resource + " (DRA needs Kubernetes 1.34 or later with resource.k8s.io/v1)";
  }
  if (k8s::IsTransportError(s)) {
    return what + ": cannot reach the API server at " + host + ": " + s.message();
  }
  auto api = k8s::ApiError::FromStatus(s);
  return what + ": " + (api ? api->message : s.message());
}

StatusOr<simulate::Document> FetchCluster(k8s::RestClient& client, const std::string& host,
                                          std::ostream& warn, ClusterSummary* summary) {
  rapidjson::Document out(rapidjson::kObjectType);
  auto& a = out.GetAllocator();
  out.AddMember("apiVersion", "v1", a);
  out.AddMember("kind", "List", a);
  rapidjson::Value items(rapidjson::kArrayType);
  ClusterSummary local;
  ClusterSummary& sum = summary ? *summary : local;
  for (const ClusterKind& k : ClusterKinds()) {
    auto list = k8s::ListAll(client, k.gvr, "", {});
    if (!list.ok()) {
      const Status& s = list.status();
      if (!k.required && k8s::IsNotFound(s)) {
        sum.skipped.push_back(std::string(k.kind) + " (not served)");
        continue;
      }
      std::string msg = DescribeListError(k, s, host);
      if (!k.required && k8s::IsForbidden(s)) {
        warn << "warning: " << msg << "; going on without " << k.kind << " objects\n";
        sum.skipped.push_back(std::string(k.kind) + " (forbidden)");
        continue;
      }
      if (k8s::IsForbidden(s)) return PermissionDeniedError(msg);
      return Status(s.code(), msg);
    }
    for (const auto& obj : list->items) {
      rapidjson::Value item;
      item.CopyFrom(obj->doc(), a);
      if (!item.IsObject()) continue;
      item.RemoveMember("apiVersion");
      item.RemoveMember("kind");
      item.AddMember("apiVersion", rapidjson::StringRef(k.api_version), a);
      item.AddMember("kind", rapidjson::StringRef(k.kind), a);
      if (auto md = item.FindMember("metadata"); md != item.MemberEnd() && md->value.IsObject()) {
        md->value.RemoveMember("managedFields");
      }
      items.PushBack(item, a);
    }
    sum.counts.emplace_back(k.kind, list->items.size());
  }
  out.AddMember("items", items, a);
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  out.Accept(w);
  return simulate::Document{"the cluster", buf.GetString()};
}

}  // namespace draco::kubectl
