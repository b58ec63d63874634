// AsyncEventRecorder: the production EventSink, core/v1 Events over k8s::RestClient.
//
// Events are written from one background thread, so reconcilers never wait for them. They are
// aggregated as client-go's EventCorrelator aggregates one source's events: per involved object
// (UID, else kind/namespace/name), type and reason, the first occurrence in an interval
// (10 minutes) creates an Event with count 1; later occurrences only bump the count and replace
// the message, and the loop updates the Event (merge patch of count, message, lastTimestamp) at
// most once per update period (30 s; it looks every quarter period). So a failure repeated for
// one object is one Event with a count, and an API outage cannot turn into a storm of Events; a
// create that failed is retried after an update period. At most 4096 object/reason keys are
// tracked (expired ones are dropped first; beyond that new events are logged and dropped).
// Destruction flushes pending counts, drains the writes (bounded by a 2 s deadline) and joins the
// thread.
//
// Thread-safe. `client` and `clock` must outlive the recorder.
#pragma once

#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "base/clock.h"
#include "controller/reconcilers/interfaces.h"
#include "k8sclient/rest_client.h"

namespace draco::reconcilers {

inline const k8s::GroupVersionResource kEventsGvr{"", "v1", "events"};

struct EventRecorderOptions {
  Clock::Duration interval = std::chrono::minutes(10);
  Clock::Duration update_period = std::chrono::seconds(30);
  size_t max_keys = 4096;
};

class AsyncEventRecorder : public EventSink {
 public:
  // `component` is the event source (reportingController), `instance` this replica's identity.
  AsyncEventRecorder(k8s::RestClient& client, Clock& clock, std::string component,
                     std::string instance, EventRecorderOptions options = {});
  ~AsyncEventRecorder() override;
  AsyncEventRecorder(const AsyncEventRecorder&) = delete;
  AsyncEventRecorder& operator=(const AsyncEventRecorder&) = delete;
  void Record(const EventTarget& target, std::string_view type, std::string_view reason,
              std::string message) override;

 private:
  // One aggregated Event.
  struct Entry {
    EventTarget target;
    std::string type, reason, message;
    int count = 0;          // occurrences in this interval
    int written_count = 0;  // what the API server has
    std::string name;       // metadata.name once created
    Clock::TimePoint first{}, last_write{};
    std::chrono::system_clock::time_point first_wall{}, last_wall{};
  };
  void Loop();
  // Writes `key`'s entry (create or update); called without mu_ held.
  void Write(const std::string& key);
  // Queues entries whose count the server does not have and whose update period has passed.
  void QueueDueUpdates(bool all);
  void Queue(const std::string& key);
  void Sweep();

  k8s::RestClient& client_;
  Clock& clock_;
  const std::string component_, instance_;
  const EventRecorderOptions options_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, Entry> entries_;
  std::deque<std::string> pending_;  // keys to write, each at most once (queued_)
  std::set<std::string> queued_;
  bool stop_ = false;
  std::thread thread_;
};

// The core/v1 Event body (exposed for tests). `first`/`last` are RFC 3339 timestamps.
std::string EventJson(const EventTarget& target, std::string_view type, std::string_view reason,
                      std::string_view message, std::string_view component,
                      std::string_view instance, std::string_view first, std::string_view last,
                      int count);

}  // namespace draco::reconcilers
