#!/usr/bin/env bash
# Restarts only kube-apiserver of a running local control plane (same port, certs and etcd), for
# tests that prove watches and informers survive an API-server restart. Blocks until ready.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
[[ -f $D/env ]] || die "no cluster running ($D/env missing)"
source "$D/env"
BIN=$DRACO_BIN
stop_bg kube-apiserver
start_apiserver
wait_for kube-apiserver 180 apiserver_ready || die "kube-apiserver not ready after restart"

# kube-scheduler and kube-controller-manager keep running across the restart, and their informers
# re-list with client-go's backoff (up to 30 s after the failures of the outage): a pod changed
# right after the restart can wait that long to be seen (2026-12-06: a gate removed 5 s after a
# restart was not acted on for over 60 s, failing the next e2e test). So block until kube-scheduler
# binds a probe pod created now, which it can only see through a re-established pod watch.
if [[ -n $(kubectl get nodes -o name 2>/dev/null | head -n 1) ]]; then
  probe=scheduler-probe-$$
  kubectl apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $probe, namespace: default}
spec:
  tolerations: [{operator: Exists}]
  containers: [{name: c, image: registry.invalid/pause:1}]
YAML
  probe_bound() { [[ -n $(kubectl get pod -n default "$probe" -o jsonpath='{.spec.nodeName}') ]]; }
  wait_for "kube-scheduler (binds a probe pod)" 120 probe_bound || log "WARNING: kube-scheduler did not bind $probe within 120 s"
  kubectl delete pod -n default "$probe" --grace-period=0 --force >/dev/null 2>&1 || true
fi
