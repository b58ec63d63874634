#!/usr/bin/env bash
# PodGroup gangs (#19) on the real control plane with the "workload-claims" profile (GenericWorkload
# and scheduling.k8s.io/v1beta1 served): pods whose spec.schedulingGroup names a PodGroup with
# schedulingPolicy.gang.minCount 3 stay gated with no claim allocated while 2 members exist, and are
# allocated, released and bound together once the 3rd arrives; a second gang (minCount 2) that
# finds one free device holds nothing. Asserted with kubectl.
source "$(dirname "$0")/lib.sh"
if [[ ${DRACO_E2E_WORKLOAD_CLAIMS:-0} != 1 ]]; then
  echo "SKIP: needs the workload-claims control plane profile (PodGroups are served only with" \
    "GenericWorkload): DRACO_E2E_DIR=<dir> e2e/cluster/up.sh --workload-claims" >&2
  exit 77
fi
source "$(dirname "$0")/draco_helpers.sh"
NS=draco-gang
DRV=gang.draco.dev
trap 'stop_all_draco; k delete podgroup --all -n $NS --wait=false >/dev/null 2>&1 || true; cleanup_ns $NS; delete_driver $DRV node-0 node-1 node-2 node-3' EXIT
on_fail() {
  k get pods -n $NS -o wide
  k get resourceclaims -n $NS
  k get events -n $NS --sort-by=.lastTimestamp | tail -20
  tail -30 "$DRACO_LOGS"/draco-gang.log
}
fresh_ns $NS
make_driver $NS $DRV 1 node-0 node-1 node-2 node-3
start_draco gang --leader-elect=false
eventually 30 "draco is ready" draco_ready gang
grep -q "PodGroups served" "$DRACO_LOGS/draco-gang.log" || fail "draco did not discover PodGroups"

podgroup() {
  cat <<YAML
---
apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {name: $1, namespace: $NS}
spec:
  schedulingPolicy: {gang: {minCount: $2}}
YAML
}
member() {
  cat <<YAML
---
apiVersion: v1
kind: Pod
metadata: {name: $1, namespace: $NS, labels: {gang: $2}}
spec:
  schedulingGroup: {podGroupName: $2}
  schedulingGates: [{name: draco.dev/allocation}]
  resourceClaims: [{name: dev, resourceClaimTemplateName: one-dev}]
  containers:
  - {name: c, image: registry.invalid/ml:1, resources: {claims: [{name: dev}]}}
YAML
}
allocated() { k get resourceclaims -n $NS -o jsonpath='{range .items[*]}{.status.allocation.allocationTimestamp}{"\n"}{end}' | grep -c . || true; }
bound() { k get pods -n $NS -l gang=$1 -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep -c . || true; }
{ template $NS one-dev $DRV; podgroup train 3; member train-0 train; member train-1 train; } |
  k apply -f - >/dev/null
eventually 70 "members wait for the gang's minimum (WaitingForGroupMembers Event)" \
  bash -c "kubectl get events -n $NS --field-selector reason=WaitingForGroupMembers -o jsonpath='{.items[*].message}' | grep -q '2 of 3 member(s) exist'"
[[ $(allocated) -eq 0 ]] || fail "a claim was allocated for an incomplete gang"
pass "2 of 3 members: no claim allocated"
member train-2 train | k apply -f - >/dev/null
eventually 60 "the gang of 3 is allocated and bound as a whole" bash -c "[[ \$(kubectl get pods -n $NS -l gang=train -o jsonpath='{range .items[*]}{.spec.nodeName}{\"\\n\"}{end}' | grep -c .) -eq 3 ]]"
for i in 0 1 2; do pod_on_its_devices $NS train-$i || fail "train-$i not on its device's node"; done
pass "every member is bound to the node of its device"
{ podgroup pair 2; member pair-0 pair; member pair-1 pair; } | k apply -f - >/dev/null
eventually 30 "the gang that does not fit is explained (FailedAllocation naming a member)" \
  bash -c "kubectl get events -n $NS --field-selector involvedObject.name=pair-0,reason=FailedAllocation -o jsonpath='{.items[*].message}' | grep -q 'PodGroup pair needs 2 member(s) placed at once: 1 placed, then member $NS/pair-'"
[[ $(allocated) -eq 3 && $(bound pair) -eq 0 ]] || fail "the gang that does not fit holds a device or a pod was bound"
pass "the gang that does not fit holds no device (1 free device stays free)"
no_double_allocation
