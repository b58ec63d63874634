#!/usr/bin/env bash
# draco's main job on an embedded default, from a fresh machine: installs dependencies, builds the
# local Kubernetes v1.37.2 control plane (cached under ~/.cache/draco) and draco, starts the control
# plane on 127.0.0.1 with 4 fake nodes and one real node (a kubelet, containerd and upstream's DRA
# test driver publishing 8 GPUs: e2e/cluster/node-up.sh; needs root), starts `draco run` in the
# background against it, applies the sample DeviceClass, claims, claim template and gated pods from
# e2e/samples/demo, waits until their containers run, and prints, for each pod, the devices draco
# allocated beside the devices its container saw (what the driver injected through CDI).
# Leaves the control plane and draco running (KUBECONFIG in /tmp/draco-e2e/env, draco's log in
# /tmp/draco-e2e/logs/draco-demo.log, metrics on 127.0.0.1:8080); e2e/cluster/down.sh stops both
# (draco alone: `kill $(cat /tmp/draco-e2e/pids/draco-demo.pid)`).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
./scripts/install-deps.sh >/dev/null
e2e/cluster/up.sh --nodes 4 --real-nodes 1
source "${DRACO_E2E_DIR:-/tmp/draco-e2e}/env"
BUILD=${DRACO_BUILD_DIR:-$root/build}
# The build scripts/test.sh uses too (same directory, same settings: neither rebuilds the other's).
./scripts/configure.sh "$BUILD"
cmake --build "$BUILD" --target draco -j"$(nproc)" >/dev/null
pidfile=$DRACO_E2E_DIR/pids/draco-demo.pid
if [[ -f $pidfile ]]; then kill "$(cat "$pidfile")" 2>/dev/null || true; sleep 1; fi
mkdir -p "$DRACO_E2E_DIR/logs" "$DRACO_E2E_DIR/pids"
"$BUILD/controller/draco" run --kubeconfig "$KUBECONFIG" --leader-elect=false \
  --metrics-bind-address 127.0.0.1:8080 --health-probe-bind-address 127.0.0.1:8081 \
  >"$DRACO_E2E_DIR/logs/draco-demo.log" 2>&1 &
echo $! >"$pidfile"
source scripts/demo-lib.sh
wait_ready "$(cat "$pidfile")" http://127.0.0.1:8081/readyz "$DRACO_E2E_DIR/logs/draco-demo.log" \
  "${DRACO_DEMO_READY_SECONDS:-60}" || exit 1
echo "draco is running (pid $(cat "$pidfile"), log $DRACO_E2E_DIR/logs/draco-demo.log)"
# A previous run's pods are running already (their gates are gone, and a gate cannot be added back):
# start the workloads afresh.
kubectl delete -f e2e/samples/demo/20-workloads.yaml --ignore-not-found --wait=true --timeout=60s >/dev/null
kubectl apply -f e2e/samples/demo/ >/dev/null
pods=$(kubectl get -f e2e/samples/demo/20-workloads.yaml -o name | grep '^pod/' | cut -d/ -f2)
# Running, and the container has printed what it saw (the last line of show-devices).
shown() {
  [[ $(kubectl get pod "$1" -o jsonpath='{.status.phase}') == Running ]] &&
    [[ $(kubectl logs "$1" 2>/dev/null) == *"show-devices: done"* ]]
}
end=$((SECONDS + 180))
for p in $pods; do
  until shown "$p"; do
    if ((SECONDS >= end)); then
      echo "pod $p is not running; kubectl describe pod $p:" >&2
      kubectl describe pod "$p" | tail -n 15 >&2
      exit 1
    fi
    sleep 0.5
  done
done
echo "every pod runs on a real node; each container printed the devices its DRA driver gave it"
printf '%-11s %-12s %-26s %-48s %s\n' POD NODE CLAIM "ALLOCATED BY DRACO" "CONTAINER SAW"
for p in $pods; do
  node=$(kubectl get pod "$p" -o jsonpath='{.spec.nodeName}')
  log=$(kubectl logs "$p")
  for c in $(kubectl get pod "$p" -o jsonpath='{range .spec.resourceClaims[*]}{.resourceClaimName}{" "}{end}{range .status.resourceClaimStatuses[*]}{.resourceClaimName}{" "}{end}'); do
    devs=$(kubectl get resourceclaim "$c" -o jsonpath='{range .status.allocation.devices.results[*]}{.pool}/{.device} {end}')
    saw=$(sed -n "s|^dra-device: \([^ ]*\) claim $c\$|\1|p" <<<"$log" | tr '\n' ' ')
    printf '%-11s %-12s %-26s %-48s %s\n' "$p" "$node" "$c" "$devs" "${saw:-(nothing)}"
  done
done
echo
echo "what the driver injected into each container (kubectl logs POD):"
for p in $pods; do
  sed -n 's/^dra-env: /  /p' <<<"$(kubectl logs "$p")" | sed "s/^/$p/"
done
