#include "controller/reconcilers/event_recorder.h"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <spdlog/spdlog.h>

#include "controller/reconcilers/controller.h"
#include "k8sclient/api_error.h"

namespace draco::reconcilers {
namespace {

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

void Str(Writer& w, const char* key, std::string_view v) {
  w.Key(key);
  w.String(v.data(), static_cast<rapidjson::SizeType>(v.size()));
}

std::string EventNamespace(const EventTarget& t) {
  return t.namespace_name.empty() ? "default" : t.namespace_name;
}

}  // namespace

std::string EventJson(const EventTarget& t, std::string_view type, std::string_view reason,
                      std::string_view message, std::string_view component,
                      std::string_view instance, std::string_view first, std::string_view last,
                      int count) {
  rapidjson::StringBuffer sb;
  Writer w(sb);
  w.StartObject();
  Str(w, "apiVersion", "v1");
  Str(w, "kind", "Event");
  w.Key("metadata");
  w.StartObject();
  Str(w, "generateName", t.name + ".");
  Str(w, "namespace", EventNamespace(t));
  w.EndObject();
  w.Key("involvedObject");
  w.StartObject();
  Str(w, "apiVersion", t.api_version);
  Str(w, "kind", t.kind);
  Str(w, "name", t.name);
  if (!t.namespace_name.empty()) Str(w, "namespace", t.namespace_name);
  if (!t.uid.empty()) Str(w, "uid", t.uid);
  w.EndObject();
  Str(w, "type", type);
  Str(w, "reason", reason);
  Str(w, "message", message);
  w.Key("source");
  w.StartObject();
  Str(w, "component", component);
  w.EndObject();
  Str(w, "reportingComponent", component);
  Str(w, "reportingInstance", instance);
  Str(w, "firstTimestamp", first);
  Str(w, "lastTimestamp", last);
  w.Key("count");
  w.Int(count);
  w.EndObject();
  return sb.GetString();
}

AsyncEventRecorder::AsyncEventRecorder(k8s::RestClient& client, Clock& clock, std::string component,
                                       std::string instance, EventRecorderOptions options)
    : client_(client),
      clock_(clock),
      component_(std::move(component)),
      instance_(std::move(instance)),
      options_(options),
      thread_([this] { Loop(); }) {}

AsyncEventRecorder::~AsyncEventRecorder() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void AsyncEventRecorder::Queue(const std::string& key) {
  if (queued_.insert(key).second) pending_.push_back(key);
}

void AsyncEventRecorder::Sweep() {
  const auto now = clock_.Now();
  for (auto it = entries_.begin(); it != entries_.end();) {
    const bool expired = now - it->second.first >= options_.interval;
    const bool settled = it->second.written_count == it->second.count || it->second.count == 0;
    if (expired && settled && !queued_.count(it->first)) {
      it = entries_.erase(it);
    } else {
      ++it;
    }
  }
}

void AsyncEventRecorder::Record(const EventTarget& target, std::string_view type,
                                std::string_view reason, std::string message) {
  spdlog::info("event {} {}/{} {}: {}", type, target.kind, target.name, reason, message);
  const std::string object = target.uid.empty()
                                 ? target.kind + "/" + target.namespace_name + "/" + target.name
                                 : target.uid;
  const std::string key = object + "|" + std::string(type) + "|" + std::string(reason);
  const auto now = clock_.Now();
  const auto wall = clock_.WallNow();
  std::lock_guard<std::mutex> l(mu_);
  auto it = entries_.find(key);
  if (it != entries_.end() && now - it->second.first < options_.interval) {
    Entry& e = it->second;
    ++e.count;
    e.message = std::move(message);
    e.last_wall = wall;
    return;  // the loop writes the new count within the update period
  }
  if (it == entries_.end() && entries_.size() >= options_.max_keys) {
    Sweep();
    if (entries_.size() >= options_.max_keys) {
      spdlog::warn("too many distinct events; dropping event {} for {}", reason, target.name);
      return;
    }
  }
  Entry e;
  e.target = target;
  e.type = std::string(type);
  e.reason = std::string(reason);
  e.message = std::move(message);
  e.count = 1;
  e.first = now;
  e.first_wall = e.last_wall = wall;
  entries_[key] = std::move(e);  // a new interval: a new Event
  Queue(key);
  cv_.notify_one();
}

void AsyncEventRecorder::QueueDueUpdates(bool all) {
  const auto now = clock_.Now();
  for (auto& [key, e] : entries_) {
    if (e.count != e.written_count && (all || now - e.last_write >= options_.update_period)) {
      Queue(key);
    }
  }
}

void AsyncEventRecorder::Write(const std::string& key) {
  Entry snap;
  {
    std::lock_guard<std::mutex> l(mu_);
    auto it = entries_.find(key);
    if (it == entries_.end() || it->second.count == it->second.written_count) return;
    snap = it->second;
  }
  const std::string first = FormatTimestamp(snap.first_wall);
  const std::string last = FormatTimestamp(snap.last_wall);
  std::string created_name;
  Status st;
  if (snap.name.empty()) {
    auto r = client_.Create(kEventsGvr, EventNamespace(snap.target),
                            EventJson(snap.target, snap.type, snap.reason, snap.message, component_,
                                      instance_, first, last, snap.count));
    st = r.status();
    if (r.ok()) {
      rapidjson::Document d;
      d.Parse(r->data(), r->size());
      if (!d.HasParseError() && d.IsObject() && d.HasMember("metadata") &&
          d["metadata"].IsObject() && d["metadata"].HasMember("name") &&
          d["metadata"]["name"].IsString()) {
        created_name = d["metadata"]["name"].GetString();
      }
    }
  } else {
    rapidjson::StringBuffer sb;
    Writer w(sb);
    w.StartObject();
    w.Key("count");
    w.Int(snap.count);
    Str(w, "message", snap.message);
    Str(w, "lastTimestamp", last);
    w.EndObject();
    auto r = client_.Patch(kEventsGvr, EventNamespace(snap.target), snap.name,
                           k8s::PatchType::kMergePatch, sb.GetString());
    st = r.status();
  }
  std::lock_guard<std::mutex> l(mu_);
  auto it = entries_.find(key);
  if (it == entries_.end()) return;
  Entry& e = it->second;
  e.last_write = clock_.Now();  // also after a failure: the next try waits an update period
  if (!st.ok()) {
    spdlog::debug("event {} not recorded: {}", snap.reason, st.ToString());
    if (k8s::IsNotFound(st)) e.name.clear();  // the Event expired: create it again
    return;
  }
  e.written_count = snap.count;
  if (!created_name.empty()) e.name = created_name;
}

void AsyncEventRecorder::Loop() {
  std::unique_lock<std::mutex> l(mu_);
  auto drain_deadline = Clock::TimePoint::max();
  auto next_scan = clock_.Now();
  while (true) {
    if (pending_.empty() && !stop_) {
      clock_.WaitUntil(cv_, l, next_scan, [&] { return stop_ || !pending_.empty(); });
    }
    if (stop_ && drain_deadline == Clock::TimePoint::max()) {
      drain_deadline = clock_.Now() + std::chrono::seconds(2);
      QueueDueUpdates(/*all=*/true);
    }
    if (!stop_ && clock_.Now() >= next_scan) {
      // Every quarter update period: queue the counts that are due, forget expired Events.
      QueueDueUpdates(/*all=*/false);
      Sweep();
      next_scan = clock_.Now() + options_.update_period / 4;
    }
    if (pending_.empty() || clock_.Now() > drain_deadline) {
      if (stop_) return;
      continue;
    }
    std::string key = std::move(pending_.front());
    pending_.pop_front();
    queued_.erase(key);
    l.unlock();
    Write(key);
    l.lock();
  }
}

}  // namespace draco::reconcilers
