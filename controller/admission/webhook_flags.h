// The `draco run` flags of the admission webhook, parsed here so that run.cc only forwards them:
//   --webhook-bind-address ADDR    serve the webhook over TLS on ADDR (the pod IP in a cluster,
//                                  127.0.0.1 outside); default "0" = no webhook
//   --webhook-cert-secret NS/NAME  Secret holding the webhook CA and serving pair (created if
//                                  missing; NAME alone means the leader-election namespace)
//   --webhook-config-name NAME     MutatingWebhookConfiguration whose caBundle draco keeps current
//   --webhook-cert-hosts H1,H2     serving certificate DNS names / IPs (the Service's names)
//   --webhook-cert-validity DUR    CA and serving certificate lifetime, e.g. 8760h, 30m
//   --webhook-cert-dir DIR         serve the certificate mounted in DIR (tls.crt, tls.key, ca.crt,
//                                  e.g. cert-manager's Secret) instead: draco writes no Secret and
//                                  no caBundle (excludes --webhook-config-name)
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "base/status.h"
#include "controller/admission/webhook.h"

namespace draco::admission {

struct WebhookFlags {
  std::string bind_address = "0";
  std::string cert_secret = "draco-webhook-tls";
  std::string config_name;
  std::string cert_hosts;
  std::chrono::seconds cert_validity = std::chrono::hours(24 * 365);
  std::string cert_dir;
};

// Whether `name` (without dashes) is one of the flags above.
bool IsWebhookFlag(std::string_view name);

// Sets the flag `name` from `value`; InvalidArgument naming the flag for a bad value.
Status SetWebhookFlag(std::string_view name, const std::string& value, WebhookFlags& flags);

// The --help lines of these flags.
std::string WebhookFlagUsage();

// Parses "90s", "30m", "8760h" (an integer and one unit).
StatusOr<std::chrono::seconds> ParseDurationFlag(std::string_view v);

// The Webhook options for the flags; `default_namespace` is used for a Secret given by name only.
// InvalidArgument when the webhook is on but --webhook-cert-hosts is empty, or when both
// --webhook-cert-dir and --webhook-config-name are given (the caBundle has one owner).
StatusOr<WebhookOptions> ToWebhookOptions(const WebhookFlags& flags,
                                          const std::string& default_namespace);

}  // namespace draco::admission
