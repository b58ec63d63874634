// See manager.h.
#include "controller/run/manager.h"

#include <spdlog/spdlog.h>

namespace draco::run {

Manager::~Manager() { Stop(); }

void Manager::Add(Runnable r) { runnables_.push_back(std::move(r)); }

Status Manager::Start() {
  while (started_ < runnables_.size()) {
    Runnable& r = runnables_[started_];
    spdlog::debug("starting {}", r.name);
    if (Status st = r.start ? r.start() : OkStatus(); !st.ok()) {
      Stop();
      return st.WithPrefix(r.name);
    }
    ++started_;
  }
  return OkStatus();
}

void Manager::Stop() {
  for (size_t i = started_; i-- > 0;) {
    if (runnables_[i].begin_stop) {
      spdlog::debug("stopping {}", runnables_[i].name);
      runnables_[i].begin_stop();
    }
  }
  for (size_t i = started_; i-- > 0;) {
    if (runnables_[i].wait) {
      runnables_[i].wait();
      spdlog::debug("stopped {}", runnables_[i].name);
    }
  }
  started_ = 0;
}

std::vector<std::string> Manager::Running() const {
  std::vector<std::string> out;
  for (size_t i = 0; i < started_; ++i) out.push_back(runnables_[i].name);
  return out;
}

}  // namespace draco::run
