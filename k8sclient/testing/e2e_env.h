// Test helper: the local control plane's env file (${DRACO_E2E_DIR:-/tmp/draco-e2e}/env).
//
// The file holds `export KEY="VALUE"` lines written by e2e/cluster/up.sh. Integration tests call
// LoadE2eEnv() and GTEST_SKIP when it returns nullopt. Header-only; tests only.
#pragma once

#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <string>

namespace draco::k8s::testing {

inline std::string E2eDir() {
  const char* d = std::getenv("DRACO_E2E_DIR");
  return (d != nullptr && *d != '\0') ? std::string(d) : std::string("/tmp/draco-e2e");
}

inline std::optional<std::map<std::string, std::string>> LoadE2eEnv() {
  std::ifstream in(E2eDir() + "/env");
  if (!in) return std::nullopt;
  std::map<std::string, std::string> env;
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("export ", 0) == 0) line = line.substr(7);
    auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    std::string key = line.substr(0, eq);
    std::string value = line.substr(eq + 1);
    if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') &&
        value.back() == value.front()) {
      value = value.substr(1, value.size() - 2);
    }
    env[key] = value;
  }
  if (env.count("KUBECONFIG") == 0) return std::nullopt;
  return env;
}

}  // namespace draco::k8s::testing
