#!/usr/bin/env bash
# Installs every build and test dependency of draco from Debian packages. Safe to re-run: packages
# already present are skipped, and apt is only refreshed when something is missing.
set -euo pipefail
pkgs=(
  build-essential cmake ninja-build pkg-config git curl ca-certificates openssl
  libcpprest-dev libssl-dev libboost-system-dev rapidjson-dev prometheus-cpp-dev libspdlog-dev
  libfmt-dev libgtest-dev libgmock-dev libyaml-cpp-dev libre2-dev libbenchmark-dev
  clang clang-format clang-tidy libclang-rt-14-dev python3
  golang-go
  # The local real nodes (e2e/cluster/node-up.sh): runtime, networking, the images' contents, and
  # the tools that build draco's image from its Dockerfile without a Docker engine.
  runc iptables iproute2 containernetworking-plugins busybox-static libc6-dev
  buildah debootstrap
)
missing=()
for p in "${pkgs[@]}"; do
  # golang-go is only needed when no Go toolchain is on PATH already.
  if [[ $p == golang-go ]] && command -v go >/dev/null 2>&1; then continue; fi
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  echo "[deps] all ${#pkgs[@]} packages present"
  exit 0
fi
echo "[deps] installing: ${missing[*]}"
SUDO=""
if [[ $(id -u) != 0 ]]; then SUDO=sudo; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
