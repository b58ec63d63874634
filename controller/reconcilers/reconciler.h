// The reconcile contract (controller-runtime's, in Status form).
//
// A Request names one object: its kind prefix and "namespace/name" (the workqueue key is
// "<kind>:<namespace>/<name>", e.g. "pod:default/train", as in upstream's resourceclaim
// controller). Reconciliation is level-based: a reconciler reads current state from the cache,
// never from the event that triggered it.
//
// Outcomes, applied by the worker loop (Worker in worker.h):
//   error Status                     -> AddRateLimited (exponential per key), counted as "error"
//   TerminalError(...)               -> Forget, no requeue, counted as "terminal_error"
//   Result{requeue_after = d}        -> Forget then AddAfter(d), counted as "requeue_after"
//   Result{}                         -> Forget, counted as "success"
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "base/status.h"

namespace draco::reconcilers {

struct Request {
  std::string kind;  // "pod" or "claim"
  std::string namespace_name;
  std::string name;
  std::string Key() const { return namespace_name + "/" + name; }
};

// Parses "pod:ns/name". Returns nullopt for malformed keys.
std::optional<Request> ParseQueueKey(std::string_view key);
std::string QueueKey(std::string_view kind, std::string_view ns, std::string_view name);

struct Result {
  std::optional<Clock::Duration> requeue_after;
};

// A terminal error is not retried: the input is wrong and only a change to it (which arrives as a
// new event) can help. Marked by this code plus the "terminal: " prefix.
Status TerminalError(std::string message);
bool IsTerminalError(const Status& s);

}  // namespace draco::reconcilers
