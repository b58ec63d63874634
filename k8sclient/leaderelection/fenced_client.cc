#include "k8sclient/leaderelection/fenced_client.h"

namespace draco::k8s {
namespace {

constexpr std::string_view kFencedTag = "[fenced] ";

}  // namespace

FencedClient::FencedClient(std::shared_ptr<RestClient> inner, Clock& clock,
                           std::function<Clock::TimePoint()> valid_until)
    : inner_(std::move(inner)), clock_(clock), valid_until_(std::move(valid_until)) {}

bool FencedClient::Open() const { return !closed_.load() && clock_.Now() < valid_until_(); }

Status FencedClient::Admit(std::string_view verb, const GroupVersionResource& gvr,
                           std::string_view name) const {
  if (Open()) return OkStatus();
  return FailedPreconditionError(std::string(kFencedTag) + std::string(verb) + " " + gvr.resource +
                                 " " + std::string(name) +
                                 ": not leading (the leader-election term has ended)");
}

void FencedClient::Close() {
  if (closed_.exchange(true)) return;
  inner_->Cancel();
}

StatusOr<std::string> FencedClient::Get(const GroupVersionResource& gvr, std::string_view ns,
                                        std::string_view name, const GetOptions& opts) {
  return inner_->Get(gvr, ns, name, opts);
}

StatusOr<ObjectList> FencedClient::List(const GroupVersionResource& gvr, std::string_view ns,
                                        const ListOptions& opts) {
  return inner_->List(gvr, ns, opts);
}

StatusOr<std::unique_ptr<Watcher>> FencedClient::Watch(const GroupVersionResource& gvr,
                                                       std::string_view ns,
                                                       const ListOptions& opts) {
  return inner_->Watch(gvr, ns, opts);
}

StatusOr<std::string> FencedClient::GetPath(std::string_view path) { return inner_->GetPath(path); }

StatusOr<std::string> FencedClient::Create(const GroupVersionResource& gvr, std::string_view ns,
                                           std::string_view body, const CreateOptions& opts) {
  if (Status st = Admit("create", gvr, ""); !st.ok()) return st;
  return inner_->Create(gvr, ns, body, opts);
}

StatusOr<std::string> FencedClient::Update(const GroupVersionResource& gvr, std::string_view ns,
                                           std::string_view name, std::string_view body,
                                           const UpdateOptions& opts) {
  if (Status st = Admit("update", gvr, name); !st.ok()) return st;
  return inner_->Update(gvr, ns, name, body, opts);
}

StatusOr<std::string> FencedClient::UpdateStatus(const GroupVersionResource& gvr,
                                                 std::string_view ns, std::string_view name,
                                                 std::string_view body, const UpdateOptions& opts) {
  if (Status st = Admit("update status", gvr, name); !st.ok()) return st;
  return inner_->UpdateStatus(gvr, ns, name, body, opts);
}

StatusOr<std::string> FencedClient::Patch(const GroupVersionResource& gvr, std::string_view ns,
                                          std::string_view name, PatchType type,
                                          std::string_view body, const PatchOptions& opts,
                                          std::string_view subresource) {
  if (Status st = Admit("patch", gvr, name); !st.ok()) return st;
  return inner_->Patch(gvr, ns, name, type, body, opts, subresource);
}

StatusOr<std::string> FencedClient::Delete(const GroupVersionResource& gvr, std::string_view ns,
                                           std::string_view name, const DeleteOptions& opts) {
  if (Status st = Admit("delete", gvr, name); !st.ok()) return st;
  return inner_->Delete(gvr, ns, name, opts);
}

bool IsFenced(const Status& s) {
  return s.code() == StatusCode::kFailedPrecondition &&
         s.message().find(kFencedTag) != std::string::npos;
}

}  // namespace draco::k8s
