#include "k8sclient/auth.h"

#include <fcntl.h>
#include <spawn.h>
#include <unistd.h>

#include <array>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "k8sclient/tls_trust.h"

#include <sys/wait.h>

extern char** environ;  // NOLINT(readability-redundant-declaration)

namespace draco::k8s {
namespace {

std::string Trim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  size_t i = 0;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  return s.substr(i);
}

std::string Str(const rapidjson::Value& obj, const char* field) {
  if (!obj.IsObject()) return {};
  auto it = obj.FindMember(field);
  if (it == obj.MemberEnd() || !it->value.IsString()) return {};
  return {it->value.GetString(), it->value.GetStringLength()};
}

std::string ExecInfoJson(const ExecConfig& exec, const std::string& server,
                         const std::string& ca_pem) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.StartObject();
  w.Key("apiVersion");
  w.String(exec.api_version.c_str());
  w.Key("kind");
  w.String("ExecCredential");
  w.Key("spec");
  w.StartObject();
  w.Key("interactive");
  w.Bool(false);
  if (exec.provide_cluster_info) {
    w.Key("cluster");
    w.StartObject();
    w.Key("server");
    w.String(server.c_str());
    if (!ca_pem.empty()) {
      // certificate-authority-data is base64 in the wire format.
      static constexpr std::string_view kAlphabet =
          "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
      std::string b64;
      size_t i = 0;
      for (; i + 2 < ca_pem.size(); i += 3) {
        unsigned v = (static_cast<unsigned char>(ca_pem[i]) << 16) |
                     (static_cast<unsigned char>(ca_pem[i + 1]) << 8) |
                     static_cast<unsigned char>(ca_pem[i + 2]);
        for (int k = 3; k >= 0; --k) b64.push_back(kAlphabet[(v >> (6 * k)) & 63]);
      }
      if (size_t rest = ca_pem.size() - i; rest > 0) {
        unsigned v = static_cast<unsigned char>(ca_pem[i]) << 16;
        if (rest == 2) v |= static_cast<unsigned char>(ca_pem[i + 1]) << 8;
        b64.push_back(kAlphabet[(v >> 18) & 63]);
        b64.push_back(kAlphabet[(v >> 12) & 63]);
        b64.push_back(rest == 2 ? kAlphabet[(v >> 6) & 63] : '=');
        b64.push_back('=');
      }
      w.Key("certificate-authority-data");
      w.String(b64.c_str());
    }
    w.EndObject();
  }
  w.EndObject();
  w.EndObject();
  return {buf.GetString(), buf.GetSize()};
}

}  // namespace

StatusOr<std::chrono::system_clock::time_point> ParseRfc3339(const std::string& s) {
  int y, mo, d, h, mi, sec;
  int consumed = 0;
  if (std::sscanf(s.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &sec, &consumed) !=
      6) {
    return InvalidArgumentError("not an RFC 3339 timestamp: " + s);
  }
  auto pos = static_cast<size_t>(consumed);
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    while (pos < s.size() && std::isdigit(static_cast<unsigned char>(s[pos]))) ++pos;
  }
  int64_t offset = 0;
  if (pos < s.size() && (s[pos] == 'Z' || s[pos] == 'z')) {
    ++pos;
  } else if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    int oh = 0, om = 0;
    if (std::sscanf(s.c_str() + pos + 1, "%2d:%2d", &oh, &om) != 2) {
      return InvalidArgumentError("bad RFC 3339 offset: " + s);
    }
    offset = (s[pos] == '+' ? 1 : -1) * (oh * int64_t{3600} + om * int64_t{60});
    pos += 6;
  } else {
    return InvalidArgumentError("RFC 3339 timestamp without zone: " + s);
  }
  if (pos != s.size()) return InvalidArgumentError("trailing characters in timestamp: " + s);
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = sec;
  const time_t t = timegm(&tm) - offset;
  return std::chrono::system_clock::from_time_t(t);
}

StatusOr<ExecCredential> ParseExecCredential(const std::string& json,
                                             const std::string& expected_api_version) {
  rapidjson::Document d;
  d.Parse(json.c_str(), json.size());
  if (d.HasParseError() || !d.IsObject()) {
    return InvalidArgumentError("exec plugin: output is not a JSON object");
  }
  if (Str(d, "kind") != "ExecCredential") {
    return InvalidArgumentError("exec plugin: kind is not ExecCredential");
  }
  if (Str(d, "apiVersion") != expected_api_version) {
    return InvalidArgumentError("exec plugin: apiVersion " + Str(d, "apiVersion") +
                                " does not match " + expected_api_version);
  }
  auto st = d.FindMember("status");
  if (st == d.MemberEnd() || !st->value.IsObject()) {
    return InvalidArgumentError("exec plugin: missing status");
  }
  ExecCredential c;
  c.token = Str(st->value, "token");
  c.client_certificate_pem = Str(st->value, "clientCertificateData");
  c.client_key_pem = Str(st->value, "clientKeyData");
  if (c.token.empty() && c.client_certificate_pem.empty()) {
    return InvalidArgumentError("exec plugin: status has neither token nor client certificate");
  }
  if (c.client_certificate_pem.empty() != c.client_key_pem.empty()) {
    return InvalidArgumentError("exec plugin: clientCertificateData and clientKeyData go together");
  }
  if (std::string exp = Str(st->value, "expirationTimestamp"); !exp.empty()) {
    auto t = ParseRfc3339(exp);
    if (!t.ok()) return t.status().WithPrefix("exec plugin");
    c.expiration = *t;
  }
  return c;
}

StatusOr<ExecCredential> RunExecPlugin(const ExecConfig& exec, const std::string& server,
                                       const std::string& ca_pem) {
  std::array<int, 2> out_pipe{};
  if (pipe2(out_pipe.data(), O_CLOEXEC) != 0) {
    return InternalError(std::string("exec plugin: pipe: ") + ErrnoMessage(errno));
  }
  std::vector<std::string> env_strings;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    if (std::strncmp(*e, "KUBERNETES_EXEC_INFO=", 21) != 0) env_strings.emplace_back(*e);
  }
  for (const auto& [k, v] : exec.env) {
    std::string kv = k;
    kv += '=';
    kv += v;
    env_strings.push_back(std::move(kv));
  }
  env_strings.push_back("KUBERNETES_EXEC_INFO=" + ExecInfoJson(exec, server, ca_pem));
  // The plugin trusts what the system trusts, not the empty bundle draco's own clients use.
  env_strings = RestoreTrustEnvironment(std::move(env_strings), GetSystemTrust());
  std::vector<char*> envp;
  envp.reserve(env_strings.size() + 1);
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_strings{exec.command};
  argv_strings.insert(argv_strings.end(), exec.args.begin(), exec.args.end());
  std::vector<char*> argv;
  argv.reserve(argv_strings.size() + 1);
  for (auto& s : argv_strings) argv.push_back(s.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  pid_t pid = 0;
  const int rc =
      posix_spawnp(&pid, exec.command.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(out_pipe[1]);
  if (rc != 0) {
    close(out_pipe[0]);
    return FailedPreconditionError("exec plugin: cannot run " + exec.command + ": " +
                                   ErrnoMessage(rc));
  }
  std::string output;
  std::array<char, 4096> buf{};
  while (true) {
    ssize_t n = read(out_pipe[0], buf.data(), buf.size());
    if (n > 0) {
      output.append(buf.data(), static_cast<size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      break;
    }
  }
  close(out_pipe[0]);
  int wstatus = 0;
  while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
    return UnauthenticatedError("exec plugin " + exec.command + " failed (status " +
                                std::to_string(wstatus) + ")");
  }
  return ParseExecCredential(output, exec.api_version);
}

FileTokenSource::FileTokenSource(std::string path, const Clock& clock, Clock::Duration refresh)
    : path_(std::move(path)), clock_(clock), refresh_(refresh) {}

StatusOr<std::string> FileTokenSource::Token() {
  std::lock_guard<std::mutex> l(mu_);
  const auto now = clock_.Now();
  if (read_at_.has_value() && now - *read_at_ < refresh_) return token_;
  auto content = ReadFileToString(path_);
  if (!content.ok()) {
    if (!token_.empty()) return token_;
    return content.status().WithPrefix("token file");
  }
  token_ = Trim(std::move(content).value());
  read_at_ = now;
  return token_;
}

void FileTokenSource::Invalidate() {
  std::lock_guard<std::mutex> l(mu_);
  read_at_.reset();
}

ExecTokenSource::ExecTokenSource(ExecConfig exec, std::string server, std::string ca_pem,
                                 const Clock& clock)
    : exec_(std::move(exec)),
      server_(std::move(server)),
      ca_pem_(std::move(ca_pem)),
      clock_(clock) {}

StatusOr<std::string> ExecTokenSource::Token() {
  std::lock_guard<std::mutex> l(mu_);
  if (cached_.has_value() &&
      (!cached_->expiration.has_value() || clock_.WallNow() < *cached_->expiration)) {
    return cached_->token;
  }
  auto cred = RunExecPlugin(exec_, server_, ca_pem_);
  if (!cred.ok()) return cred.status();
  cached_ = std::move(cred).value();
  return cached_->token;
}

void ExecTokenSource::Invalidate() {
  std::lock_guard<std::mutex> l(mu_);
  cached_.reset();
}

std::unique_ptr<TokenSource> TokenSourceFor(const RestConfig& config, const Clock& clock) {
  if (config.exec.has_value()) {
    return std::make_unique<ExecTokenSource>(*config.exec, config.host, config.ca_pem, clock);
  }
  if (!config.bearer_token_file.empty()) {
    return std::make_unique<FileTokenSource>(config.bearer_token_file, clock);
  }
  if (!config.bearer_token.empty()) return std::make_unique<StaticTokenSource>(config.bearer_token);
  return nullptr;
}

}  // namespace draco::k8s
