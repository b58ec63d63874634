// Discovery: what an API server serves (its version, the versions of an API group, the resources
// of a group/version), read from /version, /api, /apis and /apis/GROUP/VERSION as client-go's
// discovery client does. draco uses it to never watch a resource or send a request the server
// does not have (e.g. DeviceTaintRules on Kubernetes 1.34, MutatingAdmissionPolicy v1 before 1.36).
//
// Thread-safety: a Discovery is safe for concurrent use; results are cached for its lifetime
// (make a new one to re-discover). Blocking: each call may issue GETs through the RestClient.
// The RestClient must outlive the Discovery.
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "k8sclient/rest_client.h"

namespace draco::k8s {

// The server's /version. minor is the numeric part of "minor" ("37+" -> 37).
struct ServerVersion {
  int major = 0;
  int minor = 0;
  std::string git_version;  // "v1.37.2"
};

// Parsers for the discovery documents (exposed for tests and fuzzing).
StatusOr<ServerVersion> ParseServerVersion(std::string_view json);
// metav1.APIGroupList -> group name -> served versions, the preferred version first.
StatusOr<std::map<std::string, std::vector<std::string>>> ParseApiGroupList(std::string_view json);
// metav1.APIResourceList -> resource names, subresources as "resource/sub".
StatusOr<std::set<std::string>> ParseApiResourceList(std::string_view json);

class Discovery {
 public:
  explicit Discovery(RestClient& client) : client_(client) {}

  StatusOr<ServerVersion> Version();
  // Served versions of `group` ("" = core), preferred first; empty when the group is not served.
  StatusOr<std::vector<std::string>> GroupVersions(const std::string& group);
  // Whether the server serves `gvr` (resource may be "resource/subresource"). A group/version the
  // server does not serve is false, not an error.
  StatusOr<bool> Serves(const GroupVersionResource& gvr);
  // The first of `versions` that `group` serves `resource` in, or nullopt.
  StatusOr<std::optional<std::string>> FirstServed(const std::string& group,
                                                   const std::string& resource,
                                                   const std::vector<std::string>& versions);

 private:
  RestClient& client_;
  std::mutex mu_;
  std::optional<ServerVersion> version_;
  std::optional<std::map<std::string, std::vector<std::string>>> groups_;
  std::map<std::string, std::set<std::string>> resources_;  // "group/version" -> names
};

}  // namespace draco::k8s
