#include "controller/server/metrics_flags.h"

namespace draco::server {

bool IsMetricsServingFlag(std::string_view name) {
  return name == "metrics-secure" || name == "metrics-cert-dir";
}

bool IsMetricsServingBoolFlag(std::string_view name) { return name == "metrics-secure"; }

Status SetMetricsServingFlag(std::string_view name, const std::string& value,
                             MetricsServingFlags& flags) {
  if (name == "metrics-secure") {
    if (value == "true" || value == "1") {
      flags.secure = true;
    } else if (value == "false" || value == "0") {
      flags.secure = false;
    } else {
      return InvalidArgumentError("--metrics-secure: bad boolean '" + value + "'");
    }
  } else if (name == "metrics-cert-dir") {
    if (value.empty()) return InvalidArgumentError("--metrics-cert-dir: empty directory");
    flags.cert_dir = value;
  } else {
    return InvalidArgumentError("unknown flag --" + std::string(name));
  }
  return OkStatus();
}

Status ValidateMetricsServing(const MetricsServingFlags& flags,
                              const std::string& metrics_bind_address,
                              const std::string& health_probe_bind_address) {
  if (flags.secure && metrics_bind_address != "0" &&
      metrics_bind_address == health_probe_bind_address) {
    return InvalidArgumentError(
        "--metrics-secure needs --metrics-bind-address and --health-probe-bind-address to "
        "differ (the probes stay plain HTTP)");
  }
  return OkStatus();
}

std::string MetricsServingFlagUsage() {
  return "  --metrics-secure BOOL              serve /metrics over HTTPS, only to callers the API\n"
         "                                     server authenticates (TokenReview) and authorizes\n"
         "                                     (SubjectAccessReview: get on /metrics); default\n"
         "                                     false; probes stay plain HTTP\n"
         "  --metrics-cert-dir DIR             tls.crt and tls.key for --metrics-secure, reloaded\n"
         "                                     when they change (default: a self-signed\n"
         "                                     certificate generated at start)\n";
}

}  // namespace draco::server
