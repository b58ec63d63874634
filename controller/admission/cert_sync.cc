#include "controller/admission/cert_sync.h"

#include <fstream>
#include <sstream>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <spdlog/spdlog.h>

#include "k8sclient/api_error.h"
#include "k8sclient/config.h"

namespace draco::admission {
namespace {

struct SecretState {
  std::string resource_version;
  CertKey ca;             // ca.cert_pem = first certificate of the bundle
  std::string ca_bundle;  // ca.crt
  CertKey serving;        // tls.crt, tls.key
};

std::string DataField(const rapidjson::Value& data, const char* key) {
  auto it = data.FindMember(key);
  if (it == data.MemberEnd() || !it->value.IsString()) return "";
  auto decoded =
      k8s::Base64Decode(std::string_view(it->value.GetString(), it->value.GetStringLength()));
  return decoded.ok() ? *decoded : "";
}

StatusOr<SecretState> ParseSecret(const std::string& json) {
  rapidjson::Document doc;
  doc.Parse(json.data(), json.size());
  if (doc.HasParseError() || !doc.IsObject()) {
    return InvalidArgumentError("Secret: not a JSON object");
  }
  SecretState s;
  auto meta = doc.FindMember("metadata");
  if (meta != doc.MemberEnd() && meta->value.IsObject()) {
    auto rv = meta->value.FindMember("resourceVersion");
    if (rv != meta->value.MemberEnd() && rv->value.IsString()) {
      s.resource_version = rv->value.GetString();
    }
  }
  auto data = doc.FindMember("data");
  if (data != doc.MemberEnd() && data->value.IsObject()) {
    s.ca_bundle = DataField(data->value, "ca.crt");
    s.ca = {FirstCert(s.ca_bundle), DataField(data->value, "ca.key")};
    s.serving = {DataField(data->value, "tls.crt"), DataField(data->value, "tls.key")};
  }
  return s;
}

std::string SecretJson(const CertSyncOptions& o, const SecretState& s) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.StartObject();
  w.Key("apiVersion");
  w.String("v1");
  w.Key("kind");
  w.String("Secret");
  w.Key("metadata");
  w.StartObject();
  w.Key("name");
  w.String(o.secret_name.c_str());
  w.Key("namespace");
  w.String(o.secret_namespace.c_str());
  if (!s.resource_version.empty()) {
    w.Key("resourceVersion");
    w.String(s.resource_version.c_str());
  }
  w.Key("labels");
  w.StartObject();
  w.Key("app.kubernetes.io/managed-by");
  w.String("draco");
  w.EndObject();
  w.EndObject();
  w.Key("type");
  w.String("kubernetes.io/tls");
  w.Key("data");
  w.StartObject();
  for (auto [k, v] :
       {std::pair{"ca.crt", &s.ca_bundle}, std::pair{"ca.key", &s.ca.key_pem},
        std::pair{"tls.crt", &s.serving.cert_pem}, std::pair{"tls.key", &s.serving.key_pem}}) {
    std::string b64 = Base64Encode(*v);
    w.Key(k);
    w.String(b64.c_str(), static_cast<rapidjson::SizeType>(b64.size()));
  }
  w.EndObject();
  w.EndObject();
  return {buf.GetString(), buf.GetSize()};
}

// Indexes of the webhooks in a parsed MutatingWebhookConfiguration whose caBundle is not
// `want_b64`.
std::vector<rapidjson::SizeType> StaleWebhooks(const rapidjson::Value& config,
                                               const std::string& want_b64) {
  std::vector<rapidjson::SizeType> stale;
  auto hooks = config.FindMember("webhooks");
  if (hooks == config.MemberEnd() || !hooks->value.IsArray()) return stale;
  for (rapidjson::SizeType i = 0; i < hooks->value.Size(); ++i) {
    const auto& h = hooks->value[i];
    std::string have;
    if (!h.IsObject()) continue;
    if (auto cc = h.FindMember("clientConfig"); cc != h.MemberEnd() && cc->value.IsObject()) {
      if (auto b = cc->value.FindMember("caBundle");
          b != cc->value.MemberEnd() && b->value.IsString()) {
        have = b->value.GetString();
      }
    }
    if (have != want_b64) stale.push_back(i);
  }
  return stale;
}

StatusOr<std::string> ReadPemFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFoundError("cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  if (text.str().find("-----BEGIN ") == std::string::npos) {
    return InvalidArgumentError(path + ": no PEM block");
  }
  return text.str();
}

std::string JsonString(const std::string& s) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.String(s.c_str(), static_cast<rapidjson::SizeType>(s.size()));
  return {buf.GetString(), buf.GetSize()};
}

}  // namespace

bool CaBundleCurrent(std::string_view config_json, std::string_view bundle_pem) {
  rapidjson::Document doc;
  doc.Parse(config_json.data(), config_json.size());
  if (doc.HasParseError() || !doc.IsObject()) return false;
  return StaleWebhooks(doc, Base64Encode(bundle_pem)).empty();
}

StatusOr<WebhookPki> LoadMountedPki(const std::string& dir) {
  WebhookPki pki;
  auto cert = ReadPemFile(dir + "/tls.crt");
  if (!cert.ok()) return cert.status();
  auto key = ReadPemFile(dir + "/tls.key");
  if (!key.ok()) return key.status();
  pki.serving = {*cert, *key};
  if (auto ca = ReadPemFile(dir + "/ca.crt"); ca.ok()) {
    pki.ca_bundle = *ca;
  } else if (size_t last = cert->rfind("-----BEGIN CERTIFICATE-----"); last != std::string::npos) {
    pki.ca_bundle = cert->substr(last);
  }
  return pki;
}

CertSync::CertSync(k8s::RestClient& client, Clock& clock, CertSyncOptions options)
    : client_(client), clock_(clock), options_(std::move(options)) {}

StatusOr<WebhookPki> CertSync::Sync() {
  const auto& o = options_;
  if (o.hosts.empty()) return InvalidArgumentError("webhook certificate: no hosts");
  const WallTime now = clock_.WallNow();
  const std::string where = "Secret " + o.secret_namespace + "/" + o.secret_name;
  auto new_serving = [&](const CertKey& ca) {
    return IssueServingCert(ca, o.hosts, o.validity, now);
  };

  SecretState s;
  auto got = client_.Get(kSecrets, o.secret_namespace, o.secret_name);
  if (!got.ok() && k8s::IsNotFound(got.status())) {
    auto ca = GenerateCa("draco-webhook-ca", o.validity, now);
    if (!ca.ok()) return ca.status();
    auto serving = new_serving(*ca);
    if (!serving.ok()) return serving.status();
    s.ca = *ca;
    s.ca_bundle = ca->cert_pem;
    s.serving = *serving;
    auto created = client_.Create(kSecrets, o.secret_namespace, SecretJson(o, s));
    if (!created.ok() && k8s::IsAlreadyExists(created.status())) {
      got = client_.Get(kSecrets, o.secret_namespace, o.secret_name);  // another replica won
    } else if (!created.ok()) {
      return created.status().WithPrefix("creating " + where);
    } else {
      spdlog::info("webhook: created {} with a new CA", where);
      got = std::move(created);
    }
  }
  if (!got.ok()) return got.status().WithPrefix("reading " + where);
  auto parsed = ParseSecret(*got);
  if (!parsed.ok()) return parsed.status().WithPrefix(where);
  s = std::move(*parsed);

  // 2. The CA.
  bool write = false;
  if (!IsUsableCa(s.ca) || NeedsRotation(s.ca.cert_pem, now)) {
    auto ca = GenerateCa("draco-webhook-ca", o.validity, now);
    if (!ca.ok()) return ca.status();
    spdlog::info("webhook: rotating the CA in {}", where);
    s.ca = *ca;
    s.ca_bundle = ca->cert_pem + s.ca_bundle;
    write = true;
  }
  if (std::string kept = DropExpired(s.ca_bundle, now); kept != s.ca_bundle) {
    s.ca_bundle = kept;
    write = true;
  }
  auto update = [&]() -> Status {
    auto updated = client_.Update(kSecrets, o.secret_namespace, o.secret_name, SecretJson(o, s));
    if (!updated.ok()) return updated.status().WithPrefix("updating " + where);
    auto again = ParseSecret(*updated);
    if (again.ok()) s.resource_version = again->resource_version;
    return OkStatus();
  };
  if (write) {
    if (Status st = update(); !st.ok()) return st;
  }
  // 3. The API server trusts every CA in the bundle before any serving certificate changes.
  if (!o.webhook_config_name.empty()) {
    if (Status st = EnsureCaBundle(s.ca_bundle); !st.ok()) return st;
  }
  // 4. The serving pair.
  if (s.serving.key_pem.empty() || NeedsRotation(s.serving.cert_pem, now) ||
      !CertMatches(s.serving.cert_pem, s.ca.cert_pem, o.hosts)) {
    auto serving = new_serving(s.ca);
    if (!serving.ok()) return serving.status();
    spdlog::info("webhook: issuing a new serving certificate in {}", where);
    s.serving = *serving;
    if (Status st = update(); !st.ok()) return st;
  }
  return WebhookPki{s.serving, s.ca_bundle};
}

Status CertSync::EnsureCaBundle(const std::string& bundle) {
  const std::string& name = options_.webhook_config_name;
  auto got = client_.Get(kMutatingWebhookConfigurations, "", name);
  if (!got.ok()) return got.status().WithPrefix("reading MutatingWebhookConfiguration " + name);
  rapidjson::Document doc;
  doc.Parse(got->data(), got->size());
  if (doc.HasParseError() || !doc.IsObject()) {
    return InvalidArgumentError("MutatingWebhookConfiguration " + name + ": not a JSON object");
  }
  std::string rv;
  if (auto m = doc.FindMember("metadata"); m != doc.MemberEnd() && m->value.IsObject()) {
    if (auto r = m->value.FindMember("resourceVersion");
        r != m->value.MemberEnd() && r->value.IsString()) {
      rv = r->value.GetString();
    }
  }
  const std::string want = Base64Encode(bundle);
  std::string ops;
  for (rapidjson::SizeType i : StaleWebhooks(doc, want)) {
    ops += R"(,{"op":"add","path":"/webhooks/)" + std::to_string(i) +
           R"(/clientConfig/caBundle","value":)" + JsonString(want) + "}";
  }
  if (ops.empty()) return OkStatus();
  std::string patch = R"([{"op":"test","path":"/metadata/resourceVersion","value":)" +
                      JsonString(rv) + "}" + ops + "]";
  auto patched =
      client_.Patch(kMutatingWebhookConfigurations, "", name, k8s::PatchType::kJsonPatch, patch);
  if (!patched.ok()) {
    return patched.status().WithPrefix("updating the caBundle of MutatingWebhookConfiguration " +
                                       name);
  }
  spdlog::info("webhook: caBundle of MutatingWebhookConfiguration {} updated", name);
  return OkStatus();
}

}  // namespace draco::admission
