#!/usr/bin/env bash
# Restarts one part of a local real node (node-up.sh) the way an operator or a crash would:
#   restart-node.sh NAME kubelet|driver|containerd [--kill]
# TERM (or KILL with --kill), then the same command line again; waits until the node is Ready
# (kubelet, containerd) or the driver's ResourceSlice is back (driver). Pods keep running: their
# containers belong to containerd's shims.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
source "$here/node-lib.sh"
name=${1:?usage: restart-node.sh NAME kubelet|driver|containerd [--kill]}
part=${2:?usage: restart-node.sh NAME kubelet|driver|containerd [--kill]}
BIN=$(env_bin)
dir=$D/nodes/$name
[[ -f $dir/node.env ]] || die "no real node $name under $D/nodes"
pidf=$D/pids/$name-$part.pid
if [[ ${3:-} == --kill && -f $pidf ]]; then
  kill -9 "$(cat "$pidf")" 2>/dev/null || true
fi
case $part in
  kubelet)
    stop_bg "$name-kubelet"
    start_real_node_kubelet "$name"
    wait_for "$name Ready" 120 node_ready "$name" || die "$name not Ready: $D/logs/$name-kubelet.log" ;;
  driver)
    stop_bg "$name-driver"
    start_real_node_driver "$name" "$(source "$dir/node.env" && echo "$DEVICES")" ;;
  containerd)
    stop_bg "$name-containerd"
    start_real_node_containerd "$name" ;;
  *) die "unknown part $part (kubelet, driver or containerd)" ;;
esac
