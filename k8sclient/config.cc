#include "k8sclient/config.h"

#include <cctype>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <spdlog/spdlog.h>
#include <yaml-cpp/yaml.h>

namespace draco::k8s {
namespace {

namespace fs = std::filesystem;

std::string Resolve(const std::string& base_dir, const std::string& p) {
  if (p.empty() || base_dir.empty() || fs::path(p).is_absolute()) return p;
  return (fs::path(base_dir) / p).string();
}

// Finds the entry named `name` in a kubeconfig list such as `clusters`.
std::optional<YAML::Node> FindNamed(const YAML::Node& list, const std::string& name,
                                    const char* field) {
  if (!list || !list.IsSequence()) return std::nullopt;
  for (const auto& entry : list) {
    if (entry["name"] && entry["name"].as<std::string>() == name) return entry[field];
  }
  return std::nullopt;
}

std::string Scalar(const YAML::Node& n, const char* key) {
  if (!n || !n.IsMap() || !n[key] || n[key].IsNull()) return {};
  return n[key].as<std::string>();
}

bool Bool(const YAML::Node& n, const char* key) {
  if (!n || !n.IsMap() || !n[key] || n[key].IsNull()) return false;
  return n[key].as<bool>();
}

// Loads "<key>-data" (base64) or "<key>" (a file) into `out`.
Status LoadPem(const YAML::Node& n, const std::string& key, const std::string& base_dir,
               std::string& out) {
  std::string data = Scalar(n, (key + "-data").c_str());
  if (!data.empty()) {
    auto decoded = Base64Decode(data);
    if (!decoded.ok()) return decoded.status().WithPrefix(key + "-data");
    out = std::move(decoded).value();
    return OkStatus();
  }
  std::string file = Scalar(n, key.c_str());
  if (file.empty()) return OkStatus();
  auto content = ReadFileToString(Resolve(base_dir, file));
  if (!content.ok()) return content.status().WithPrefix(key);
  out = std::move(content).value();
  return OkStatus();
}

StatusOr<RestConfig> ParseKubeconfigUnsafe(const std::string& yaml, const std::string& context,
                                           const std::string& base_dir) {
  YAML::Node root = YAML::Load(yaml);
  if (!root || !root.IsMap()) return InvalidArgumentError("kubeconfig: not a YAML mapping");
  std::string ctx_name = context.empty() ? Scalar(root, "current-context") : context;
  if (ctx_name.empty()) return InvalidArgumentError("kubeconfig: no context selected");
  std::optional<YAML::Node> ctx_entry = FindNamed(root["contexts"], ctx_name, "context");
  if (!ctx_entry) return NotFoundError("kubeconfig: context \"" + ctx_name + "\" not found");
  const YAML::Node& ctx = *ctx_entry;
  const std::string cluster_name = Scalar(ctx, "cluster");
  const std::string user_name = Scalar(ctx, "user");
  std::optional<YAML::Node> cluster_entry = FindNamed(root["clusters"], cluster_name, "cluster");
  if (!cluster_entry || !cluster_entry->IsMap()) {
    return NotFoundError("kubeconfig: cluster \"" + cluster_name + "\" not found");
  }

  const YAML::Node& cluster = *cluster_entry;
  RestConfig cfg;
  cfg.namespace_name = Scalar(ctx, "namespace");
  cfg.host = Scalar(cluster, "server");
  if (cfg.host.empty()) return InvalidArgumentError("kubeconfig: cluster has no server");
  while (!cfg.host.empty() && cfg.host.back() == '/') cfg.host.pop_back();
  if (Status s = LoadPem(cluster, "certificate-authority", base_dir, cfg.ca_pem); !s.ok()) {
    return s.WithPrefix("kubeconfig cluster " + cluster_name);
  }
  cfg.insecure_skip_tls_verify = Bool(cluster, "insecure-skip-tls-verify");
  if (cfg.insecure_skip_tls_verify) {
    spdlog::warn(
        "kubeconfig cluster {}: insecure-skip-tls-verify is set; the API server's certificate "
        "will NOT be verified",
        cluster_name);
  }

  if (user_name.empty()) return cfg;
  std::optional<YAML::Node> user_entry = FindNamed(root["users"], user_name, "user");
  if (!user_entry) return NotFoundError("kubeconfig: user \"" + user_name + "\" not found");
  const YAML::Node& user = *user_entry;
  if (!user.IsMap()) return cfg;
  if (Status s = LoadPem(user, "client-certificate", base_dir, cfg.client_cert_pem); !s.ok()) {
    return s.WithPrefix("kubeconfig user " + user_name);
  }
  if (Status s = LoadPem(user, "client-key", base_dir, cfg.client_key_pem); !s.ok()) {
    return s.WithPrefix("kubeconfig user " + user_name);
  }
  if (cfg.client_cert_pem.empty() != cfg.client_key_pem.empty()) {
    return InvalidArgumentError("kubeconfig user " + user_name +
                                ": client certificate and key must be set together");
  }
  cfg.bearer_token = Scalar(user, "token");
  std::string token_file = Scalar(user, "tokenFile");
  if (!token_file.empty()) cfg.bearer_token_file = Resolve(base_dir, token_file);
  cfg.username = Scalar(user, "username");
  cfg.password = Scalar(user, "password");
  if (user["auth-provider"]) {
    return UnimplementedError("kubeconfig user " + user_name +
                              ": auth-provider plugins are not supported; use exec");
  }
  if (YAML::Node exec = user["exec"]; exec && exec.IsMap()) {
    ExecConfig e;
    e.command = Scalar(exec, "command");
    if (e.command.empty()) return InvalidArgumentError("kubeconfig exec: command is required");
    if (std::string v = Scalar(exec, "apiVersion"); !v.empty()) e.api_version = v;
    if (e.api_version != "client.authentication.k8s.io/v1" &&
        e.api_version != "client.authentication.k8s.io/v1beta1") {
      return InvalidArgumentError("kubeconfig exec: unsupported apiVersion " + e.api_version);
    }
    if (exec["args"] && exec["args"].IsSequence()) {
      for (const auto& a : exec["args"]) e.args.push_back(a.as<std::string>());
    }
    if (exec["env"] && exec["env"].IsSequence()) {
      for (const auto& kv : exec["env"]) {
        e.env.emplace_back(Scalar(kv, "name"), Scalar(kv, "value"));
      }
    }
    e.provide_cluster_info = Bool(exec, "provideClusterInfo");
    if (std::string m = Scalar(exec, "interactiveMode"); !m.empty()) e.interactive_mode = m;
    // A relative command path containing a slash is relative to the kubeconfig (client-go rule).
    if (e.command.find('/') != std::string::npos) e.command = Resolve(base_dir, e.command);
    cfg.exec = std::move(e);
  }
  cfg.impersonate.user = Scalar(user, "as");
  cfg.impersonate.uid = Scalar(user, "as-uid");
  if (user["as-groups"] && user["as-groups"].IsSequence()) {
    for (const auto& g : user["as-groups"]) cfg.impersonate.groups.push_back(g.as<std::string>());
  }
  if (user["as-user-extra"] && user["as-user-extra"].IsMap()) {
    for (const auto& kv : user["as-user-extra"]) {
      auto& values = cfg.impersonate.extra[kv.first.as<std::string>()];
      if (kv.second.IsSequence()) {
        for (const auto& v : kv.second) values.push_back(v.as<std::string>());
      } else if (kv.second.IsScalar()) {
        values.push_back(kv.second.as<std::string>());
      }
    }
  }
  return cfg;
}

}  // namespace

StatusOr<std::string> ReadFileToString(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFoundError("cannot read " + path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

StatusOr<std::string> Base64Decode(std::string_view in) {
  auto val = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+' || c == '-') return 62;
    if (c == '/' || c == '_') return 63;
    return -1;
  };
  std::string out;
  out.reserve(in.size() * 3 / 4);
  unsigned int acc = 0;
  int bits = 0;
  for (char c : in) {
    if (c == '=' || c == '\n' || c == '\r' || c == ' ' || c == '\t') continue;
    int v = val(c);
    if (v < 0) return InvalidArgumentError("invalid base64");
    acc = (acc << 6) | static_cast<unsigned int>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xFF));
    }
  }
  return out;
}

StatusOr<RestConfig> ParseKubeconfig(const std::string& yaml, const std::string& context,
                                     const std::string& base_dir) {
  try {
    return ParseKubeconfigUnsafe(yaml, context, base_dir);
  } catch (const std::exception& e) {
    return InvalidArgumentError(std::string("kubeconfig: ") + e.what());
  } catch (...) {
    return InvalidArgumentError("kubeconfig: unknown parse error");
  }
}

StatusOr<RestConfig> LoadKubeconfig(const std::string& path, const std::string& context) {
  auto text = ReadFileToString(path);
  if (!text.ok()) return text.status();
  std::string dir;
  try {
    dir = fs::absolute(fs::path(path)).parent_path().string();
  } catch (...) {
    dir.clear();
  }
  return ParseKubeconfig(*text, context, dir);
}

// getenv races only with setenv/putenv, and draco never changes its environment.
InClusterEnv InClusterEnvFromProcess() {
  InClusterEnv env;
  // NOLINTNEXTLINE(concurrency-mt-unsafe): draco never sets its environment (no setenv/putenv)
  if (const char* h = std::getenv("KUBERNETES_SERVICE_HOST")) env.service_host = h;
  // NOLINTNEXTLINE(concurrency-mt-unsafe): draco never sets its environment (no setenv/putenv)
  if (const char* p = std::getenv("KUBERNETES_SERVICE_PORT")) env.service_port = p;
  return env;
}

StatusOr<RestConfig> InClusterConfig(const InClusterEnv& env) {
  if (env.service_host.empty() || env.service_port.empty()) {
    return FailedPreconditionError(
        "in-cluster config: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set");
  }
  RestConfig cfg;
  const bool ipv6 = env.service_host.find(':') != std::string::npos;
  cfg.host = "https://" + (ipv6 ? "[" + env.service_host + "]" : env.service_host) + ":" +
             env.service_port;
  const std::string token_path = env.sa_dir + "/token";
  auto token = ReadFileToString(token_path);
  if (!token.ok()) return token.status().WithPrefix("in-cluster config");
  cfg.bearer_token_file = token_path;
  auto ca = ReadFileToString(env.sa_dir + "/ca.crt");
  if (!ca.ok()) return ca.status().WithPrefix("in-cluster config");
  cfg.ca_pem = std::move(ca).value();
  if (auto ns = ReadFileToString(env.sa_dir + "/namespace"); ns.ok()) {
    cfg.namespace_name = *ns;
    while (!cfg.namespace_name.empty() &&
           std::isspace(static_cast<unsigned char>(cfg.namespace_name.back()))) {
      cfg.namespace_name.pop_back();
    }
  }
  return cfg;
}

StatusOr<RestConfig> DefaultConfigFrom(const ConfigSources& sources, const std::string& context) {
  if (!sources.kubeconfig_env.empty()) {
    std::string first = sources.kubeconfig_env;
    if (auto colon = first.find(':'); colon != std::string::npos) first.resize(colon);
    return LoadKubeconfig(first, context);
  }
  if (!sources.in_cluster.service_host.empty()) return InClusterConfig(sources.in_cluster);
  if (sources.home.empty()) return NotFoundError("no KUBECONFIG, no in-cluster env, no HOME");
  return LoadKubeconfig(sources.home + "/.kube/config", context);
}

StatusOr<RestConfig> DefaultConfig(const std::string& context) {
  ConfigSources sources;
  // NOLINTNEXTLINE(concurrency-mt-unsafe): draco never sets its environment (no setenv/putenv)
  if (const char* kc = std::getenv("KUBECONFIG"); kc != nullptr) sources.kubeconfig_env = kc;
  sources.in_cluster = InClusterEnvFromProcess();
  // NOLINTNEXTLINE(concurrency-mt-unsafe): draco never sets its environment (no setenv/putenv)
  if (const char* home = std::getenv("HOME"); home != nullptr) sources.home = home;
  return DefaultConfigFrom(sources, context);
}

}  // namespace draco::k8s
