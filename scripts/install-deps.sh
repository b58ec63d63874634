#!/usr/bin/env bash
# Installs every build and test dependency of draco from Debian packages, plus the Go toolchain the
# repository's Go modules need (Debian 12's Go is 1.19; scripts/go-toolchain.sh fetches a newer one
# from the Go module proxy, as the go command does for GOTOOLCHAIN). Safe to re-run: packages
# already present are skipped, apt is only refreshed when something is missing, and a fetched
# toolchain is kept under ~/.cache/draco/go.
set -euo pipefail
pkgs=(
  build-essential cmake ninja-build pkg-config git curl ca-certificates openssl
  libcpprest-dev libssl-dev libboost-system-dev rapidjson-dev prometheus-cpp-dev libspdlog-dev
  libfmt-dev libgtest-dev libgmock-dev libyaml-cpp-dev libre2-dev libbenchmark-dev
  clang clang-format clang-tidy libclang-rt-14-dev python3
  # promtool (tests/prometheus: the alert rules) and prometheus (e2e: the dashboard's queries).
  prometheus
  # scripts/test.sh times its builds; kubectl_draco_test and the bench scripts parse YAML.
  time python3-yaml
  golang-go
  # The local real nodes (e2e/cluster/node-up.sh): runtime, networking, the images' contents, and
  # the tools that build draco's image from its Dockerfile without a Docker engine.
  runc iptables iproute2 containernetworking-plugins busybox-static libc6-dev
  buildah debootstrap
)
no_go=0
[[ ${DRACO_DEPS_GO:-1} == 0 ]] && no_go=1
missing=()
for p in "${pkgs[@]}"; do
  # golang-go is only needed when no Go toolchain is on PATH already, and not at all for the image
  # build (the Dockerfile sets DRACO_DEPS_GO=0: draco itself is C++ only).
  if [[ $p == golang-go ]] && { command -v go >/dev/null 2>&1 || [[ $no_go == 1 ]]; }; then continue; fi
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  echo "[deps] all ${#pkgs[@]} packages present"
else
  echo "[deps] installing: ${missing[*]}"
  SUDO=""
  if [[ $(id -u) != 0 ]]; then SUDO=sudo; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
((no_go)) && exit 0
go_bin=$("$(dirname "$0")/go-toolchain.sh")
echo "[deps] Go: $("$go_bin/go" env GOVERSION) ($go_bin)"
