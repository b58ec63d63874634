// RestClientImpl over cpprestsdk: the Watcher over a chunked watch response, the request loop
// (rate limit, auth, retries) and the REST verbs, and NewRestClient. The stateless helpers are in
// rest_client_helpers.cc.
#include "k8sclient/rest_client_impl.h"

#include <array>
#include <atomic>
#include <deque>
#include <exception>
#include <mutex>
#include <system_error>

#include <cpprest/http_client.h>
#include <cpprest/uri_builder.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <spdlog/spdlog.h>

#include "base/status_macros.h"
#include "base/token_bucket.h"
#include "k8sclient/api_error.h"
#include "k8sclient/auth.h"
#include "k8sclient/cpprest_watcher.h"
#include "k8sclient/direct_watcher.h"
#include "k8sclient/http_transport.h"
#include "k8sclient/proto_json.h"
#include "k8sclient/rest_client_helpers.h"
#include "k8sclient/retry_policy.h"
#include "k8sclient/tls_trust.h"
#include "k8sclient/watch_decoder.h"

#include <boost/asio/ssl.hpp>
#include <pplx/threadpool.h>

namespace draco::k8s {
namespace {

namespace http = web::http;
namespace client = web::http::client;

// Watches without timeoutSeconds still need some bound on a silent connection.
constexpr std::chrono::seconds kDefaultWatchInactivity{3600};
// Slack on top of the server-side watch timeout before the client gives up on a silent stream.
constexpr std::chrono::seconds kWatchTimeoutSlack{60};

using rest_internal::ApiVersionOf;
using rest_internal::AppendListOptions;
using rest_internal::DeleteOptionsJson;
using rest_internal::ErrorBodyJson;
using rest_internal::JoinAsHeaderLines;
using rest_internal::ParseRetryAfter;
using rest_internal::ParseRetryAfterValue;
using rest_internal::PatchContentType;
using rest_internal::StatusFromCurrentException;
using rest_internal::ValidateClientPem;

struct Request {
  http::method method;
  std::string path_query;
  std::string body;
  std::string content_type;
  bool idempotent = false;
  bool bulk = false;  // a LIST: cpprestsdk, gzip-compressed (see MakeHttpConfig)
  std::string_view accept = ProtoNegotiator::kAcceptJson;
};

struct Response {
  int code = 0;
  std::string body;
  bool protobuf = false;  // Content-Type: Kubernetes protobuf
};

class RestClientImpl;

class RestClientImpl final : public RestClient {
 public:
  RestClientImpl(RestConfig config, Clock& clock, X509StorePtr trust)
      : config_(std::move(config)),
        clock_(clock),
        trust_(std::move(trust)),
        limiter_(config_.qps, config_.burst, clock),
        tokens_(TokenSourceFor(config_, clock)),
        proto_(std::make_shared<ProtoNegotiator>(config_.protobuf)) {
    http_ = std::make_unique<client::http_client>(config_.host, MakeHttpConfig(config_.timeout));
  }

  // The direct transport for every request but LISTs and watches (http_transport.h).
  Status UseDirectTransport() {
    DRACO_ASSIGN_OR_RETURN(BaseUrl url, ParseBaseUrl(config_.host));
    DirectTransport::Options o;
    o.url = std::move(url);
    o.trust = trust_;
    o.client_cert_pem = config_.client_cert_pem;
    o.client_key_pem = config_.client_key_pem;
    o.insecure_skip_tls_verify = config_.insecure_skip_tls_verify;
    o.timeout = config_.timeout;
    DRACO_ASSIGN_OR_RETURN(direct_, DirectTransport::New(std::move(o)));
    return OkStatus();
  }

  StatusOr<std::string> Get(const GroupVersionResource& gvr, std::string_view ns,
                            std::string_view name, const GetOptions& opts) override {
    web::uri_builder b(ResourcePath(gvr, ns, name));
    if (!opts.resource_version.empty()) b.append_query("resourceVersion", opts.resource_version);
    return Read<std::string>(
        {http::methods::GET, b.to_string(), "", "", true}, gvr,
        [](std::string body) { return StatusOr<std::string>(std::move(body)); }, ProtoObjectToJson);
  }

  StatusOr<std::string> GetPath(std::string_view path) override {
    return Body(Do({http::methods::GET, std::string(path), "", "", true}));
  }

  StatusOr<ObjectList> List(const GroupVersionResource& gvr, std::string_view ns,
                            const ListOptions& opts) override {
    web::uri_builder b(ResourcePath(gvr, ns));
    AppendListOptions(b, opts, false);
    return Read<ObjectList>(
        {http::methods::GET, b.to_string(), "", "", true, /*bulk=*/true}, gvr,
        [](const std::string& body) { return ParseObjectList(body); }, ProtoListToObjects);
  }

  StatusOr<std::unique_ptr<Watcher>> Watch(const GroupVersionResource& gvr, std::string_view ns,
                                           const ListOptions& opts) override {
    web::uri_builder b(ResourcePath(gvr, ns));
    AppendListOptions(b, opts, true);
    const std::string path = b.to_string();
    auto inactivity = opts.timeout_seconds > 0
                          ? std::chrono::seconds(opts.timeout_seconds) + kWatchTimeoutSlack
                          : kDefaultWatchInactivity;
    if (direct_) {
      return WatchDirect(path, std::chrono::duration_cast<std::chrono::milliseconds>(inactivity),
                         ApiVersionOf(gvr));
    }
    std::unique_ptr<client::http_client> http;
    try {
      http = std::make_unique<client::http_client>(
          config_.host,
          MakeHttpConfig(std::chrono::duration_cast<std::chrono::milliseconds>(inactivity)));
    } catch (...) {
      return StatusFromCurrentException("watch " + path);
    }
    return RunAttempts<std::unique_ptr<Watcher>>(
        "watch " + path, true, [&]() -> Attempt<std::unique_ptr<Watcher>> {
          Attempt<std::unique_ptr<Watcher>> a;
          auto waited_from = clock_.Now();
          limiter_.Wait();
          auto sent = clock_.Now();
          try {
            http::http_request req(http::methods::GET);
            req.set_request_uri(path);
            if (Status st = AddHeaders(req); !st.ok()) {
              a.Fail(st);
              return a;
            }
            pplx::cancellation_token_source cts;
            http::http_response resp = http->request(req, cts.get_token()).get();
            a.code = resp.status_code();
            Observe("GET", path, a.code, waited_from, sent);
            if (a.code == 200) {
              a.value = std::make_unique<CpprestWatcher>(std::move(http), std::move(cts),
                                                         std::move(resp));
              return a;
            }
            std::string body = resp.extract_utf8string(true).get();
            a.error = DecodeApiError(a.code, body, ParseRetryAfter(resp.headers()));
          } catch (...) {
            if (a.code == 0) Observe("GET", path, 0, waited_from, sent);
            a.Fail(StatusFromCurrentException("watch " + path));
          }
          return a;
        });
  }

  StatusOr<std::string> Create(const GroupVersionResource& gvr, std::string_view ns,
                               std::string_view body, const CreateOptions& opts) override {
    web::uri_builder b(ResourcePath(gvr, ns));
    AppendWriteOptions(b, opts.field_manager, opts.dry_run);
    return Write({http::methods::POST, b.to_string(), std::string(body), "application/json", false},
                 gvr, ns, "");
  }

  StatusOr<std::string> Update(const GroupVersionResource& gvr, std::string_view ns,
                               std::string_view name, std::string_view body,
                               const UpdateOptions& opts) override {
    web::uri_builder b(ResourcePath(gvr, ns, name));
    AppendWriteOptions(b, opts.field_manager, opts.dry_run);
    return Write({http::methods::PUT, b.to_string(), std::string(body), "application/json", false},
                 gvr, ns, name);
  }

  StatusOr<std::string> UpdateStatus(const GroupVersionResource& gvr, std::string_view ns,
                                     std::string_view name, std::string_view body,
                                     const UpdateOptions& opts) override {
    web::uri_builder b(ResourcePath(gvr, ns, name, "status"));
    AppendWriteOptions(b, opts.field_manager, opts.dry_run);
    return Write({http::methods::PUT, b.to_string(), std::string(body), "application/json", false},
                 gvr, ns, name);
  }

  StatusOr<std::string> Patch(const GroupVersionResource& gvr, std::string_view ns,
                              std::string_view name, PatchType type, std::string_view body,
                              const PatchOptions& opts, std::string_view subresource) override {
    if (type == PatchType::kApply && opts.field_manager.empty()) {
      return InvalidArgumentError("server-side apply requires a field manager");
    }
    web::uri_builder b(ResourcePath(gvr, ns, name, subresource));
    AppendWriteOptions(b, opts.field_manager, opts.dry_run);
    if (opts.force && type == PatchType::kApply) b.append_query("force", "true");
    return Write({http::methods::PATCH, b.to_string(), std::string(body),
                  std::string(PatchContentType(type)), false},
                 gvr, ns, name);
  }

  StatusOr<std::string> Delete(const GroupVersionResource& gvr, std::string_view ns,
                               std::string_view name, const DeleteOptions& opts) override {
    web::uri_builder b(ResourcePath(gvr, ns, name));
    if (opts.dry_run) b.append_query("dryRun", "All");
    return Write({http::methods::DEL, b.to_string(), DeleteOptionsJson(opts), "application/json"},
                 gvr, ns, name);
  }

  void Cancel() override {
    {
      std::lock_guard<std::mutex> l(sleep_mu_);
      if (cancelled_.exchange(true)) return;
    }
    sleep_cv_.notify_all();
    if (direct_) direct_->Cancel();
    try {
      cancel_.cancel();
    } catch (...) {
      // Best effort; nothing may escape.
    }
  }

 private:
  // What every call returns once Cancel() was called.
  static Status CancelledStatus(const std::string& what) {
    return CancelledError(what + ": client cancelled");
  }

  client::http_client_config MakeHttpConfig(std::chrono::milliseconds timeout) const {
    return rest_internal::MakeHttpClientConfig(config_, trust_, timeout);
  }

  static void AppendWriteOptions(web::uri_builder& b, const std::string& field_manager,
                                 bool dry_run) {
    if (!field_manager.empty()) b.append_query("fieldManager", field_manager);
    if (dry_run) b.append_query("dryRun", "All");
  }

  // Every request's headers: Accept, User-Agent, credentials, impersonation (one entry per
  // group or extra value; repeated names are adjacent).
  StatusOr<HeaderList> Headers(std::string_view accept = ProtoNegotiator::kAcceptJson) {
    HeaderList h{{"Accept", std::string(accept)}, {"User-Agent", config_.user_agent}};
    if (tokens_ != nullptr) {
      auto tok = tokens_->Token();
      if (!tok.ok()) return tok.status();
      if (!tok->empty()) h.emplace_back("Authorization", "Bearer " + *tok);
    } else if (!config_.username.empty()) {
      std::vector<unsigned char> raw(config_.username.begin(), config_.username.end());
      raw.push_back(':');
      raw.insert(raw.end(), config_.password.begin(), config_.password.end());
      h.emplace_back("Authorization", "Basic " + utility::conversions::to_base64(raw));
    }
    const ImpersonationConfig& imp = config_.impersonate;
    if (!imp.user.empty()) {
      h.emplace_back("Impersonate-User", imp.user);
      if (!imp.uid.empty()) h.emplace_back("Impersonate-Uid", imp.uid);
      for (const auto& g : imp.groups) h.emplace_back("Impersonate-Group", g);
      for (const auto& [k, values] : imp.extra) {
        const std::string name = "Impersonate-Extra-" + web::uri::encode_data_string(k);
        for (const auto& v : values) h.emplace_back(name, v);
      }
    }
    return h;
  }

  Status AddHeaders(http::http_request& req,
                    std::string_view accept = ProtoNegotiator::kAcceptJson) {
    DRACO_ASSIGN_OR_RETURN(HeaderList list, Headers(accept));
    auto& h = req.headers();
    // The API server wants one header line per group/extra value, but cpprestsdk's header map
    // joins repeated names into one "a, b" line. Its Asio client writes "name: value\r\n"
    // verbatim, so further lines are appended to the first value. Values were checked for
    // CR/LF in NewRestClient, so nothing else can be injected this way.
    for (size_t i = 0; i < list.size();) {
      size_t j = i + 1;
      std::vector<std::string> values{list[i].second};
      for (; j < list.size() && list[j].first == list[i].first; ++j) {
        values.push_back(list[j].second);
      }
      h.add(list[i].first, JoinAsHeaderLines(list[i].first, values));
      i = j;
    }
    return OkStatus();
  }

  // One attempt of a request: a value, an HTTP error (code and decoded error), or a failure below
  // HTTP (`failure`, with no code) such as a refused connection or a missing token.
  template <class T>
  struct Attempt {
    std::optional<T> value;
    int code = 0;
    ApiError error;
    Status failure;
    void Fail(Status s) {
      code = 0;
      failure = std::move(s);
    }
  };

  // The one attempt loop of every request and watch: runs `attempt` until it yields a value or
  // the RetryPolicy (retry_policy.h) says stop; waits between attempts are cut short by Cancel().
  template <class T, class F>
  StatusOr<T> RunAttempts(const std::string& what, bool idempotent, F&& attempt) {
    RetryPolicy policy(config_.max_retries, config_.max_retry_wait, clock_);
    for (int n = 0;; ++n) {
      if (cancelled_.load()) return CancelledStatus(what);
      Attempt<T> a = attempt();
      if (a.value) return std::move(*a.value);
      RetryPolicy::Decision d;
      if (a.code != 0) {
        d = policy.OnHttpError(n, a.code, a.error.retry_after_seconds, tokens_ != nullptr);
        if (!d.retry()) return a.error.ToStatus();
        spdlog::debug("k8sclient: {}: HTTP {} {}, retrying in {} ms", what, a.code, a.error.reason,
                      std::chrono::duration_cast<std::chrono::milliseconds>(d.wait).count());
      } else {
        if (cancelled_.load()) return CancelledStatus(what);
        d = policy.OnTransportError(n, a.failure, idempotent);
        if (!d.retry()) return a.failure;
        spdlog::debug("k8sclient: {}; retrying", a.failure.message());
      }
      if (d.action == RetryPolicy::Decision::Action::kRefreshTokenAndRetry) tokens_->Invalidate();
      if (d.wait > Clock::Duration::zero()) Sleep(d.wait);
    }
  }

  void Sleep(Clock::Duration d) {
    // Member condition variable: a FakeClock may notify it after this waiter has returned.
    std::unique_lock<std::mutex> lock(sleep_mu_);
    clock_.WaitUntil(sleep_cv_, lock, clock_.Now() + d, [this] { return cancelled_.load(); });
  }

  StatusOr<Response> Do(const Request& r) {
    const std::string what = std::string(r.method) + " " + r.path_query;
    if (direct_ && !r.bulk) return DoDirect(r, what);
    return RunAttempts<Response>(what, r.idempotent, [&]() -> Attempt<Response> {
      Attempt<Response> a;
      auto waited_from = clock_.Now();
      limiter_.Wait();
      auto sent = clock_.Now();
      try {
        http::http_request req(r.method);
        req.set_request_uri(r.path_query);
        if (Status st = AddHeaders(req, r.accept); !st.ok()) {
          a.Fail(st);
          return a;
        }
        if (!r.content_type.empty()) req.set_body(r.body, r.content_type);
        http::http_response resp = http_->request(req, cancel_.get_token()).get();
        Response out;
        out.code = resp.status_code();
        out.protobuf = IsProtobufContentType(resp.headers().content_type());
        if (out.protobuf) {
          std::vector<unsigned char> bytes = resp.extract_vector().get();
          out.body.assign(bytes.begin(), bytes.end());
        } else {
          out.body = resp.extract_utf8string(true).get();
        }
        a.code = out.code;
        Observe(r.method, r.path_query, a.code, waited_from, sent, out.protobuf);
        if (out.code >= 200 && out.code < 300) {
          a.value = std::move(out);
          return a;
        }
        a.error = DecodeApiError(
            out.code, ErrorBodyJson(proto_->schema().get(), out.protobuf, std::move(out.body)),
            ParseRetryAfter(resp.headers()));
      } catch (...) {
        if (a.code == 0) Observe(r.method, r.path_query, 0, waited_from, sent);
        a.Fail(StatusFromCurrentException(what));
      }
      return a;
    });
  }

  // The start of one direct attempt: the rate limiter's wait (timed) and the request's headers.
  struct AttemptStart {
    Clock::TimePoint waited_from, sent;
    StatusOr<HeaderList> headers = HeaderList{};
  };
  AttemptStart Start(std::string_view accept = ProtoNegotiator::kAcceptJson) {
    AttemptStart s;
    s.waited_from = clock_.Now();
    limiter_.Wait();
    s.sent = clock_.Now();
    s.headers = Headers(accept);
    return s;
  }

  // Watch over the direct transport: same attempts, retries, errors and observations.
  StatusOr<std::unique_ptr<Watcher>> WatchDirect(const std::string& path,
                                                 std::chrono::milliseconds inactivity,
                                                 const std::string& api_version) {
    const std::string what = "watch " + path;
    return RunAttempts<std::unique_ptr<Watcher>>(
        what, true, [&]() -> Attempt<std::unique_ptr<Watcher>> {
          Attempt<std::unique_ptr<Watcher>> a;
          AttemptStart start = Start(proto_->Wants(api_version) ? ProtoNegotiator::kAcceptProtobuf
                                                                : ProtoNegotiator::kAcceptJson);
          if (!start.headers.ok()) {
            a.Fail(start.headers.status());
            return a;
          }
          const Clock::TimePoint waited_from = start.waited_from, sent = start.sent;
          auto stream = direct_->OpenStream(path, *start.headers, inactivity);
          if (!stream.ok()) {
            Observe("GET", path, 0, waited_from, sent);
            a.Fail(Status(stream.status().code(), what + ": " + stream.status().message()));
            return a;
          }
          a.code = (*stream)->head().code;
          const std::string* ct = (*stream)->head().Header("content-type");
          const bool protobuf = ct != nullptr && IsProtobufContentType(*ct);
          Observe("GET", path, a.code, waited_from, sent, protobuf);
          if (a.code == 200) {
            a.value = protobuf ? std::make_unique<DirectWatcher>(
                                     std::move(*stream), proto_->schema(),
                                     [proto = proto_, api_version](const Status& s) {
                                       proto->Refuse(api_version, s);
                                     })
                               : std::make_unique<DirectWatcher>(std::move(*stream));
            return a;
          }
          std::optional<int> retry_after =
              ParseRetryAfterValue((*stream)->head().Header("retry-after"));
          std::string body;
          for (;;) {  // the error body (a Status object); the server ends it
            StatusOr<std::string> part = (*stream)->Read();
            if (!part.ok() || part->empty()) break;
            body += *part;
          }
          a.error = DecodeApiError(a.code,
                                   ErrorBodyJson(proto_->schema().get(), protobuf, std::move(body)),
                                   retry_after);
          return a;
        });
  }

  // Do over the direct transport: same attempts, retries, errors and observations.
  StatusOr<Response> DoDirect(const Request& r, const std::string& what) {
    return RunAttempts<Response>(what, r.idempotent, [&]() -> Attempt<Response> {
      Attempt<Response> a;
      AttemptStart start = Start(r.accept);
      if (!start.headers.ok()) {
        a.Fail(start.headers.status());
        return a;
      }
      const Clock::TimePoint waited_from = start.waited_from, sent = start.sent;
      HeaderList& headers = *start.headers;
      if (!r.content_type.empty()) headers.emplace_back("Content-Type", r.content_type);
      StatusOr<HttpResponse> resp = direct_->RoundTrip(r.method, r.path_query, headers, r.body);
      if (!resp.ok()) {
        Observe(r.method, r.path_query, 0, waited_from, sent);
        a.Fail(Status(resp.status().code(), what + ": " + resp.status().message()));
        return a;
      }
      a.code = resp->code;
      const std::string* ct = resp->Header("content-type");
      const bool protobuf = ct != nullptr && IsProtobufContentType(*ct);
      Observe(r.method, r.path_query, a.code, waited_from, sent, protobuf);
      if (a.code >= 200 && a.code < 300) {
        a.value = Response{a.code, std::move(resp->body), protobuf};
        return a;
      }
      a.error = DecodeApiError(
          a.code, ErrorBodyJson(proto_->schema().get(), protobuf, std::move(resp->body)),
          ParseRetryAfterValue(resp->Header("retry-after")));
      return a;
    });
  }

  // One HTTP attempt ended: the observer (metrics) and, at spdlog's trace level (draco run -v 6
  // and up), one log line per request as client-go's round trippers print at -v 6:
  // "GET https://host:6443/api/v1/pods?limit=500 200 in 12 ms" (code 0: no response).
  void Observe(std::string_view method, std::string_view path, int code,
               Clock::TimePoint waited_from, Clock::TimePoint sent, bool protobuf = false) {
    const Clock::Duration latency = clock_.Now() - sent;
    if (spdlog::default_logger_raw()->should_log(spdlog::level::trace)) {
      spdlog::trace("{} {}{} {} in {} ms", method, config_.host, path, code,
                    std::chrono::duration_cast<std::chrono::milliseconds>(latency).count());
    }
    if (!config_.observer) return;
    RestConfig::RequestEvent e;
    e.method = method;
    e.code = code;
    e.protobuf = protobuf;
    e.latency_seconds = std::chrono::duration<double>(latency).count();
    e.rate_limiter_seconds = std::chrono::duration<double>(sent - waited_from).count();
    config_.observer(e);
  }

  static StatusOr<std::string> Body(StatusOr<Response> r) {
    if (!r.ok()) return r.status();
    return std::move(r->body);
  }

  // A write (JSON body) whose answer comes in protobuf when the schema serves `gvr`. An answer it
  // does not cover turns the group/version to JSON; the write was made, so the object is read
  // back (as JSON) instead of being written again.
  StatusOr<std::string> Write(Request r, const GroupVersionResource& gvr, std::string_view ns,
                              std::string_view name) {
    const std::string api_version = ApiVersionOf(gvr);
    if (proto_->Wants(api_version)) r.accept = ProtoNegotiator::kAcceptProtobuf;
    StatusOr<Response> resp = Do(r);
    if (!resp.ok() || !resp->protobuf) return Body(std::move(resp));
    auto json = ProtoObjectToJson(*proto_->schema(), resp->body);
    if (json.ok()) return json;
    proto_->Refuse(api_version, json.status());
    auto live = Get(gvr, ns, name.empty() ? ProtoObjectName(resp->body) : std::string(name), {});
    return live.ok() || !IsNotFound(live.status())
               ? live
               : std::string(R"({"kind":"Status","apiVersion":"v1","status":"Success"})");
  }

  // A read of `gvr`: in protobuf when the schema serves it (decoded by `from_proto`), else JSON
  // (`from_json`); a response the schema does not cover turns the group/version to JSON and the
  // read is made again.
  template <class T, class FromJson, class FromProto>
  StatusOr<T> Read(Request r, const GroupVersionResource& gvr, FromJson from_json,
                   FromProto from_proto) {
    const std::string api_version = ApiVersionOf(gvr);
    if (proto_->Wants(api_version)) {
      r.accept = ProtoNegotiator::kAcceptProtobuf;
      StatusOr<Response> resp = Do(r);
      if (!resp.ok()) return resp.status();
      if (!resp->protobuf) return from_json(std::move(resp->body));
      StatusOr<T> out = from_proto(*proto_->schema(), resp->body);
      if (out.ok()) return out;
      proto_->Refuse(api_version, out.status());
      r.accept = ProtoNegotiator::kAcceptJson;
    }
    StatusOr<Response> resp = Do(r);
    if (!resp.ok()) return resp.status();
    return from_json(std::move(resp->body));
  }

  const RestConfig config_;
  Clock& clock_;
  const X509StorePtr trust_;
  TokenBucket limiter_;
  std::unique_ptr<TokenSource> tokens_;
  std::unique_ptr<client::http_client> http_;
  std::unique_ptr<DirectTransport> direct_;  // null: every request over cpprestsdk
  // Shared with protobuf watchers, which may outlive this client.
  std::shared_ptr<ProtoNegotiator> proto_;
  std::mutex sleep_mu_;
  std::condition_variable sleep_cv_;
  std::atomic<bool> cancelled_{false};
  pplx::cancellation_token_source cancel_;  // aborts requests in flight on Cancel()
};

}  // namespace

Status SetTransportThreads(size_t threads) {
  if (threads < 1) return InvalidArgumentError("transport threads must be >= 1");
  try {
    crossplat::threadpool::initialize_with_threads(threads);
  } catch (...) {
    return FailedPreconditionError("the HTTP transport's thread pool is already running");
  }
  return OkStatus();
}

StatusOr<std::unique_ptr<RestClient>> NewRestClient(const RestConfig& config, Clock& clock) {
  DRACO_RETURN_IF_ERROR(rest_internal::ValidateRestConfig(config));
  // The CA bundle is parsed once, into the store every connection shares (and refused when it
  // holds no certificate), before the client certificate and key are checked.
  DRACO_ASSIGN_OR_RETURN(X509StorePtr trust, TrustStoreFor(config.ca_pem, GetSystemTrust()));
  DRACO_RETURN_IF_ERROR(ValidateClientPem(config.client_cert_pem, config.client_key_pem));
  try {
    auto c = std::make_unique<RestClientImpl>(config, clock, std::move(trust));
    if (config.direct_transport) DRACO_RETURN_IF_ERROR(c->UseDirectTransport());
    return std::unique_ptr<RestClient>(std::move(c));
  } catch (...) {
    return StatusFromCurrentException("creating client for " + config.host);
  }
}

}  // namespace draco::k8s
