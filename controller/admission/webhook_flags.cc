#include "controller/admission/webhook_flags.h"

#include <charconv>
#include <cstdint>

namespace draco::admission {

bool IsWebhookFlag(std::string_view name) {
  return name == "webhook-bind-address" || name == "webhook-cert-secret" ||
         name == "webhook-config-name" || name == "webhook-cert-hosts" ||
         name == "webhook-cert-validity" || name == "webhook-cert-dir";
}

StatusOr<std::chrono::seconds> ParseDurationFlag(std::string_view v) {
  int64_t n = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  std::string_view unit(p, static_cast<size_t>(v.data() + v.size() - p));
  if (ec != std::errc() || n <= 0) {
    return InvalidArgumentError("bad duration '" + std::string(v) + "'");
  }
  if (unit == "s") return std::chrono::seconds(n);
  if (unit == "m") return std::chrono::seconds(n * 60);
  if (unit == "h") return std::chrono::seconds(n * 3600);
  return InvalidArgumentError("bad duration '" + std::string(v) + "': want e.g. 90s, 30m, 8760h");
}

Status SetWebhookFlag(std::string_view name, const std::string& value, WebhookFlags& flags) {
  if (name == "webhook-bind-address") {
    flags.bind_address = value;
  } else if (name == "webhook-cert-secret") {
    if (value.empty() || value.front() == '/' || value.back() == '/') {
      return InvalidArgumentError("--webhook-cert-secret: want NAMESPACE/NAME or NAME");
    }
    flags.cert_secret = value;
  } else if (name == "webhook-config-name") {
    flags.config_name = value;
  } else if (name == "webhook-cert-hosts") {
    flags.cert_hosts = value;
  } else if (name == "webhook-cert-validity") {
    auto d = ParseDurationFlag(value);
    if (!d.ok()) return d.status().WithPrefix("--webhook-cert-validity");
    if (*d < std::chrono::minutes(3)) {
      return InvalidArgumentError("--webhook-cert-validity must be at least 3m");
    }
    flags.cert_validity = *d;
  } else if (name == "webhook-cert-dir") {
    if (value.empty()) return InvalidArgumentError("--webhook-cert-dir: want a directory");
    flags.cert_dir = value;
  } else {
    return InvalidArgumentError("unknown flag --" + std::string(name));
  }
  return OkStatus();
}

std::string WebhookFlagUsage() {
  return "  --webhook-bind-address ADDR        serve the admission webhook (HTTPS) on ADDR, e.g.\n"
         "                                     $(POD_IP):9443 (default 0 = off)\n"
         "  --webhook-cert-secret [NS/]NAME    Secret with the webhook CA and serving pair\n"
         "                                     (default draco-webhook-tls; created if missing)\n"
         "  --webhook-config-name NAME         MutatingWebhookConfiguration whose caBundle draco\n"
         "                                     keeps current\n"
         "  --webhook-cert-hosts H1,H2,...     DNS names and IPs of the serving certificate\n"
         "  --webhook-cert-validity DURATION   CA and serving certificate lifetime (default "
         "8760h;\n"
         "                                     replaced in the last third)\n"
         "  --webhook-cert-dir DIR             serve the certificate mounted in DIR (tls.crt,\n"
         "                                     tls.key, ca.crt; e.g. from cert-manager), re-read\n"
         "                                     every minute; draco then writes no Secret and no\n"
         "                                     caBundle\n";
}

StatusOr<WebhookOptions> ToWebhookOptions(const WebhookFlags& flags,
                                          const std::string& default_namespace) {
  WebhookOptions o;
  o.bind_address = flags.bind_address;
  if (auto slash = flags.cert_secret.find('/'); slash != std::string::npos) {
    o.certs.secret_namespace = flags.cert_secret.substr(0, slash);
    o.certs.secret_name = flags.cert_secret.substr(slash + 1);
  } else {
    o.certs.secret_namespace = default_namespace;
    o.certs.secret_name = flags.cert_secret;
  }
  o.certs.webhook_config_name = flags.config_name;
  o.cert_dir = flags.cert_dir;
  if (!o.cert_dir.empty() && !o.certs.webhook_config_name.empty()) {
    return InvalidArgumentError(
        "--webhook-cert-dir and --webhook-config-name: with a mounted certificate its issuer "
        "(cert-manager's CA injector) keeps the caBundle, so draco must not");
  }
  o.certs.validity = flags.cert_validity;
  std::string_view hosts = flags.cert_hosts;
  while (!hosts.empty()) {
    size_t comma = hosts.find(',');
    std::string_view h = hosts.substr(0, comma);
    if (!h.empty()) o.certs.hosts.emplace_back(h);
    hosts = comma == std::string_view::npos ? "" : hosts.substr(comma + 1);
  }
  if (o.certs.hosts.empty()) {
    return InvalidArgumentError("--webhook-bind-address needs --webhook-cert-hosts");
  }
  // Resync well inside the shortest rotation window (a third of the lifetime).
  o.resync = std::min<std::chrono::seconds>(std::chrono::seconds(60), flags.cert_validity / 6);
  return o;
}

}  // namespace draco::admission
