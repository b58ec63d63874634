#include "controller/reconcilers/reconciler.h"

namespace draco::reconcilers {

std::optional<Request> ParseQueueKey(std::string_view key) {
  size_t colon = key.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  std::string_view rest = key.substr(colon + 1);
  size_t slash = rest.find('/');
  Request r;
  r.kind = std::string(key.substr(0, colon));
  if (slash == std::string_view::npos) {
    r.name = std::string(rest);
  } else {
    r.namespace_name = std::string(rest.substr(0, slash));
    r.name = std::string(rest.substr(slash + 1));
  }
  if (r.kind.empty() || r.name.empty()) return std::nullopt;
  return r;
}

std::string QueueKey(std::string_view kind, std::string_view ns, std::string_view name) {
  std::string k(kind);
  k += ':';
  k += ns;
  k += '/';
  k += name;
  return k;
}

Status TerminalError(std::string message) {
  return {StatusCode::kFailedPrecondition, "terminal: " + std::move(message)};
}

bool IsTerminalError(const Status& s) {
  return s.code() == StatusCode::kFailedPrecondition && s.message().rfind("terminal: ", 0) == 0;
}

}  // namespace draco::reconcilers
