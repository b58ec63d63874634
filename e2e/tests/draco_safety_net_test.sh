#!/usr/bin/env bash
# Safety net (issue #13): a pod whose scheduler has a constraint draco does not model ends bound.
# The scheduler profile draco-e2e-strict (e2e/cluster/up.sh) may not use nodes labelled
# draco-e2e/strict-excluded and, like a scheduler without DRA recovery, never deallocates claims
# by itself. node-0 is excluded and holds the only free device, so draco allocates it there; the
# pod is for another scheduler, so draco neither pins it nor reserves the claim. kube-scheduler
# reports it unschedulable; draco deallocates the claim (Warning Event DeallocatedUnschedulable
# quoting the scheduler, draco_released_unschedulable_total); once node-1 has a free device,
# kube-scheduler allocates the claim there and binds the pod.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/draco_helpers.sh"
grep -q 'schedulerName: draco-e2e-strict' "$DRACO_E2E_DIR/scheduler.yaml" 2>/dev/null || {
  echo "SKIP: kube-scheduler has no draco-e2e-strict profile; restart the cluster (down.sh; up.sh)" >&2
  exit 77
}
NS=draco-safety
DRV=safety.draco.dev
EXCLUDED=draco-e2e/strict-excluded
cleanup() {
  stop_all_draco
  cleanup_ns $NS
  delete_driver $DRV node-0 node-1
  k label node node-0 $EXCLUDED- >/dev/null 2>&1 || true
}
trap cleanup EXIT
on_fail() {
  echo "pods:"; k get pods -n $NS -o wide
  echo "strict pod:"; k get pod -n $NS strict -o jsonpath='gates={.spec.schedulingGates} node={.spec.nodeName} conditions={.status.conditions} claims={.status.resourceClaimStatuses}{"\n"}'
  echo "claims:"; k get resourceclaims -n $NS -o jsonpath='{range .items[*]}{.metadata.name} rv={.metadata.resourceVersion} finalizers={.metadata.finalizers} allocation={.status.allocation.devices.results} reservedFor={.status.reservedFor}{"\n"}{end}'
  echo "events:"; k get events -n $NS -o custom-columns=OBJ:.involvedObject.name,TYPE:.type,REASON:.reason,MSG:.message --no-headers | cut -c1-300
  echo "draco log (last 40 lines about $NS):"; grep "$NS" "$DRACO_LOGS/draco-safety.log" | tail -n 40 | cut -c1-400
  echo "kube-scheduler log (strict):"; grep "strict" "$DRACO_E2E_DIR/logs/kube-scheduler.log" | tail -n 20 | cut -c1-400
}
fresh_ns $NS
k label node node-0 $EXCLUDED=true --overwrite >/dev/null
make_driver $NS $DRV 1 node-0 node-1
start_draco safety --leader-elect=false
eventually 30 "draco is ready" draco_ready safety

# A default-scheduler pod takes node-1's device (its own node selector), leaving node-0's.
{
  template $NS one-dev $DRV
  gated_pod $NS blocker one-dev
  echo "  nodeSelector: {kubernetes.io/hostname: node-1}"
} | k apply -f - >/dev/null
eventually 60 "blocker is bound to node-1 with node-1's device" \
  bash -c "[[ \$(kubectl get pod -n $NS blocker -o jsonpath='{.spec.nodeName}') == node-1 ]]"
pod_on_its_devices $NS blocker || fail "blocker is not on its devices' node"

{ gated_pod $NS strict one-dev; echo "  schedulerName: draco-e2e-strict"; } | k apply -f - >/dev/null
pass "created a gated pod for scheduler draco-e2e-strict"

ev_reason() {
  k get events -n $NS --field-selector "involvedObject.name=strict,reason=DeallocatedUnschedulable" \
    -o jsonpath='{range .items[*]}{.type}|{.message}{"\n"}{end}'
}
eventually 60 "draco deallocates the unschedulable pod's claim and records the Event" \
  bash -c "[[ -n \"\$(kubectl get events -n $NS --field-selector involvedObject.name=strict,reason=DeallocatedUnschedulable -o name)\" ]]"
ev=$(ev_reason | head -n1)
[[ $ev == Warning\|* ]] || fail "Event is not a Warning: $ev"
[[ $ev == *"draco-e2e-strict reported the pod unschedulable"* && $ev == *"didn't match scheduler-enforced node affinity"* ]] ||
  fail "Event does not quote kube-scheduler: $ev"
pass "Warning Event quotes kube-scheduler: ${ev#Warning|}"
[[ -z $(k get pod -n $NS strict -o jsonpath='{.spec.affinity}') ]] ||
  fail "pod for another scheduler was pinned: $(k get pod -n $NS strict -o jsonpath='{.spec.affinity}')"
pass "the pod for another scheduler was not pinned"
[[ $(draco_metric safety draco_released_unschedulable_total) == 1 ]] ||
  fail "draco_released_unschedulable_total is '$(draco_metric safety draco_released_unschedulable_total)', want 1"
pass "draco_released_unschedulable_total is 1"
claim=$(k get pod -n $NS strict -o jsonpath='{.status.resourceClaimStatuses[0].resourceClaimName}')
[[ -n $claim ]] || fail "strict pod has no generated claim"
# node-0's device is free again but excluded for this pod: nobody may take it for the pod.
sleep 2
[[ -z $(k get pod -n $NS strict -o jsonpath='{.spec.nodeName}') ]] || fail "strict pod bound to an excluded node"
[[ -z $(k get resourceclaim -n $NS "$claim" -o jsonpath='{.status.allocation}') ]] ||
  fail "claim $claim was allocated again while no allowed node has a device"
pass "claim stays unallocated while no allowed node has a free device"

# node-1's device frees up: kube-scheduler allocates it there and binds the pod.
k delete pod -n $NS blocker --grace-period=0 --force >/dev/null 2>&1
eventually 90 "strict pod is bound to node-1" \
  bash -c "[[ \$(kubectl get pod -n $NS strict -o jsonpath='{.spec.nodeName}') == node-1 ]]"
pod_on_its_devices $NS strict || fail "strict pod is not on its devices' node"
[[ $(k get resourceclaim -n $NS "$claim" -o jsonpath='{.status.reservedFor[0].name}') == strict ]] ||
  fail "claim $claim is not reserved for the bound pod"
pass "strict pod is bound on an allowed node with its claim allocated there and reserved for it"
[[ $(k get events -n $NS --field-selector "involvedObject.name=strict,reason=DeallocatedUnschedulable" -o name | wc -l) -eq 1 ]] ||
  fail "expected exactly one DeallocatedUnschedulable Event"
[[ $(draco_metric safety draco_released_unschedulable_total) == 1 ]] || fail "counter moved after the pod was bound"
no_double_allocation
