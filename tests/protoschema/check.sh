#!/usr/bin/env bash
# Fails when controller/run/proto_schema.cc is not what tests/protoschema generates from the pinned
# k8s.io/api (regenerate: cd tests/protoschema && GOTOOLCHAIN=local go run . > ../../controller/run/proto_schema.cc).
# Exit 77 (skipped) without Go or without the modules in the module cache (offline).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../scripts/go-env.sh"
command -v go >/dev/null 2>&1 || { echo "no Go toolchain: skipped"; exit 77; }
cd "$here"
if ! GOTOOLCHAIN=local GOFLAGS=-mod=mod GOPROXY=off go build -o /dev/null . 2>/dev/null; then
  echo "k8s.io/api not in the module cache: skipped"; exit 77
fi
GOTOOLCHAIN=local GOPROXY=off go run . -check "$here/../../controller/run/proto_schema.cc"
