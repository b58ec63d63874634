#!/usr/bin/env bash
# Two draco replicas with --leader-elect: exactly one leads (leader_election_master_status and the
# Lease holder agree) and only the leader allocates; after the leader is killed the standby takes
# over within the lease duration and allocates new pods.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/draco_helpers.sh"
NS=draco-le
DRV=le.draco.dev
trap 'stop_all_draco; cleanup_ns $NS; delete_driver $DRV node-0 node-1' EXIT
fresh_ns $NS
make_driver $NS $DRV 4 node-0 node-1
LE=(--leader-elect=true --leader-elect-namespace $NS)
start_draco a "${LE[@]}"
start_draco b "${LE[@]}"
one_leader() {
  local a b
  a=$(draco_metric a 'leader_election_master_status{name="draco"}')
  b=$(draco_metric b 'leader_election_master_status{name="draco"}')
  [[ "$a$b" == 10 || "$a$b" == 01 ]]
}
eventually 40 "exactly one replica leads" one_leader
sleep 3
one_leader || fail "leadership not stable"
if [[ $(draco_metric a 'leader_election_master_status{name="draco"}') == 1 ]]; then
  leader=a standby=b
else
  leader=b standby=a
fi
holder=$(k get lease -n $NS draco -o jsonpath='{.spec.holderIdentity}')
[[ -n $holder ]] || fail "lease has no holder"
pass "replica $leader leads (lease holder $holder), $standby stands by"

{ template $NS one-dev $DRV; gated_pod $NS first one-dev; } | k apply -f - >/dev/null
eventually 60 "the leader allocates and the pod binds" pod_on_its_devices $NS first
standby_allocs=$(draco_metric $standby 'draco_allocation_attempts_total{result="success"}')
[[ -z $standby_allocs || $standby_allocs == 0 ]] || fail "standby allocated ($standby_allocs)"
pass "the standby made no allocation"

stop_draco $leader KILL
start=$SECONDS
eventually 40 "standby $standby takes over" \
  bash -c "[[ \$(curl -s 127.0.0.1:${DRACO_PORTS[$standby]}/metrics | awk '\$1==\"leader_election_master_status{name=\\\"draco\\\"}\" {print \$2}') == 1 ]]"
pass "failover after $((SECONDS - start)) s"
gated_pod $NS second one-dev | k apply -f - >/dev/null
eventually 60 "the new leader allocates a new pod" pod_on_its_devices $NS second
no_double_allocation
