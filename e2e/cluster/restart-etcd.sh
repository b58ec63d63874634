#!/usr/bin/env bash
# Restarts only etcd of a running local control plane (same port and data), for chaos runs that
# check how kube-apiserver's clients ride out a storage outage. Blocks until etcd is healthy.
# --down SECONDS keeps it stopped that long first (default 0).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
[[ -f $D/env ]] || die "no cluster running ($D/env missing)"
source "$D/env"
BIN=$DRACO_BIN
DOWN=0
while (($#)); do
  case $1 in
    --down) DOWN=$2; shift 2 ;;
    *) die "unknown flag $1 (usage: restart-etcd.sh [--down SECONDS])" ;;
  esac
done
stop_bg etcd
sleep "$DOWN"
# A restarted etcd appends to its log; keep the previous run's.
[[ -f $D/logs/etcd.log ]] && mv "$D/logs/etcd.log" "$D/logs/etcd.log.$(date +%s)"
start_etcd
wait_for etcd 60 curl -sf "http://127.0.0.1:$ETCD_PORT/health" || die "etcd did not come back: $D/logs/etcd.log"
