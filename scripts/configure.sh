#!/usr/bin/env bash
# Configures the C++ build that the README's two commands share (scripts/demo.sh builds draco in
# it, scripts/test.sh everything): the same directory with the same settings, so that running one
# after the other rebuilds nothing. The settings are the image's (the Dockerfile's build stage:
# Release, warnings as errors) plus line-table debug info (-g1) for test and sanitizer backtraces;
# debug info changes no code and no warning.
# Usage: scripts/configure.sh BUILD_DIR [extra cmake -D args]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:?usage: scripts/configure.sh BUILD_DIR [cmake args]}
shift
cmake -S "$root" -B "$build" -G Ninja -DDRACO_WERROR=ON -DCMAKE_BUILD_TYPE=Release \
  "-DCMAKE_CXX_FLAGS_RELEASE=-O3 -DNDEBUG -g1" "$@" >/dev/null
