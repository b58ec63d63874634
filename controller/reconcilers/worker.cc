#include "controller/reconcilers/worker.h"

#include <exception>

#include <spdlog/spdlog.h>

namespace draco::reconcilers {

Worker::Worker(k8s::workqueue::RateLimitingQueue& queue, ReconcileFn fn, Clock& clock,
               metrics::ControllerMetrics* metrics)
    : queue_(queue), fn_(std::move(fn)), clock_(clock), metrics_(metrics) {}

Worker::~Worker() { Join(); }

void Worker::Run(int threads) {
  for (int i = 0; i < threads; ++i) {
    threads_.emplace_back([this] {
      while (ProcessNext()) {
      }
    });
  }
}

void Worker::Join() {
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
  threads_.clear();
}

bool Worker::ProcessNext() {
  std::optional<std::string> key = queue_.Get();
  if (!key) return false;
  auto req = ParseQueueKey(*key);
  std::string controller = req ? req->kind : "unknown";
  auto start = clock_.Now();
  StatusOr<Result> result = TerminalError("malformed key " + *key);
  if (req) {
    try {
      result = fn_(*req);
    } catch (const std::exception& e) {
      if (metrics_) metrics_->IncReconcilePanic(controller);
      result = InternalError(std::string("reconcile threw: ") + e.what());
    } catch (...) {
      if (metrics_) metrics_->IncReconcilePanic(controller);
      result = InternalError("reconcile threw");
    }
  }
  double secs = std::chrono::duration<double>(clock_.Now() - start).count();
  metrics::ReconcileResult outcome;
  if (!result.ok()) {
    if (IsTerminalError(result.status())) {
      queue_.Forget(*key);
      outcome = metrics::ReconcileResult::kTerminalError;
      spdlog::warn("{}: {}", *key, result.status().message());
    } else {
      queue_.AddRateLimited(*key);
      outcome = metrics::ReconcileResult::kError;
      spdlog::debug("{}: requeued after error: {}", *key, result.status().ToString());
    }
  } else if (result->requeue_after) {
    queue_.Forget(*key);
    queue_.AddAfter(*key, *result->requeue_after);
    outcome = metrics::ReconcileResult::kRequeueAfter;
  } else {
    queue_.Forget(*key);
    outcome = metrics::ReconcileResult::kSuccess;
  }
  if (metrics_) metrics_->ObserveReconcile(controller, outcome, secs);
  queue_.Done(*key);
  return true;
}

}  // namespace draco::reconcilers
