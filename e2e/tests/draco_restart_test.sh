#!/usr/bin/env bash
# draco killed (SIGKILL) and restarted in the middle of a burst of gated pods: after the restart
# every pod gets exactly one claim per template entry (no duplicates from the orphan window
# between claim creation and pod status), is allocated and bound, and no device is allocated twice.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/draco_helpers.sh"
NS=draco-restart
DRV=restart.draco.dev
PODS=${DRACO_E2E_RESTART_PODS:-60}
trap 'stop_all_draco; cleanup_ns $NS; delete_driver $DRV node-0 node-1' EXIT
fresh_ns $NS
make_driver $NS $DRV 40 node-0 node-1
start_draco first --leader-elect=false --workers 8
eventually 30 "draco is ready" draco_ready first
{
  template $NS one-dev $DRV
  for i in $(seq 1 $PODS); do gated_pod $NS p-$i one-dev; done
} | k apply -f - >/dev/null &
apply_pid=$!
# Kill draco once it has started writing (some claims exist) but before the burst is done.
eventually 60 "draco created the first claims" \
  bash -c "[[ \$(kubectl get resourceclaims -n $NS --no-headers 2>/dev/null | wc -l) -ge 5 ]]"
stop_draco first KILL
before=$(k get resourceclaims -n $NS --no-headers 2>/dev/null | wc -l)
pass "killed draco mid-burst with $before claims created"
wait $apply_pid
start_draco second --leader-elect=false --workers 8
all_bound() {
  [[ $(kubectl get pods -n $NS -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep -c .) -eq $PODS ]]
}
eventually 180 "all $PODS pods allocated and bound after the restart" all_bound
owners=$(k get resourceclaims -n $NS -o jsonpath='{range .items[*]}{.metadata.ownerReferences[0].uid}{"\n"}{end}')
total=$(grep -c . <<<"$owners")
unique=$(sort -u <<<"$owners" | grep -c .)
[[ $total -eq $PODS && $unique -eq $PODS ]] || fail "claims: $total for $unique owners, want $PODS each once"
pass "exactly one claim per pod ($total claims)"
for i in $(seq 1 $PODS); do pod_on_its_devices $NS p-$i || fail "p-$i not on its devices' node"; done
pass "every pod is bound to the node of its devices"
no_double_allocation
