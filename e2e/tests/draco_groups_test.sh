#!/usr/bin/env bash
# All-or-nothing pod groups (issue #19) on the real control plane, asserted with kubectl:
#  1. a 4-pod group (draco.dev/group, min 4) is not allocated while 3 members exist, and is
#     allocated, released and bound as a whole once the 4th arrives; a 5-pod group on the 4
#     remaining devices holds nothing;
#  2. two competing groups that each fit alone but not together: one gets everything, the other
#     nothing, and it gets its turn when the first finishes;
#  3. a group constrained to one clique (draco.dev/group-match-attribute) among several: only
#     the clique with room for the whole group is used;
#  4. draco stopped in the middle of a group's writes (DRACO_TESTING_EXIT_AFTER_GROUP_WRITES):
#     after a restart the group is completed, and when it no longer fits the half that was
#     written is deallocated: never a partial group.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/draco_helpers.sh"
NS=draco-groups
DRV=groups.draco.dev
trap 'stop_all_draco; cleanup_ns $NS; delete_driver $DRV node-0 node-1; k delete deviceclass $DRV >/dev/null 2>&1 || true' EXIT
on_fail() {
  k get pods -n $NS -o wide
  k get resourceclaims -n $NS
  k get events -n $NS --sort-by=.lastTimestamp | tail -20
  tail -30 "$DRACO_LOGS"/draco-groups*.log
}
fresh_ns $NS

# slice NODE NAME:CLIQUE...: NODE's node-local slice with these devices (a new pool generation).
gen=0
slice() {
  local node=$1 d; shift
  gen=$((gen + 1))
  {
    cat <<YAML
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: $node-$DRV}
spec:
  driver: $DRV
  nodeName: $node
  pool: {name: $node, generation: $gen, resourceSliceCount: 1}
  devices:
YAML
    for d in "$@"; do echo "  - {name: ${d%%:*}, attributes: {clique: {string: \"${d#*:}\"}}}"; done
  } | k apply -f - >/dev/null
}
# slices NODE0_CLIQUES NODE1_CLIQUES: devices dev-0.. on each node, one per clique word.
slices() {
  local n=0 words i devs
  for words in "$1" "$2"; do
    devs=() i=0
    for w in $words; do devs+=("dev-$i:$w"); i=$((i + 1)); done
    slice node-$n "${devs[@]}"
    n=$((n + 1))
  done
}
k apply -f - >/dev/null <<YAML
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: $DRV}
spec:
  selectors:
  - cel: {expression: 'device.driver == "$DRV"'}
YAML
# member NAME GROUP MIN [MATCH]: a gated pod of group GROUP with one device.
member() {
  cat <<YAML
---
apiVersion: v1
kind: Pod
metadata:
  name: $1
  namespace: $NS
  labels: {draco.dev/group: $2, draco.dev/group-min-members: "$3"}
  annotations: {draco.dev/group-match-attribute: "${4:-}"}
spec:
  schedulingGates: [{name: draco.dev/allocation}]
  resourceClaims: [{name: dev, resourceClaimTemplateName: one}]
  containers:
  - {name: c, image: registry.invalid/ml:1, resources: {claims: [{name: dev}]}}
YAML
}
bound_count() { k get pods -n $NS "$@" -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep -c . || true; }
gated_count() { k get pods -n $NS "$@" -o jsonpath='{range .items[*]}{.spec.schedulingGates[*].name}{"\n"}{end}' | grep -c draco.dev/allocation || true; }
# allocated_count SELECTOR...: allocated claims of the pods with that label selector.
allocated_count() {
  local n=0 p c
  for p in $(k get pods -n $NS "$@" -o name); do
    for c in $(k get -n $NS "$p" -o jsonpath='{.status.resourceClaimStatuses[*].resourceClaimName}'); do
      [[ -n $(k get resourceclaim -n $NS "$c" -o jsonpath='{.status.allocation}' 2>/dev/null) ]] && n=$((n + 1))
    done
  done
  echo $n
}
finish_group() {  # deletes a group's pods (no kubelet: force) and waits for their claims to go
  k delete pods -n $NS -l "draco.dev/group=$1" --grace-period=0 --force --wait=false >/dev/null 2>&1
  eventually 60 "group $1's pods are gone" bash -c "[[ -z \$(kubectl get pods -n $NS -l draco.dev/group=$1 -o name) ]]"
}
template $NS one $DRV | k apply -f - >/dev/null

# --- 1. a group waits for its minimum, then goes as a whole -------------------------------------
slices "a a a a" "a a a a"  # 8 devices
start_draco groups --leader-elect=false --workers 8 --group-reserve-after 10m
eventually 30 "draco is ready" draco_ready groups
{ for i in 0 1 2; do member g4-$i g4 4; done; } | k apply -f - >/dev/null
sleep 3
[[ $(allocated_count -l draco.dev/group=g4) -eq 0 && $(gated_count -l draco.dev/group=g4) -eq 3 ]] ||
  fail "3 of 4 members: want nothing allocated and all gated"
k get events -n $NS --field-selector involvedObject.name=g4-0 -o jsonpath='{.items[*].reason}' |
  grep -q WaitingForGroupMembers || fail "no WaitingForGroupMembers Event on g4-0"
pass "3 of 4 members exist: nothing allocated, all gated, WaitingForGroupMembers Event"
member g4-3 g4 4 | k apply -f - >/dev/null
eventually 60 "the 4-pod group is allocated and bound as a whole" \
  bash -c "[[ \$(kubectl get pods -n $NS -l draco.dev/group=g4 -o jsonpath='{range .items[*]}{.spec.nodeName}{\"\\n\"}{end}' | grep -c .) -eq 4 ]]"
for i in 0 1 2 3; do pod_on_its_devices $NS g4-$i || fail "g4-$i not on its devices' node"; done
{ for i in 0 1 2 3 4; do member g5-$i g5 5; done; } | k apply -f - >/dev/null
eventually 30 "the 5-pod group that cannot fit gets a FailedAllocation Event naming a member" \
  bash -c "kubectl get events -n $NS --field-selector involvedObject.name=g5-0,reason=FailedAllocation -o jsonpath='{.items[*].message}' | grep -q 'group g5 needs 5 member(s) placed at once: 4 placed, then member $NS/g5-'"
[[ $(allocated_count -l draco.dev/group=g5) -eq 0 ]] || fail "the group that does not fit holds devices"
pass "the 5-pod group holds no device"
k delete pods -n $NS -l draco.dev/group=g5 --grace-period=0 --force --wait=false >/dev/null 2>&1
finish_group g4

# --- 2. two competing groups: one gets everything, the other its turn later ----------------------
slices "a a" "a a"  # 4 devices; each group needs 3
{ for i in 0 1 2; do member ga-$i ga 3; member gb-$i gb 3; done; } | k apply -f - >/dev/null
eventually 60 "one of the two groups is bound" \
  bash -c "[[ \$(kubectl get pods -n $NS -o jsonpath='{range .items[*]}{.spec.nodeName}{\"\\n\"}{end}' | grep -c .) -eq 3 ]]"
sleep 2
a=$(bound_count -l draco.dev/group=ga); b=$(bound_count -l draco.dev/group=gb)
if [[ $a -eq 3 ]]; then winner=ga loser=gb; else winner=gb loser=ga; fi
[[ $(bound_count -l draco.dev/group=$winner) -eq 3 && $(bound_count -l draco.dev/group=$loser) -eq 0 &&
   $(allocated_count -l draco.dev/group=$loser) -eq 0 && $(gated_count -l draco.dev/group=$loser) -eq 3 ]] ||
  fail "want one group with everything and the other with nothing (ga bound $a, gb bound $b)"
pass "$winner got all 3 members placed, $loser nothing (no device held, all gated)"
finish_group $winner
eventually 60 "$loser gets its turn once $winner finished" \
  bash -c "[[ \$(kubectl get pods -n $NS -l draco.dev/group=$loser -o jsonpath='{range .items[*]}{.spec.nodeName}{\"\\n\"}{end}' | grep -c .) -eq 3 ]]"
finish_group $loser

# --- 3. one clique among several -------------------------------------------------------------------
# node-0: cliques x y z w, node-1: y q y r: only clique y has room for 3 devices.
slices "x y z w" "y q y r"
{ for i in 0 1 2; do member gc-$i gc 3 $DRV/clique; done; } | k apply -f - >/dev/null
eventually 60 "the clique-constrained group is bound" \
  bash -c "[[ \$(kubectl get pods -n $NS -l draco.dev/group=gc -o jsonpath='{range .items[*]}{.spec.nodeName}{\"\\n\"}{end}' | grep -c .) -eq 3 ]]"
cliques=""
for i in 0 1 2; do
  c=$(k get pod -n $NS gc-$i -o jsonpath='{.status.resourceClaimStatuses[0].resourceClaimName}')
  dev=$(k get resourceclaim -n $NS "$c" -o jsonpath='{.status.allocation.devices.results[0].pool}/{.status.allocation.devices.results[0].device}')
  idx=${dev##*/dev-}; node=${dev%%/*}
  words=$([[ $node == node-0 ]] && echo "x y z w" || echo "y q y r")
  cliques+="$(echo $words | cut -d' ' -f$((idx + 1))) "
done
[[ $(tr ' ' '\n' <<<"$cliques" | grep -c .) -eq 3 && $(tr ' ' '\n' <<<"$cliques" | sort -u | grep -c .) -eq 1 && $cliques == y* ]] ||
  fail "members' devices are in cliques [$cliques], want all in y"
pass "all 3 members' devices are in clique y (the only one with room)"
finish_group gc

# --- 4. draco stops between a group's writes ---------------------------------------------------------
slices "a a a a" "a a a a"
stop_draco groups
crash_once() {  # GROUP: draco that exits after 2 of the group's 4 member writes
  DRACO_TESTING_EXIT_AFTER_GROUP_WRITES=2 start_draco groups-crash --leader-elect=false --workers 8
  { for i in 0 1 2 3; do member $1-$i $1 4; done; } | k apply -f - >/dev/null
  local end=$((SECONDS + 60))
  while kill -0 "${DRACO_PIDS[groups-crash]}" 2>/dev/null; do
    ((SECONDS < end)) || fail "draco did not stop after 2 writes"
    sleep 0.2
  done
  unset "DRACO_PIDS[groups-crash]"
  [[ $(allocated_count -l draco.dev/group=$1) -eq 2 && $(gated_count -l draco.dev/group=$1) -eq 4 ]] ||
    fail "after the stop: want 2 allocated claims and 4 gated pods, have $(allocated_count -l draco.dev/group=$1) and $(gated_count -l draco.dev/group=$1)"
  pass "draco stopped with $1 half written: 2 of 4 claims allocated, all 4 pods gated"
}
crash_once gh
start_draco groups-after --leader-elect=false --workers 8
eventually 60 "after the restart the half-written group is completed and bound" \
  bash -c "[[ \$(kubectl get pods -n $NS -l draco.dev/group=gh -o jsonpath='{range .items[*]}{.spec.nodeName}{\"\\n\"}{end}' | grep -c .) -eq 4 ]]"
stop_draco groups-after
finish_group gh
crash_once gr
# While draco is down, every free device goes (each node keeps only the devices allocated to the
# written half): the other half cannot fit any more.
for n in node-0 node-1; do
  keep=$(k get resourceclaims -n $NS -o jsonpath='{range .items[*]}{range .status.allocation.devices.results[*]}{.pool} {.device}{"\n"}{end}{end}' |
    awk -v n=$n '$1==n {print $2 ":a"}')
  if [[ -n $keep ]]; then slice $n $keep; else k delete resourceslice $n-$DRV >/dev/null; fi
done
start_draco groups-rollback --leader-elect=false --workers 8
eventually 60 "after the restart the half that no longer fits is deallocated" \
  bash -c "[[ \$(kubectl get resourceclaims -n $NS -o jsonpath='{range .items[*]}{.status.allocation.allocationTimestamp}{\"\\n\"}{end}' | grep -c .) -eq 0 ]]"
[[ $(gated_count -l draco.dev/group=gr) -eq 4 && $(bound_count -l draco.dev/group=gr) -eq 0 ]] ||
  fail "the rolled-back group's pods should all stay gated"
k get events -n $NS -o jsonpath='{.items[*].reason}' | grep -q DeallocatedIncompleteGroup ||
  fail "no DeallocatedIncompleteGroup Event"
pass "no partial group survives: 0 claims allocated, 4 pods gated, DeallocatedIncompleteGroup Event"
no_double_allocation
