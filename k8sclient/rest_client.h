// RestClient: the verbs of the Kubernetes API for any group/version/resource.
//
// Overview. draco talks to the API server only through this interface (reconcilers and the cache
// never see cpprestsdk; tests substitute fakes). Resources are addressed by GroupVersionResource
// plus a namespace ("" means cluster-scoped, or all namespaces for List/Watch) and a name.
//
// Object representation. Request bodies are JSON text (std::string_view). Single-object results
// (Get, Create, Update, Patch, Delete) are the response's JSON text. List and Watch return parsed,
// immutable, shared Objects (object.h), which is what the cache stores.
//
// Errors. Every method returns Status/StatusOr; API errors decode metav1.Status into the codes
// of api_error.h (IsNotFound, IsConflict, IsGone, ...). Nothing throws.
//
// Thread-safety. Implementations are safe for concurrent use by any number of threads. All calls
// block until the response (for Watch: the response headers) arrives or the per-request timeout
// expires.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "k8sclient/object.h"

namespace draco::k8s {

struct GroupVersionResource {
  std::string group;  // "" for the core group
  std::string version;
  std::string resource;  // plural, lower case
  friend bool operator==(const GroupVersionResource&, const GroupVersionResource&) = default;
};

inline const GroupVersionResource kConfigMaps{"", "v1", "configmaps"};
inline const GroupVersionResource kNamespaces{"", "v1", "namespaces"};
inline const GroupVersionResource kPods{"", "v1", "pods"};
inline const GroupVersionResource kNodes{"", "v1", "nodes"};
inline const GroupVersionResource kLeases{"coordination.k8s.io", "v1", "leases"};

// metav1.ListOptions (used by List and Watch).
struct ListOptions {
  std::string label_selector;
  std::string field_selector;
  // "" = most recent (quorum read); "0" = any (watch cache); otherwise per resource_version_match.
  std::string resource_version;
  // "", "NotOlderThan" or "Exact".
  std::string resource_version_match;
  int64_t limit = 0;  // 0 = no paging
  std::string continue_token;
  // Watch only: server-side duration of the watch; 0 = server default.
  int64_t timeout_seconds = 0;
  bool allow_watch_bookmarks = false;
  std::optional<bool> send_initial_events;
};

struct GetOptions {
  std::string resource_version;
};

struct CreateOptions {
  std::string field_manager;
  bool dry_run = false;
};
using UpdateOptions = CreateOptions;

enum class PatchType {
  kJsonPatch,       // application/json-patch+json (RFC 6902)
  kMergePatch,      // application/merge-patch+json (RFC 7386)
  kStrategicMerge,  // application/strategic-merge-patch+json (built-in types only)
  kApply,           // application/apply-patch+yaml (server-side apply; JSON is valid YAML)
};

struct PatchOptions {
  // Required for kApply.
  std::string field_manager;
  // kApply only: take ownership of conflicting fields.
  bool force = false;
  bool dry_run = false;
};

struct DeleteOptions {
  std::optional<std::string> precondition_uid;
  std::optional<std::string> precondition_resource_version;
  // "Orphan", "Background" or "Foreground".
  std::optional<std::string> propagation_policy;
  std::optional<int64_t> grace_period_seconds;
  bool dry_run = false;
};

// One decoded watch event.
struct WatchEvent {
  enum class Type { kAdded, kModified, kDeleted, kBookmark, kError };
  Type type = Type::kAdded;
  // Set for every type but kError. For kBookmark only resourceVersion and annotations are
  // meaningful.
  ObjectPtr object;
  // For kError: the metav1.Status decoded into an api_error Status (e.g. IsGone()).
  Status error;
};

std::string_view WatchEventTypeName(WatchEvent::Type t);

// An open watch stream. Owned by the caller; destroying it stops the stream.
class Watcher {
 public:
  virtual ~Watcher() = default;
  // Blocks until the next event. Returns nullopt when the stream ended normally (the server
  // closed it, e.g. at timeoutSeconds, or Stop() was called) and an error Status when the
  // connection failed or the stream could not be decoded. Call from one thread at a time.
  virtual StatusOr<std::optional<WatchEvent>> Next() = 0;
  // Ends the stream; a blocked Next() returns promptly. Thread-safe, idempotent.
  virtual void Stop() = 0;
};

class RestClient {
 public:
  virtual ~RestClient() = default;

  virtual StatusOr<std::string> Get(const GroupVersionResource& gvr, std::string_view ns,
                                    std::string_view name, const GetOptions& opts = {}) = 0;
  // One page. Use continue_token/limit to page; see ListAll().
  virtual StatusOr<ObjectList> List(const GroupVersionResource& gvr, std::string_view ns,
                                    const ListOptions& opts = {}) = 0;
  virtual StatusOr<std::unique_ptr<Watcher>> Watch(const GroupVersionResource& gvr,
                                                   std::string_view ns,
                                                   const ListOptions& opts) = 0;
  virtual StatusOr<std::string> Create(const GroupVersionResource& gvr, std::string_view ns,
                                       std::string_view body, const CreateOptions& opts = {}) = 0;
  // PUT; `body` must carry metadata.name (and metadata.resourceVersion for optimistic
  // concurrency: a stale one fails with IsConflict()).
  virtual StatusOr<std::string> Update(const GroupVersionResource& gvr, std::string_view ns,
                                       std::string_view name, std::string_view body,
                                       const UpdateOptions& opts = {}) = 0;
  // PUT on the status subresource.
  virtual StatusOr<std::string> UpdateStatus(const GroupVersionResource& gvr, std::string_view ns,
                                             std::string_view name, std::string_view body,
                                             const UpdateOptions& opts = {}) = 0;
  // PATCH; `subresource` is "" or e.g. "status".
  virtual StatusOr<std::string> Patch(const GroupVersionResource& gvr, std::string_view ns,
                                      std::string_view name, PatchType type, std::string_view body,
                                      const PatchOptions& opts = {},
                                      std::string_view subresource = "") = 0;
  // DELETE; returns the response body (the object while it is being finalized, or a Status).
  virtual StatusOr<std::string> Delete(const GroupVersionResource& gvr, std::string_view ns,
                                       std::string_view name, const DeleteOptions& opts = {}) = 0;
  // GET of a non-resource path such as "/version", "/apis" or "/apis/GROUP/VERSION" (discovery);
  // returns the body. The default (for fakes) is Unimplemented.
  virtual StatusOr<std::string> GetPath(std::string_view path) {
    return UnimplementedError("GetPath " + std::string(path));
  }
  // For shutdown; irreversible and thread-safe. Requests in flight are aborted, waits between
  // retries end at once, and every later call returns Cancelled without contacting the server.
  // Without it, a process stopping while the API server is unreachable waits out each
  // informer's LIST retries (up to max_retries with backoff) one informer after another.
  // Open watches are not affected (stop them with Watcher::Stop). The default does nothing.
  virtual void Cancel() {}
};

// Lists every page (following continue tokens with `page_size`) and concatenates the items. The
// returned resource_version is the one of the first page, which is the snapshot all pages share.
StatusOr<ObjectList> ListAll(RestClient& client, const GroupVersionResource& gvr,
                             std::string_view ns, ListOptions opts, int64_t page_size = 500);

// URL path for a resource: /api/v1/namespaces/ns/configmaps/name/status.
std::string ResourcePath(const GroupVersionResource& gvr, std::string_view ns,
                         std::string_view name = "", std::string_view subresource = "");

}  // namespace draco::k8s
