#!/usr/bin/env bash
# Stops the local control plane started by up.sh, and anything else that recorded its pid under
# $D/pids (e.g. the draco of scripts/demo.sh), then removes all of its state.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
source "$here/node-lib.sh"
BIN=$(env_bin || true)
# Real nodes first: their pods, driver, kubelet and containerd, then their network and cgroups.
if [[ -d $D/nodes ]]; then
  for n in "$D"/nodes/*; do [[ -d $n ]] && stop_real_node "$(basename "$n")"; done
fi
remove_real_node_network
# Clients first (they would only retry against a stopped API server), then the control plane.
if [[ -d $D/pids ]]; then
  for f in "$D"/pids/*.pid; do
    [[ -e $f ]] || continue
    c=$(basename "$f" .pid)
    case $c in kube-controller-manager | kube-scheduler | kube-apiserver | etcd) ;; *) stop_bg "$c" ;; esac
  done
fi
for c in kube-controller-manager kube-scheduler kube-apiserver etcd; do stop_bg "$c"; done
rm -rf "$ETCD_DATA"
[[ -d $D ]] && rm -rf "$D"
log "control plane stopped"
