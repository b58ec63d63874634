#!/usr/bin/env bash
# Stops the local control plane started by up.sh and removes all of its state.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
for c in kube-controller-manager kube-scheduler kube-apiserver etcd; do stop_bg "$c"; done
rm -rf "$ETCD_DATA"
[[ -d $D ]] && rm -rf "$D"
log "control plane stopped"
