// Credential sources for the Authorization header.
//
// A TokenSource yields the bearer token to send with the next request. The RestClient calls
// Token() before every request and Invalidate() after a 401, so sources that cache (a rotating
// token file, an exec plugin) fetch a fresh credential on the retry.
//
// All implementations are thread-safe. FileTokenSource and ExecTokenSource block while reading
// the file or running the plugin (at most once per refresh, under an internal mutex).
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "base/clock.h"
#include "base/status.h"
#include "k8sclient/config.h"

namespace draco::k8s {

class TokenSource {
 public:
  virtual ~TokenSource() = default;
  // The token to use now; an empty string means "send no Authorization header".
  virtual StatusOr<std::string> Token() = 0;
  // Drops any cached credential (called after a 401).
  virtual void Invalidate() {}
};

class StaticTokenSource final : public TokenSource {
 public:
  explicit StaticTokenSource(std::string token) : token_(std::move(token)) {}
  StatusOr<std::string> Token() override { return token_; }

 private:
  const std::string token_;
};

// Re-reads `path` when the cached copy is older than `refresh` (client-go: 1 minute) or after
// Invalidate(), so a rotated projected service-account token is picked up. If a re-read fails
// but an older token is cached, the older token is used.
class FileTokenSource final : public TokenSource {
 public:
  // `clock` must outlive this object.
  FileTokenSource(std::string path, const Clock& clock,
                  Clock::Duration refresh = std::chrono::minutes(1));
  StatusOr<std::string> Token() override;
  void Invalidate() override;

 private:
  const std::string path_;
  const Clock& clock_;
  const Clock::Duration refresh_;
  std::mutex mu_;
  std::string token_;
  std::optional<Clock::TimePoint> read_at_;
};

// The result of running a credential plugin.
struct ExecCredential {
  std::string token;
  std::string client_certificate_pem;
  std::string client_key_pem;
  // Absent when the plugin did not set status.expirationTimestamp (valid until a 401).
  std::optional<std::chrono::system_clock::time_point> expiration;
};

// Parses ExecCredential JSON as printed by a plugin on stdout.
StatusOr<ExecCredential> ParseExecCredential(const std::string& json,
                                             const std::string& expected_api_version);
// Parses an RFC 3339 timestamp ("2026-01-02T03:04:05Z", fractional seconds and offsets allowed).
StatusOr<std::chrono::system_clock::time_point> ParseRfc3339(const std::string& s);

// Runs `exec` (with KUBERNETES_EXEC_INFO set) and parses its stdout. Blocks until it exits.
StatusOr<ExecCredential> RunExecPlugin(const ExecConfig& exec, const std::string& server,
                                       const std::string& ca_pem);

// Runs the plugin on first use and again when the credential expires or is invalidated.
class ExecTokenSource final : public TokenSource {
 public:
  // `clock` must outlive this object.
  ExecTokenSource(ExecConfig exec, std::string server, std::string ca_pem, const Clock& clock);
  StatusOr<std::string> Token() override;
  void Invalidate() override;

 private:
  const ExecConfig exec_;
  const std::string server_;
  const std::string ca_pem_;
  const Clock& clock_;
  std::mutex mu_;
  std::optional<ExecCredential> cached_;
};

// The source implied by a config: exec > token file > static token > none (nullptr).
std::unique_ptr<TokenSource> TokenSourceFor(const RestConfig& config, const Clock& clock);

}  // namespace draco::k8s
