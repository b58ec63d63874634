#!/usr/bin/env bash
# Restarts the local control plane's kube-controller-manager, with or without upstream's
# resourceclaim controller (off by default: draco owns claim lifecycle here).
# Usage: e2e/cluster/restart-kcm.sh [--resourceclaim-controller]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
[[ -f $D/env ]] || die "no control plane under $D"
BIN=$(env_bin)
stop_bg kube-controller-manager
start_kcm "$@"
sleep 1
kill -0 "$(cat "$D/pids/kube-controller-manager.pid")" 2>/dev/null ||
  die "kube-controller-manager exited: $D/logs/kube-controller-manager.log"
log "kube-controller-manager restarted ${1:-without the resourceclaim controller}"
