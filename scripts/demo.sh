#!/usr/bin/env bash
# draco's main job on an embedded default, from a fresh machine: installs dependencies, builds the
# local Kubernetes v1.37.2 control plane (cached under ~/.cache/draco) and draco, starts the control
# plane on 127.0.0.1 with 4 fake GPU nodes, starts `draco run` in the background against it,
# applies the sample DeviceClasses, ResourceSlices, claims, claim templates and gated pods from
# e2e/samples/demo, and prints where each pod's devices went (allocated by draco, bound by
# kube-scheduler).
# Leaves the control plane and draco running (KUBECONFIG in /tmp/draco-e2e/env, draco's log in
# /tmp/draco-e2e/logs/draco-demo.log, metrics on 127.0.0.1:8080); e2e/cluster/down.sh stops both
# (draco alone: `kill $(cat /tmp/draco-e2e/pids/draco-demo.pid)`).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
./scripts/install-deps.sh >/dev/null
e2e/cluster/up.sh --nodes 4
source "${DRACO_E2E_DIR:-/tmp/draco-e2e}/env"
BUILD=${DRACO_BUILD_DIR:-$root/build}
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$BUILD" --target draco -j"$(nproc)" >/dev/null
pidfile=$DRACO_E2E_DIR/pids/draco-demo.pid
if [[ -f $pidfile ]]; then kill "$(cat "$pidfile")" 2>/dev/null || true; sleep 1; fi
mkdir -p "$DRACO_E2E_DIR/logs" "$DRACO_E2E_DIR/pids"
"$BUILD/controller/draco" run --kubeconfig "$KUBECONFIG" --leader-elect=false \
  --metrics-bind-address 127.0.0.1:8080 --health-probe-bind-address 127.0.0.1:8081 \
  >"$DRACO_E2E_DIR/logs/draco-demo.log" 2>&1 &
echo $! >"$pidfile"
until curl -sf 127.0.0.1:8081/readyz >/dev/null; do
  kill -0 "$(cat "$pidfile")" 2>/dev/null || { echo "draco exited; see $DRACO_E2E_DIR/logs/draco-demo.log" >&2; exit 1; }
  sleep 0.5
done
echo "draco is running (pid $(cat "$pidfile"), log $DRACO_E2E_DIR/logs/draco-demo.log)"
kubectl apply -f e2e/samples/demo/ >/dev/null
pods=$(kubectl get -f e2e/samples/demo/20-workloads.yaml -o name | grep '^pod/' | cut -d/ -f2)
end=$((SECONDS + 120))
for p in $pods; do
  until [[ -n $(kubectl get pod "$p" -o jsonpath='{.spec.nodeName}') ]]; do
    ((SECONDS < end)) || { echo "pod $p was not scheduled; see kubectl describe pod $p" >&2; exit 1; }
    sleep 0.5
  done
done
printf '%-11s %-8s %-26s %s\n' POD NODE CLAIM DEVICES
for p in $pods; do
  node=$(kubectl get pod "$p" -o jsonpath='{.spec.nodeName}')
  for c in $(kubectl get pod "$p" -o jsonpath='{range .spec.resourceClaims[*]}{.resourceClaimName}{" "}{end}{range .status.resourceClaimStatuses[*]}{.resourceClaimName}{" "}{end}'); do
    devs=$(kubectl get resourceclaim "$c" -o jsonpath='{range .status.allocation.devices.results[*]}{.pool}/{.device} {end}')
    printf '%-11s %-8s %-26s %s\n' "$p" "$node" "$c" "$devs"
  done
done
