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
