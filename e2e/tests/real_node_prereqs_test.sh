#!/usr/bin/env bash
# up.sh --real-nodes with a host prerequisite missing (here runc, hidden from PATH): it names what
# is missing and how to get it, exits 3, and starts nothing (no control plane, no state), on its
# own directory and ports so that a running cluster is not touched.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v runc >/dev/null || { echo "SKIP: runc is missing on this host anyway" >&2; exit 77; }
shim=$(mktemp -d)
dir=$(mktemp -d -u /tmp/draco-prereqs-XXXX)
trap 'rm -rf "$shim" "$dir"' EXIT
# Every command on PATH but runc.
IFS=: read -ra path <<<"$PATH"
for d in "${path[@]}"; do
  [[ -d $d ]] || continue
  for f in "$d"/*; do
    b=${f##*/}
    [[ $b == runc || -e $shim/$b || ! -x $f ]] || ln -s "$f" "$shim/$b"
  done
done
rc=0
out=$(PATH=$shim DRACO_E2E_DIR=$dir DRACO_API_PORT=19443 DRACO_ETCD_PORT=29790 DRACO_ETCD_PEER_PORT=29800 \
  "$ROOT/e2e/cluster/up.sh" --real-nodes 1 2>&1) || rc=$?
((rc == 3)) || fail "up.sh exited $rc, want 3: $out"
grep -q -- '- runc: apt-get install runc' <<<"$out" || fail "no line naming runc and its package: $out"
pass "up.sh names the missing prerequisite and its package: $(grep -- '- runc' <<<"$out")"
[[ ! -e $dir ]] || fail "up.sh created $dir"
! curl -s -o /dev/null --max-time 2 -k https://127.0.0.1:19443/readyz || fail "a kube-apiserver answers on 19443"
! pgrep -f -- "--data-dir /dev/shm/draco-e2e-etcd-19443" >/dev/null || fail "an etcd runs for port 19443"
pass "nothing was started"
