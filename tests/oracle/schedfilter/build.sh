#!/usr/bin/env bash
# Builds the kube-scheduler filter oracle (issue #13). Usage: tests/oracle/schedfilter/build.sh [OUTPUT]
# OUTPUT defaults to $DRACO_SCHEDFILTER, else <repo>/build/oracle/schedfilter.
# Offline from the Go module cache: the modules are the ones e2e/cluster builds kube-scheduler
# v1.37.2 from (same go.sum); GOFLAGS=-mod=mod, GOPROXY=off, GOTOOLCHAIN=local.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/../../../scripts/go-env.sh"
repo="$(cd "${here}/../../.." && pwd)"
out="${1:-${DRACO_SCHEDFILTER:-${repo}/build/oracle/schedfilter}}"
case "${out}" in /*) ;; *) out="${PWD}/${out}" ;; esac
mkdir -p "$(dirname "${out}")"
export GOTOOLCHAIN=local GOFLAGS=-mod=mod GOPROXY="${DRACO_GOPROXY:-off}"
cd "${here}"
go build -trimpath -o "${out}" .
echo "${out}"
