// The `draco run` flags of secure metrics serving (secure_metrics.h), parsed here so that run.cc
// only forwards them:
//   --metrics-secure[=BOOL]    serve /metrics over HTTPS to callers the API server authenticates
//                              (TokenReview) and authorizes (SubjectAccessReview, get on the
//                              non-resource URL /metrics); default false (plain HTTP, no auth)
//   --metrics-cert-dir DIR     tls.crt and tls.key for it (reloaded when they change); default: a
//                              self-signed certificate generated at start
// The health probes stay plain HTTP without authentication; with --metrics-secure they need an
// address of their own (--health-probe-bind-address different from --metrics-bind-address).
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace draco::server {

struct MetricsServingFlags {
  std::string cert_dir;
  bool secure = false;
};

// Whether `name` (without dashes) is one of the flags above.
bool IsMetricsServingFlag(std::string_view name);
// Whether it is a boolean flag (may be given bare, "--metrics-secure").
bool IsMetricsServingBoolFlag(std::string_view name);

// Sets the flag `name` from `value`; InvalidArgument naming the flag for a bad value.
Status SetMetricsServingFlag(std::string_view name, const std::string& value,
                             MetricsServingFlags& flags);

// InvalidArgument when secure serving is on and the metrics and probe addresses are one.
Status ValidateMetricsServing(const MetricsServingFlags& flags,
                              const std::string& metrics_bind_address,
                              const std::string& health_probe_bind_address);

// The --help lines of these flags.
std::string MetricsServingFlagUsage();

}  // namespace draco::server
