#!/usr/bin/env bash
# Runs the version-sensitive e2e tests on each supported Kubernetes version and prints a table
# version x test. For each version it builds (cached) and starts its own local control plane in
# /tmp/draco-matrix-VERSION on its own ports (never touching the default /tmp/draco-e2e), runs the
# tests one at a time through ctest, and stops the control plane again. The ports default to
# 17443/27790/27800; DRACO_MATRIX_API_PORT, DRACO_MATRIX_ETCD_PORT, DRACO_MATRIX_ETCD_PEER_PORT and
# DRACO_MATRIX_DIR (directory prefix) override them, so that several matrices can run side by side.
#
# Usage: e2e/matrix.sh [--versions v1.34.4,v1.35.4,v1.36.3,v1.37.2] [--tests smoke,draco_lifecycle,...]
#                      [BUILD_DIR]
# Exit 0 when every cell passed; 1 otherwise (the table says which).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
versions=v1.34.4,v1.35.4,v1.36.3,v1.37.2
tests=smoke,draco_lifecycle,draco_restart,draco_policy,admission_gate,admission_webhook,chart_install
while (($#)); do
  case $1 in
    --versions) versions=$2; shift 2 ;;
    --tests) tests=$2; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) break ;;
  esac
done
BUILD=${1:-${DRACO_BUILD_DIR:-$root/build}}
IFS=, read -ra V <<<"$versions"
IFS=, read -ra T <<<"$tests"
declare -A result
failed=0
for v in "${V[@]}"; do
  export DRACO_K8S_VERSION=$v DRACO_E2E_DIR=${DRACO_MATRIX_DIR:-/tmp/draco-matrix}-$v
  export DRACO_API_PORT=${DRACO_MATRIX_API_PORT:-17443} DRACO_ETCD_PORT=${DRACO_MATRIX_ETCD_PORT:-27790}
  export DRACO_ETCD_PEER_PORT=${DRACO_MATRIX_ETCD_PEER_PORT:-27800}
  # Its real node takes host slot 2 (bridge, subnet, kubelet port; node-up.sh).
  export DRACO_REAL_NODE_BASE=${DRACO_MATRIX_REAL_NODE_BASE:-2}
  echo "=== Kubernetes $v ($(date -u +%T))"
  if ! "$root/e2e/cluster/up.sh" --nodes 4 --real-nodes "${DRACO_MATRIX_REAL_NODES:-1}" \
      >"$DRACO_E2E_DIR.up.log" 2>&1; then
    echo "control plane $v did not start: $DRACO_E2E_DIR.up.log" >&2
    for t in "${T[@]}"; do result[$v,$t]=NO-CLUSTER; done
    failed=1
    "$root/e2e/cluster/down.sh" >/dev/null 2>&1
    continue
  fi
  for t in "${T[@]}"; do
    start=$SECONDS
    # -V keeps each test's PASS lines (e.g. the admission mode it ran in) in its log. A cell that
    # fails is shown (its diagnostics included) and run once more; "pass, retried" in the table
    # says so, and a second failure fails the cell.
    retried=""
    for attempt in 1 2; do
      if ctest --test-dir "$BUILD" -V -R "^e2e_${t}_test\$" >"$DRACO_E2E_DIR-$t.log" 2>&1; then
        ok=1
      else
        ok=0
        # The control plane's logs go with down.sh: keep them beside the cell's log.
        rm -rf "$DRACO_E2E_DIR-$t.logs"
        cp -r "$DRACO_E2E_DIR/logs" "$DRACO_E2E_DIR-$t.logs" 2>/dev/null || true
        echo "$v $t: attempt $attempt failed (control-plane logs: $DRACO_E2E_DIR-$t.logs)" >&2
        tail -n 60 "$DRACO_E2E_DIR-$t.log" >&2
      fi
      ((ok)) && break
      retried=", retried"
    done
    if ((ok)); then
      if grep -q "Not Run\|No tests were found\|\*\*\*Skipped" "$DRACO_E2E_DIR-$t.log"; then
        result[$v,$t]=SKIPPED
      else
        result[$v,$t]="pass $((SECONDS - start))s$retried"
      fi
    else
      result[$v,$t]="FAIL $((SECONDS - start))s"
      failed=1
    fi
    echo "$v $t: ${result[$v,$t]}"
  done
  "$root/e2e/cluster/down.sh" >/dev/null 2>&1
done
printf '\n%-18s' "test"
for v in "${V[@]}"; do printf '%-22s' "$v"; done
echo
for t in "${T[@]}"; do
  printf '%-18s' "$t"
  for v in "${V[@]}"; do printf '%-22s' "${result[$v,$t]}"; done
  echo
done
exit $failed
