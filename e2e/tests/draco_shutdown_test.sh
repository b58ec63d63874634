#!/usr/bin/env bash
# SIGTERM while the API server is unreachable: draco still exits promptly (exit 0: workers get a
# 2 s drain grace, then requests stuck in retries are cancelled) instead of waiting out retry
# backoffs of workers and informers (tens of seconds to minutes). Earlier tests leave claims whose
# pods are gone, so workers are busy with live GETs when the API server dies. The API server is
# started again afterwards, and a second draco shows it is usable.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/draco_helpers.sh"
CLUSTER=$E2E_ROOT/cluster
apiserver_pid() { cat "$DRACO_E2E_DIR/pids/kube-apiserver.pid"; }
restore() {
  stop_all_draco
  kill -0 "$(apiserver_pid)" 2>/dev/null || "$CLUSTER/restart-apiserver.sh" >/dev/null
}
trap restore EXIT

start_draco shutdown --leader-elect=false
eventually 30 "draco is ready" draco_ready shutdown

kill -9 "$(apiserver_pid)"  # gone at once, connections reset
eventually 30 "kube-apiserver is down" bash -c "! kubectl get --raw /readyz --request-timeout=1s"
# The reflectors' watches break and their LISTs retry with growing backoff (up to 10 s a wait);
# after 15 s each LIST still has half a minute of retries ahead of it.
sleep 15

pid=${DRACO_PIDS[shutdown]}
start=$SECONDS
kill -TERM "$pid"
for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$pid" 2>/dev/null; then
  fail "draco still running $((SECONDS - start))s after SIGTERM with the API server down"
fi
rc=0
wait "$pid" || rc=$?
unset "DRACO_PIDS[shutdown]"
[[ $rc -eq 0 ]] || fail "draco exited $rc after SIGTERM"
pass "draco exited 0 within $((SECONDS - start))s of SIGTERM while the API server was down"
grep -q "stopped" "$DRACO_LOGS/draco-shutdown.log" || fail "no 'stopped' line in the log"

"$CLUSTER/restart-apiserver.sh" >/dev/null
eventually 60 "kube-apiserver is back" kubectl get --raw /readyz
start_draco shutdown-after --leader-elect=false
eventually 30 "a new draco becomes ready against the restarted API server" draco_ready shutdown-after
