#!/usr/bin/env bash
# Runs every draco test on a fresh machine: installs dependencies, builds the control plane and
# the C++ tree (the image's Release configuration, warnings as errors), builds the Go oracle,
# starts a local control plane of its own, runs ctest (unit, differential, integration, e2e),
# re-runs the concurrency tests under TSan, and stops its control plane again.
# Usage: scripts/test.sh [extra ctest args]
#
# The tests' control plane is their own, started afresh each run in $DRACO_TEST_DIR (default
# /tmp/draco-test) on its own ports, with its real node in host slot 6: whatever else runs on the
# machine (the demo's control plane, draco and pods in /tmp/draco-e2e, a benchmark's 200 nodes, a
# test run that was killed) is neither reused nor touched, so the README's two commands run in
# either order, one after the other, any number of times.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
BUILD=${DRACO_BUILD_DIR:-$root/build}
JOBS=${DRACO_JOBS:-$(nproc)}
step() { echo "=== $* ($(date -u +%T))"; }
export DRACO_E2E_DIR=${DRACO_TEST_DIR:-/tmp/draco-test} DRACO_API_PORT=${DRACO_TEST_API_PORT:-18443}
export DRACO_ETCD_PORT=${DRACO_TEST_ETCD_PORT:-33790} DRACO_ETCD_PEER_PORT=${DRACO_TEST_ETCD_PEER_PORT:-33800}
export DRACO_REAL_NODE_BASE=${DRACO_TEST_REAL_NODE_BASE:-6}

step "dependencies"
./scripts/install-deps.sh
source scripts/go-env.sh

step "format"
./scripts/check-format.sh

# Every test runs on Kubernetes v1.37.2; the version-sensitive ones also on the oldest supported
# version (e2e/matrix.sh runs all of them on every version).
MATRIX_VERSIONS=${DRACO_MATRIX_VERSIONS:-v1.34.4}
MATRIX_TESTS=${DRACO_MATRIX_TESTS:-draco_lifecycle,admission_gate,chart_install,admission_webhook,real_node_workloads,real_node_disruption}
step "C++ configure"
# The image's configuration (Release, -Werror) with line tables (-g1), shared with demo.sh.
./scripts/configure.sh "$BUILD"

# clang-tidy costs 20-40 CPU seconds a source (results are cached by content, see check-tidy.sh).
# It needs only the compile commands, so it starts here, at the lowest priority: it takes the CPU
# that the Go builds' links, the cluster's start and the tests, which mostly wait on the control
# plane, leave idle. Its result is checked at the end.
step "clang-tidy (in the background, lowest priority; result at the end)"
tidy_log=$BUILD/tidy.log
nice -n 19 ./scripts/check-tidy.sh "$BUILD" >"$tidy_log" 2>&1 &
tidy_pid=$!
kill_tree() {
  local child
  for child in $(pgrep -P "$1" || true); do kill_tree "$child"; done
  kill "$1" 2>/dev/null || true
}
started=0
cleanup() {
  if [[ -n $tidy_pid ]]; then kill_tree "$tidy_pid"; fi
  if ((started)); then e2e/cluster/down.sh || true; fi
}
trap cleanup EXIT

step "control-plane binaries"
for v in v1.37.2 ${MATRIX_VERSIONS//,/ }; do
  DRACO_K8S_VERSION=$v /usr/bin/time -f "control-plane $v build: %e s, peak RSS %M KiB" \
    e2e/cluster/build.sh >/dev/null
done

step "C++ build"
/usr/bin/time -f "C++ build: %e s, peak RSS %M KiB" cmake --build "$BUILD" -j"$JOBS"

step "size limits (files <= 600 lines; functions <= 120 with clang-tidy below)"
./scripts/check-limits.sh "$BUILD"

if [[ -x tests/oracle/build.sh ]]; then
  step "oracle"
  export DRACO_ORACLE=$BUILD/oracle/oracle
  tests/oracle/build.sh "$DRACO_ORACLE"
  # kube-scheduler's own filter framework, for the scheduler_filter_parity differential test.
  export DRACO_SCHEDFILTER=$BUILD/oracle/schedfilter
  tests/oracle/schedfilter/build.sh "$DRACO_SCHEDFILTER"
fi

step "local control plane ($DRACO_E2E_DIR, port $DRACO_API_PORT)"
# Afresh: what an earlier run left (killed, or an older checkout's) is stopped and removed first.
started=1
e2e/cluster/down.sh >/dev/null 2>&1 || true
# One real node (kubelet, containerd, upstream's DRA test driver) beside the fake ones.
e2e/cluster/up.sh --real-nodes 1
step "ctest: unit and differential (parallel)"
ctest --test-dir "$BUILD" --output-on-failure -j"$JOBS" -LE '^(integration|e2e)$' "$@"
# Integration and e2e tests share one control plane and some restart the API server or run
# controllers, so they run one at a time.
step "ctest: integration and e2e (serial)"
# They drive a real control plane with timeouts on a 2-core machine. A test that fails is run
# once more, after its diagnostics are printed above; it counts as failed if it fails again. The
# retried tests are named, so a flaky test stays visible in the log.
if ! ctest --test-dir "$BUILD" --output-on-failure -j1 -L '^(integration|e2e)$' "$@"; then
  step "retrying once: $(sed 's/^[0-9]*://' "$BUILD/Testing/Temporary/LastTestsFailed.log" | tr '\n' ' ')"
  ctest --test-dir "$BUILD" --output-on-failure -j1 --rerun-failed
fi

# Issue #23: with kube-controller-manager's resourceclaim controller on (as on every managed
# control plane), draco leaves the claim lifecycle to it; the lifecycle-sensitive e2e run again in
# that mode (draco_kcm_coexist_test above switches it live).
UPSTREAM_TESTS=${DRACO_UPSTREAM_LIFECYCLE_TESTS:-draco_lifecycle,draco_restart,draco_groups,draco_extended_resources,draco_policy,draco_safety_net}
if [[ -n $UPSTREAM_TESTS ]]; then
  step "e2e with kube-controller-manager's resourceclaim controller on ($UPSTREAM_TESTS)"
  (
    trap 'e2e/cluster/restart-kcm.sh >/dev/null 2>&1 || true' EXIT
    e2e/cluster/restart-kcm.sh --resourceclaim-controller
    for t in ${UPSTREAM_TESTS//,/ }; do
      if ! DRACO_BUILD_DIR="$BUILD" bash "e2e/tests/${t}_test.sh"; then
        echo "=== retrying once: $t"
        DRACO_BUILD_DIR="$BUILD" bash "e2e/tests/${t}_test.sh"
      fi
    done
  )
fi

if [[ -n $MATRIX_VERSIONS ]]; then
  step "e2e on Kubernetes ${MATRIX_VERSIONS} ($MATRIX_TESTS)"
  e2e/matrix.sh --versions "$MATRIX_VERSIONS" --tests "$MATRIX_TESTS" "$BUILD"
fi

# PodGroup claims need the Workload API and DRAWorkloadResourceClaims (beta, off by default in
# 1.37): a second control plane with the "workload-claims" profile, on its own ports, runs the one
# test that needs it (it skips, exit 77, on the default control plane). A skip here is a failure.
step "e2e with the workload-claims profile (PodGroup claims)"
(
  export DRACO_E2E_DIR=/tmp/draco-e2e-workload DRACO_API_PORT=17643 DRACO_ETCD_PORT=27990 \
    DRACO_ETCD_PEER_PORT=28000 DRACO_E2E_WORKLOAD_CLAIMS=1 DRACO_BUILD_DIR="$BUILD" \
    DRACO_REAL_NODE_BASE=4
  trap 'e2e/cluster/down.sh >/dev/null 2>&1 || true' EXIT
  e2e/cluster/down.sh >/dev/null 2>&1 || true
  e2e/cluster/up.sh --nodes 4 --real-nodes 1 >"$DRACO_E2E_DIR.up.log" 2>&1 || { cat "$DRACO_E2E_DIR.up.log"; exit 1; }
  run() {
    if ! bash "e2e/tests/$1.sh"; then
      echo "=== retrying once: $1"
      bash "e2e/tests/$1.sh"
    fi
  }
  # rbac_serviceaccount_test: the chart's ServiceAccount on a server that serves PodGroups (draco
  # watches them there, gate or not).
  for t in draco_podgroup_claims_test draco_podgroup_gang_test real_node_podgroup_test \
    rbac_serviceaccount_test; do run $t; done
  # PodGroup claims made by kube-controller-manager's resourceclaim controller (issue #23).
  e2e/cluster/restart-kcm.sh --resourceclaim-controller
  run draco_podgroup_claims_test
)

# TSan runs on a quiet machine, as it always has: clang-tidy finishes first.
step "clang-tidy result"
tidy_rc=0
wait "$tidy_pid" || tidy_rc=$?
tidy_pid=""  # finished: its PID may be reused, cleanup must not signal it
if ((tidy_rc)); then
  cat "$tidy_log"
  exit 1
fi
cat "$tidy_log"

if [[ -f scripts/tsan-targets.txt ]]; then
  step "TSan"
  mapfile -t targets < <(grep -v '^#' scripts/tsan-targets.txt | grep .)
  if ((${#targets[@]})); then
    cmake -S . -B "$BUILD-tsan" -G Ninja -DDRACO_SANITIZER=thread -DDRACO_BUILD_BENCHMARKS=OFF \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" >/dev/null
    cmake --build "$BUILD-tsan" -j"$JOBS" --target "${targets[@]}"
    # Only the listed targets are built here; ctest lists the others as *_NOT_BUILT.
    TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
      ctest --test-dir "$BUILD-tsan" --output-on-failure -j"$JOBS" -L unit -E '_NOT_BUILT$'
  fi
fi
step "all tests passed"
