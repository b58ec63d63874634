#!/usr/bin/env bash
# Builds the upstream oracle binary. Usage: tests/oracle/build.sh [OUTPUT]
# OUTPUT defaults to $DRACO_ORACLE, else <repo>/build/oracle/oracle.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/../../scripts/go-env.sh"
repo="$(cd "${here}/../.." && pwd)"
out="${1:-${DRACO_ORACLE:-${repo}/build/oracle/oracle}}"
case "${out}" in /*) ;; *) out="${PWD}/${out}" ;; esac
mkdir -p "$(dirname "${out}")"
export GOTOOLCHAIN=local
cd "${here}"
go build -trimpath -o "${out}" .
echo "${out}"
