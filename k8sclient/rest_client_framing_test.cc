// RestClientImpl against a scripted local HTTP server: wire format, chunked watch framing,
// error decoding, retries, rate limiting, connection reuse, timeouts and auth headers.
#include <atomic>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include "k8sclient/api_error.h"
#include "k8sclient/rest_client_impl.h"
#include "k8sclient/testing/fake_http_server.h"

namespace draco::k8s {
namespace {

using testing::FakeHttpServer;
using testing::HttpRequest;
using testing::HttpResponse;

RestConfig ConfigFor(const FakeHttpServer& s) {
  RestConfig c;
  c.host = s.url();
  c.qps = 0;  // unlimited unless a test sets it
  c.max_retry_wait = std::chrono::milliseconds(20);
  c.timeout = std::chrono::seconds(10);
  return c;
}

// Every test runs over both transports (RestConfig::direct_transport), set by the fixture.
bool g_direct = true;

class RestClientFramingTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override { g_direct = GetParam(); }
};

INSTANTIATE_TEST_SUITE_P(Transports, RestClientFramingTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& i) {
                           return i.param ? "Direct" : "Cpprestsdk";
                         });

std::unique_ptr<RestClient> MustClient(RestConfig c, Clock& clock = RealClock::Get()) {
  c.direct_transport = g_direct;
  auto r = NewRestClient(c, clock);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? std::move(r).value() : nullptr;
}

std::string Event(const std::string& type, const std::string& name, const std::string& rv) {
  return R"({"type":")" + type + R"(","object":{"kind":"ConfigMap","metadata":{"name":")" + name +
         R"(","namespace":"ns","resourceVersion":")" + rv + R"("}}})" + "\n";
}

TEST_P(RestClientFramingTest, WatchEventsSplitAcrossChunkBoundaries) {
  const std::string stream = Event("ADDED", "a", "1") + Event("MODIFIED", "a", "2") +
                             R"({"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"3"}}})"
                             "\n" +
                             Event("DELETED", "a", "4");
  // Chunks cut mid-token, right before a newline, and right after one.
  std::vector<std::string> chunks;
  const size_t cuts[] = {7, 40, stream.find('\n'), stream.find('\n') + 1, stream.size() - 3};
  size_t prev = 0;
  for (size_t c : cuts) {
    if (c > prev) chunks.push_back(stream.substr(prev, c - prev));
    prev = std::max(prev, c);
  }
  chunks.push_back(stream.substr(prev));
  FakeHttpServer server([&](const HttpRequest&) {
    HttpResponse r;
    r.chunks = chunks;
    r.chunk_delay = std::chrono::milliseconds(5);
    return r;
  });
  ASSERT_TRUE(server.Start());
  auto client = MustClient(ConfigFor(server));
  ListOptions o;
  o.resource_version = "0";
  o.allow_watch_bookmarks = true;
  o.timeout_seconds = 300;
  o.label_selector = "app in (a,b),tier!=db";
  auto w = client->Watch(kConfigMaps, "ns", o);
  ASSERT_TRUE(w.ok()) << w.status();
  std::vector<std::pair<WatchEvent::Type, std::string>> got;
  while (true) {
    auto ev = (*w)->Next();
    ASSERT_TRUE(ev.ok()) << ev.status();
    if (!ev->has_value()) break;
    got.emplace_back((*ev)->type, (*ev)->object->resource_version());
  }
  using T = WatchEvent::Type;
  EXPECT_EQ(got,
            (std::vector<std::pair<T, std::string>>{
                {T::kAdded, "1"}, {T::kModified, "2"}, {T::kBookmark, "3"}, {T::kDeleted, "4"}}));
  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_EQ(reqs[0].path, "/api/v1/namespaces/ns/configmaps");
  EXPECT_EQ(reqs[0].query.at("watch"), "true");
  EXPECT_EQ(reqs[0].query.at("resourceVersion"), "0");
  EXPECT_EQ(reqs[0].query.at("allowWatchBookmarks"), "true");
  EXPECT_EQ(reqs[0].query.at("timeoutSeconds"), "300");
  EXPECT_EQ(reqs[0].query.at("labelSelector"), "app in (a,b),tier!=db");
}

TEST_P(RestClientFramingTest, OneByteChunksAndManyEventsPerChunk) {
  std::string stream;
  for (int i = 0; i < 50; ++i) stream += Event("ADDED", "o" + std::to_string(i), std::to_string(i));
  std::vector<std::string> chunks;
  for (size_t i = 0; i < 300; ++i) chunks.push_back(stream.substr(i, 1));  // byte-sized first
  chunks.push_back(stream.substr(300));                                    // then the rest at once
  FakeHttpServer server([&](const HttpRequest&) {
    HttpResponse r;
    r.chunks = chunks;
    return r;
  });
  ASSERT_TRUE(server.Start());
  auto client = MustClient(ConfigFor(server));
  auto w = client->Watch(kConfigMaps, "", {});
  ASSERT_TRUE(w.ok()) << w.status();
  int n = 0;
  while (true) {
    auto ev = (*w)->Next();
    ASSERT_TRUE(ev.ok()) << ev.status();
    if (!ev->has_value()) break;
    EXPECT_EQ((*ev)->object->name(), "o" + std::to_string(n));
    ++n;
  }
  EXPECT_EQ(n, 50);
  EXPECT_EQ(server.requests()[0].path, "/api/v1/configmaps");
}

TEST_P(RestClientFramingTest, WatchErrorEventIsDecodedAsGone) {
  FakeHttpServer server([](const HttpRequest&) {
    HttpResponse r;
    r.chunks = {
        R"({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure",)",
        R"j("message":"too old resource version: 5 (10)","reason":"Expired","code":410}})j"
        "\n"};
    return r;
  });
  ASSERT_TRUE(server.Start());
  auto client = MustClient(ConfigFor(server));
  auto w = client->Watch(kConfigMaps, "ns", {});
  ASSERT_TRUE(w.ok());
  auto ev = (*w)->Next();
  ASSERT_TRUE(ev.ok() && ev->has_value());
  EXPECT_EQ((*ev)->type, WatchEvent::Type::kError);
  EXPECT_TRUE(IsGone((*ev)->error)) << (*ev)->error;
  EXPECT_NE((*ev)->error.message().find("too old resource version"), std::string::npos);
}

TEST_P(RestClientFramingTest, StreamCutMidEventIsAnError) {
  FakeHttpServer server([](const HttpRequest&) {
    HttpResponse r;
    r.chunks = {Event("ADDED", "a", "1"), R"({"type":"ADDED","obj)"};
    return r;
  });
  ASSERT_TRUE(server.Start());
  auto client = MustClient(ConfigFor(server));
  auto w = client->Watch(kConfigMaps, "ns", {});
  ASSERT_TRUE(w.ok());
  auto first = (*w)->Next();
  ASSERT_TRUE(first.ok() && first->has_value());
  auto second = (*w)->Next();
  EXPECT_FALSE(second.ok());
}

TEST_P(RestClientFramingTest, StopUnblocksAHangingWatch) {
  FakeHttpServer server([](const HttpRequest&) {
    HttpResponse r;
    r.chunks = {Event("ADDED", "a", "1")};
    r.hang = true;
    return r;
  });
  ASSERT_TRUE(server.Start());
  auto client = MustClient(ConfigFor(server));
  auto w = client->Watch(kConfigMaps, "ns", {});
  ASSERT_TRUE(w.ok());
  auto first = (*w)->Next();
  ASSERT_TRUE(first.ok() && first->has_value());
  std::atomic<bool> returned{false};
  std::thread reader([&] {
    auto ev = (*w)->Next();
    EXPECT_TRUE(ev.ok());
    EXPECT_FALSE(ev.ok() && ev->has_value());
    returned = true;
  });
  (*w)->Stop();
  reader.join();
  EXPECT_TRUE(returned.load());
  server.Stop();
}

TEST_P(RestClientFramingTest, WatchHttpErrorIsReturnedFromWatch) {
  FakeHttpServer server([](const HttpRequest&) {
    HttpResponse r;
    r.status = 410;
    r.body = R"({"kind":"Status","reason":"Expired","code":410,"message":"expired"})";
    return r;
  });
  ASSERT_TRUE(server.Start());
  auto client = MustClient(ConfigFor(server));
  auto w = client->Watch(kConfigMaps, "ns", {});
  EXPECT_TRUE(IsGone(w.status())) << w.status();
}

TEST_P(RestClientFramingTest, TooManyRequestsIsRetriedAfterRetryAfter) {
  std::atomic<int> calls{0};
  FakeHttpServer server([&](const HttpRequest&) {
    HttpResponse r;
    if (calls++ < 2) {
      r.status = 429;
      r.headers = {{"Retry-After", "1"}};
      r.body = R"({"kind":"Status","reason":"TooManyRequests","code":429})";
      return r;
    }
    r.body = R"({"metadata":{"name":"a","resourceVersion":"7"}})";
    return r;
  });
  ASSERT_TRUE(server.Start());
  auto client = MustClient(ConfigFor(server));
  auto got = client->Get(kConfigMaps, "ns", "a");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(calls.load(), 3);
}

TEST_P(RestClientFramingTest, ObserverSeesEveryAttemptWithMethodCodeAndLatency) {
  std::atomic<int> calls{0};
  FakeHttpServer server([&](const HttpRequest&) {
    HttpResponse r;
    if (calls++ == 0) {
      r.status = 429;
      r.headers = {{"Retry-After", "1"}};
      r.body = R"({"kind":"Status","reason":"TooManyRequests","code":429})";
      return r;
    }
    r.status = 201;
    r.body = R"({"metadata":{"name":"a","resourceVersion":"7"}})";
    return r;
  });
  ASSERT_TRUE(server.Start());
  RestConfig c = ConfigFor(server);
  std::mutex mu;
  std::vector<std::pair<std::string, int>> seen;
  double latency = -1;
  c.observer = [&](const RestConfig::RequestEvent& e) {
    std::lock_guard<std::mutex> l(mu);
    seen.emplace_back(std::string(e.method), e.code);
    latency = e.latency_seconds;
  };
  auto client = MustClient(c);
  ASSERT_TRUE(client->Create(kConfigMaps, "ns", "{}").ok());
  std::lock_guard<std::mutex> l(mu);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0], std::make_pair(std::string("POST"), 429));
  EXPECT_EQ(seen[1], std::make_pair(std::string("POST"), 201));
  EXPECT_GE(latency, 0);
}

// At spdlog's trace level (draco run -v 6) every request is one line: method, URL, code, latency.
TEST_P(RestClientFramingTest, TraceLevelLogsOneLinePerRequest) {
  FakeHttpServer server([&](const HttpRequest&) {
    HttpResponse r;
    r.status = 200;
    r.body = R"({"metadata":{"name":"a","resourceVersion":"7"}})";
    return r;
  });
  ASSERT_TRUE(server.Start());
  auto out = std::make_shared<std::ostringstream>();
  auto previous = spdlog::default_logger();
  auto capture = std::make_shared<spdlog::logger>(
      "capture", std::make_shared<spdlog::sinks::ostream_sink_mt>(*out));
  capture->set_pattern("%v");
  spdlog::set_default_logger(capture);
  auto client = MustClient(ConfigFor(server));
  capture->set_level(spdlog::level::debug);
  ASSERT_TRUE(client->Get(kConfigMaps, "ns", "quiet").ok());
  capture->set_level(spdlog::level::trace);
  ASSERT_TRUE(client->Get(kConfigMaps, "ns", "a").ok());
  spdlog::set_default_logger(previous);
  const std::string logged = out->str();
  EXPECT_EQ(logged.find("quiet"), std::string::npos) << logged;  // below trace: no line
  EXPECT_NE(logged.find("GET " + server.url() + "/api/v1/namespaces/ns/configmaps/a 200 in "),
            std::string::npos)
      << logged;
  EXPECT_NE(logged.find(" ms\n"), std::string::npos) << logged;
}

TEST_P(RestClientFramingTest, CancelEndsRetryWaitsAndLaterCalls) {
  std::atomic<int> calls{0};
  FakeHttpServer server([&](const HttpRequest&) {
    ++calls;
    HttpResponse r;
    r.status = 503;
    r.headers = {{"Retry-After", "5"}};
    r.body = R"({"kind":"Status","reason":"ServiceUnavailable","code":503})";
    return r;
  });
  ASSERT_TRUE(server.Start());
  RestConfig c = ConfigFor(server);
  c.max_retry_wait = std::chrono::seconds(10);  // honour the 5 s Retry-After
  auto client = MustClient(c);
  StatusOr<std::string> got = std::string();
  auto start = std::chrono::steady_clock::now();
  std::thread t([&] { got = client->Get(kConfigMaps, "ns", "a"); });
  while (calls.load() < 1) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // now in the 5 s wait
  client->Cancel();
  t.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kCancelled) << got.status();
  const int before = calls.load();
  auto later = client->List(kConfigMaps, "ns");
  EXPECT_EQ(later.status().code(), StatusCode::kCancelled);
  EXPECT_EQ(calls.load(), before);  // nothing was sent
  client->Cancel();                 // idempotent
}

TEST_P(RestClientFramingTest, ConnectionFailureIsObservedWithCodeZero) {
  RestConfig c;
  c.host = "http://127.0.0.1:1";  // nothing listens
  c.qps = 0;
  c.max_retries = 0;
  std::atomic<int> zero{0};
  c.observer = [&](const RestConfig::RequestEvent& e) {
    if (e.code == 0) ++zero;
  };
  auto client = MustClient(c);
  EXPECT_FALSE(client->Create(kConfigMaps, "ns", "{}").ok());
  EXPECT_EQ(zero.load(), 1);
}

TEST_P(RestClientFramingTest, TooManyRequestsExhaustsRetries) {
  FakeHttpServer server([&](const HttpRequest&) {
    HttpResponse r;
    r.status = 429;
    r.headers = {{"Retry-After", "2"}};
    r.body = R"({"kind":"Status","reason":"TooManyRequests","code":429,"message":"slow"})";
    return r;
  });
  ASSERT_TRUE(server.Start());
  RestConfig c = ConfigFor(server);
  c.max_retries = 3;
  auto client = MustClient(c);
  // A write is retried too: the server rejected it before processing.
  auto got = client->Create(kConfigMaps, "ns", "{}");
  EXPECT_TRUE(IsTooManyRequests(got.status())) << got.status();
  EXPECT_EQ(RetryAfterSeconds(got.status()), 2);
  EXPECT_EQ(server.requests().size(), 4u);
}

TEST_P(RestClientFramingTest, ErrorsWithoutRetryAfterAreNotRetried) {
  FakeHttpServer server([&](const HttpRequest& req) {
    HttpResponse r;
    if (req.path.find("/gone") != std::string::npos) {
      r.status = 410;
      r.body = R"({"kind":"Status","reason":"Gone","code":410})";
    } else if (req.path.find("/internal") != std::string::npos) {
      r.status = 500;
      r.body = R"({"kind":"Status","reason":"InternalError","code":500,"message":"etcd"})";
    } else {
      r.status = 503;
      r.headers = {{"Content-Type", "text/plain"}};
      r.body = "upstream down";
    }
    return r;
  });
  ASSERT_TRUE(server.Start());
  auto client = MustClient(ConfigFor(server));
  EXPECT_TRUE(IsGone(client->Get(kConfigMaps, "ns", "gone").status()));
  auto internal = client->Get(kConfigMaps, "ns", "internal");
  EXPECT_TRUE(IsInternalError(internal.status())) << internal.status();
  auto unavailable = client->Get(kConfigMaps, "ns", "other");
  EXPECT_TRUE(IsServiceUnavailable(unavailable.status())) << unavailable.status();
  EXPECT_NE(unavailable.status().message().find("upstream down"), std::string::npos);
  EXPECT_EQ(server.requests().size(), 3u);
}

TEST_P(RestClientFramingTest, ConnectionRefusedIsUnavailableAfterBoundedRetries) {
  int port;
  {
    FakeHttpServer probe([](const HttpRequest&) { return HttpResponse{}; });
    ASSERT_TRUE(probe.Start());
    port = probe.port();
  }
  RestConfig c;
  c.host = "http://127.0.0.1:" + std::to_string(port);
  c.qps = 0;
  c.max_retries = 2;
  c.max_retry_wait = std::chrono::milliseconds(10);
  auto client = MustClient(c);
  auto got = client->Get(kConfigMaps, "ns", "a");
  EXPECT_EQ(got.status().code(), StatusCode::kUnavailable) << got.status();
}

TEST_P(RestClientFramingTest, PerRequestTimeout) {
  FakeHttpServer server([](const HttpRequest&) {
    HttpResponse r;
    r.chunks = {};
    r.hang = true;  // headers only, then silence
    r.chunks = {"{"};
    return r;
  });
  ASSERT_TRUE(server.Start());
  RestConfig c = ConfigFor(server);
  c.timeout = std::chrono::milliseconds(300);
  c.max_retries = 0;
  auto client = MustClient(c);
  auto got = client->Create(kConfigMaps, "ns", "{}");
  EXPECT_EQ(got.status().code(), StatusCode::kDeadlineExceeded) << got.status();
  server.Stop();
}

TEST_P(RestClientFramingTest, ReusesOneKeepAliveConnection) {
  FakeHttpServer server([](const HttpRequest&) {
    HttpResponse r;
    r.body = R"({"metadata":{"name":"a"}})";
    return r;
  });
  ASSERT_TRUE(server.Start());
  auto client = MustClient(ConfigFor(server));
  for (int i = 0; i < 50; ++i) ASSERT_TRUE(client->Get(kConfigMaps, "ns", "a").ok());
  // cpprestsdk hands the connection back to its pool just after the response completes, so a
  // request issued immediately may open a second one; without keep-alive this would be 50.
  // (Under TSan the hand-back is slower, hence the loose bound.)
  EXPECT_LT(server.connections(), 10);
}

TEST_P(RestClientFramingTest, VerbsPathsHeadersAndBodies) {
  FakeHttpServer server([](const HttpRequest&) {
    HttpResponse r;
    r.body = R"({"metadata":{"name":"a"}})";
    return r;
  });
  ASSERT_TRUE(server.Start());
  RestConfig c = ConfigFor(server);
  c.bearer_token = "secret";
  c.impersonate.user = "alice";
  c.impersonate.groups = {"g1", "g2"};
  c.impersonate.extra["scopes"] = {"view"};
  c.user_agent = "test-agent";
  auto client = MustClient(c);
  const GroupVersionResource slices{"resource.k8s.io", "v1", "resourceslices"};
  ASSERT_TRUE(client->Get(slices, "", "s1", {"5"}).ok());
  ListOptions lo;
  lo.limit = 500;
  lo.continue_token = "tok";
  lo.field_selector = "metadata.name=x";
  lo.resource_version = "10";
  lo.resource_version_match = "NotOlderThan";
  ASSERT_TRUE(client->List(kConfigMaps, "ns", lo).ok());
  CreateOptions co;
  co.field_manager = "draco";
  co.dry_run = true;
  ASSERT_TRUE(client->Create(kConfigMaps, "ns", R"({"a":1})", co).ok());
  ASSERT_TRUE(client->Update(kConfigMaps, "ns", "a", R"({"b":1})").ok());
  ASSERT_TRUE(client->UpdateStatus(kPods, "ns", "p", R"({"c":1})").ok());
  PatchOptions po;
  po.field_manager = "draco";
  po.force = true;
  ASSERT_TRUE(client->Patch(kConfigMaps, "ns", "a", PatchType::kApply, "{}", po).ok());
  ASSERT_TRUE(client->Patch(kConfigMaps, "ns", "a", PatchType::kMergePatch, "{}").ok());
  ASSERT_TRUE(client->Patch(kConfigMaps, "ns", "a", PatchType::kJsonPatch, "[]").ok());
  ASSERT_TRUE(client->Patch(kPods, "ns", "p", PatchType::kStrategicMerge, "{}", {}, "status").ok());
  DeleteOptions d;
  d.precondition_uid = "u1";
  d.precondition_resource_version = "9";
  d.propagation_policy = "Foreground";
  d.grace_period_seconds = 0;
  ASSERT_TRUE(client->Delete(kConfigMaps, "ns", "a", d).ok());

  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 10u);
  for (const auto& r : reqs) {
    EXPECT_EQ(r.headers.at("authorization"), "Bearer secret");
    EXPECT_EQ(r.headers.at("impersonate-user"), "alice");
    // Two separate header lines (the fake server joins repeated headers with ",").
    EXPECT_EQ(r.headers.at("impersonate-group"), "g1,g2");
    EXPECT_EQ(r.headers.at("impersonate-extra-scopes"), "view");
    EXPECT_EQ(r.headers.at("user-agent"), "test-agent");
    EXPECT_EQ(r.headers.at("accept"), "application/json");
  }
  EXPECT_EQ(reqs[0].method, "GET");
  EXPECT_EQ(reqs[0].path, "/apis/resource.k8s.io/v1/resourceslices/s1");
  EXPECT_EQ(reqs[0].query.at("resourceVersion"), "5");
  EXPECT_EQ(reqs[1].query.at("limit"), "500");
  EXPECT_EQ(reqs[1].query.at("continue"), "tok");
  EXPECT_EQ(reqs[1].query.at("fieldSelector"), "metadata.name=x");
  EXPECT_EQ(reqs[1].query.at("resourceVersionMatch"), "NotOlderThan");
  EXPECT_EQ(reqs[1].query.count("watch"), 0u);
  EXPECT_EQ(reqs[2].method, "POST");
  EXPECT_EQ(reqs[2].body, R"({"a":1})");
  EXPECT_EQ(reqs[2].query.at("fieldManager"), "draco");
  EXPECT_EQ(reqs[2].query.at("dryRun"), "All");
  EXPECT_EQ(reqs[2].headers.at("content-type").rfind("application/json", 0), 0u);
  EXPECT_EQ(reqs[3].method, "PUT");
  EXPECT_EQ(reqs[3].path, "/api/v1/namespaces/ns/configmaps/a");
  EXPECT_EQ(reqs[4].path, "/api/v1/namespaces/ns/pods/p/status");
  EXPECT_EQ(reqs[5].method, "PATCH");
  EXPECT_EQ(reqs[5].headers.at("content-type").rfind("application/apply-patch+yaml", 0), 0u);
  EXPECT_EQ(reqs[5].query.at("force"), "true");
  EXPECT_EQ(reqs[6].headers.at("content-type").rfind("application/merge-patch+json", 0), 0u);
  EXPECT_EQ(reqs[6].query.count("force"), 0u);
  EXPECT_EQ(reqs[7].headers.at("content-type").rfind("application/json-patch+json", 0), 0u);
  EXPECT_EQ(reqs[8].headers.at("content-type").rfind("application/strategic-merge-patch+json", 0),
            0u);
  EXPECT_EQ(reqs[8].path, "/api/v1/namespaces/ns/pods/p/status");
  EXPECT_EQ(reqs[9].method, "DELETE");
  EXPECT_NE(reqs[9].body.find(R"("preconditions":{"uid":"u1","resourceVersion":"9"})"),
            std::string::npos);
  EXPECT_NE(reqs[9].body.find(R"("propagationPolicy":"Foreground")"), std::string::npos);
  EXPECT_NE(reqs[9].body.find(R"("gracePeriodSeconds":0)"), std::string::npos);
}

TEST_P(RestClientFramingTest, UnauthorizedRereadsRotatedTokenFileOnce) {
  const std::string path = "/tmp/k8sclient-token-" + std::to_string(::getpid());
  std::ofstream(path) << "old";
  FakeHttpServer server([](const HttpRequest& req) {
    HttpResponse r;
    if (req.headers.at("authorization") != "Bearer new") {
      r.status = 401;
      r.body = R"({"kind":"Status","reason":"Unauthorized","code":401})";
      return r;
    }
    r.body = R"({"metadata":{"name":"a"}})";
    return r;
  });
  ASSERT_TRUE(server.Start());
  RestConfig c = ConfigFor(server);
  c.bearer_token_file = path;
  auto client = MustClient(c);
  EXPECT_TRUE(IsUnauthorized(client->Get(kConfigMaps, "ns", "a").status()));
  std::ofstream(path) << "new\n";  // rotated
  EXPECT_TRUE(client->Get(kConfigMaps, "ns", "a").ok());
  std::filesystem::remove(path);
}

TEST_P(RestClientFramingTest, ClientSideRateLimitUsesTheClock) {
  FakeHttpServer server([](const HttpRequest&) {
    HttpResponse r;
    r.body = R"({"metadata":{"name":"a"}})";
    return r;
  });
  ASSERT_TRUE(server.Start());
  RestConfig c = ConfigFor(server);
  c.qps = 1;
  c.burst = 2;
  FakeClock clock;
  auto client = MustClient(c, clock);
  ASSERT_TRUE(client->Get(kConfigMaps, "ns", "a").ok());
  ASSERT_TRUE(client->Get(kConfigMaps, "ns", "a").ok());
  std::atomic<bool> third_done{false};
  std::thread t([&] {
    EXPECT_TRUE(client->Get(kConfigMaps, "ns", "a").ok());
    third_done = true;
  });
  while (clock.Waiters() == 0) std::this_thread::yield();
  EXPECT_FALSE(third_done.load());
  EXPECT_EQ(server.requests().size(), 2u);
  clock.Step(std::chrono::seconds(1));
  t.join();
  EXPECT_EQ(server.requests().size(), 3u);
}

TEST_P(RestClientFramingTest, RejectsBadConfig) {
  RestConfig c;
  EXPECT_FALSE(NewRestClient(c).ok());
  c.host = "ftp://x";
  EXPECT_FALSE(NewRestClient(c).ok());
  c.host = "https://127.0.0.1:1";
  c.ca_pem = "not a pem";
  EXPECT_EQ(NewRestClient(c).status().code(), StatusCode::kInvalidArgument);
  c.ca_pem.clear();
  c.client_cert_pem = "x";
  EXPECT_FALSE(NewRestClient(c).ok());
  c.client_cert_pem.clear();
  c.impersonate.user = "alice";
  c.impersonate.groups = {"g1\r\nX-Evil: 1"};
  EXPECT_EQ(NewRestClient(c).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace draco::k8s
