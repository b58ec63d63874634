#!/usr/bin/env bash
# draco's main job on an embedded default, from a fresh machine: installs dependencies, builds the
# local Kubernetes v1.37.2 control plane (cached under ~/.cache/draco), starts it on 127.0.0.1 with
# 4 fake GPU nodes, applies the sample DeviceClasses, ResourceSlices, claims and pods from
# e2e/samples/demo, and prints where each pod's devices went.
# Leaves the control plane running (KUBECONFIG in /tmp/draco-e2e/env); stop with e2e/cluster/down.sh.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
./scripts/install-deps.sh >/dev/null
e2e/cluster/up.sh --nodes 4
source "${DRACO_E2E_DIR:-/tmp/draco-e2e}/env"
kubectl apply -f e2e/samples/demo/ >/dev/null
pods=$(kubectl get -f e2e/samples/demo/20-workloads.yaml -o name | grep '^pod/' | cut -d/ -f2)
end=$((SECONDS + 120))
for p in $pods; do
  until [[ -n $(kubectl get pod "$p" -o jsonpath='{.spec.nodeName}') ]]; do
    ((SECONDS < end)) || { echo "pod $p was not scheduled; see kubectl describe pod $p" >&2; exit 1; }
    sleep 0.5
  done
done
printf '%-10s %-8s %-22s %s\n' POD NODE CLAIM DEVICES
for p in $pods; do
  node=$(kubectl get pod "$p" -o jsonpath='{.spec.nodeName}')
  for c in $(kubectl get pod "$p" -o jsonpath='{range .spec.resourceClaims[*]}{.resourceClaimName}{" "}{end}'); do
    devs=$(kubectl get resourceclaim "$c" -o jsonpath='{range .status.allocation.devices.results[*]}{.pool}/{.device} {end}')
    printf '%-10s %-8s %-22s %s\n' "$p" "$node" "$c" "$devs"
  done
done
