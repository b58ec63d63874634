#!/usr/bin/env bash
# Device binding conditions (KEP-5007; DRADeviceBindingConditions is beta and on by default from
# 1.36, alpha before and turned on by up.sh; DRAResourceClaimDeviceStatus GA in 1.37) with draco on the real control plane. The test
# plays the driver of fabric-attached devices (allNodes pool, bindsToNode, bindingConditions
# [Attached], bindingFailureConditions [AttachFailed]) by writing the claim's status.devices.
#
# Documented behaviour (docs/platform-guide.md, "Binding conditions"): draco keeps the pod gated
# until the allocated device reports its binding conditions True; kube-scheduler then binds it at
# once on draco's allocation. A failed condition, or none True within draco's --binding-timeout
# of the allocation, makes draco deallocate the claim and allocate it again itself, under the
# AllocationPolicy (strategy and namespace limit) while the pod stays gated; kube-scheduler never
# writes the claim.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/draco_helpers.sh"
NS=draco-bindcond
NS2=draco-bindcond-timeout
NS3=draco-bindcond-stock
DRV=bindcond.draco.dev
TIMEOUT=25
# Namespaces go first, while draco still runs: it releases the claims of the deleted pods and
# removes their delete-protection finalizers (without it the namespaces would hang).
ns_gone() { [[ -z $(kubectl get namespace $NS $NS2 $NS3 --no-headers --ignore-not-found 2>/dev/null) ]]; }
cleanup() {
  cleanup_ns $NS
  cleanup_ns $NS2
  cleanup_ns $NS3
  local end=$((SECONDS + 60))
  until ns_gone || ((SECONDS > end)); do sleep 1; done
  stop_all_draco
  k delete allocationpolicy bindcond-e2e --ignore-not-found >/dev/null 2>&1 || true
  k delete deviceclass $DRV --wait=false >/dev/null 2>&1 || true
  k delete resourceslice fabric-$DRV --wait=false >/dev/null 2>&1 || true
}
trap cleanup EXIT
# Before 1.36 the gate is alpha: e2e/cluster/up.sh turns it on in the control plane (its
# default FEATURE_GATES), and draco follows the server version's defaults unless told.
minor=${DRACO_K8S_VERSION#v1.}; minor=${minor%%.*}
((minor >= 34)) || {
  echo "SKIP: device binding conditions need Kubernetes >= 1.34 ($DRACO_K8S_VERSION)" >&2
  exit 77
}
gates=()
if ((minor < 36)); then
  metrics=$(kubectl get --raw /metrics 2>/dev/null || true)
  grep -q 'kubernetes_feature_enabled{name="DRADeviceBindingConditions",stage="[A-Z]*"} 1' <<<"$metrics" &&
    grep -q 'kubernetes_feature_enabled{name="DRADeviceTaints",stage="[A-Z]*"} 1' <<<"$metrics" || {
    echo "SKIP: DRADeviceBindingConditions or DRADeviceTaints is off in this $DRACO_K8S_VERSION control plane" >&2
    exit 77
  }
  # The test's driver also taints the failed device (DRADeviceTaints: beta from 1.36 too).
  gates=(--feature-gates=DRADeviceBindingConditions=true,DRADeviceTaints=true)
fi
k get crd allocationpolicies.draco.dev >/dev/null 2>&1 \
  || k apply -f "$E2E_ROOT/../crds/draco.dev_allocationpolicies.yaml" >/dev/null
k wait --for=condition=Established crd/allocationpolicies.draco.dev --timeout=60s >/dev/null
eventually 120 "namespaces of an earlier run are gone" ns_gone
fresh_ns $NS
fresh_ns $NS2
fresh_ns $NS3

# slice "TAINTED_DEVICES" GENERATION: the fabric pool, five devices that attach to the chosen
# node; the listed ones carry a NoSchedule taint (the driver's way of taking a device out).
slice() {
  local i taint
  cat <<YAML
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: fabric-$DRV}
spec:
  driver: $DRV
  allNodes: true
  pool: {name: fabric, generation: ${2:-1}, resourceSliceCount: 1}
  devices:
YAML
  for i in 0 1 2 3 4; do
    taint=""
    [[ " $1 " == *" gpu-$i "* ]] && taint=", taints: [{key: $DRV/attach-failed, value: \"true\", effect: NoSchedule}]"
    echo "  - {name: gpu-$i, attributes: {index: {int: $i}}, bindsToNode: true, bindingConditions: [Attached], bindingFailureConditions: [AttachFailed]$taint}"
  done
}
{
  cat <<YAML
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: $DRV}
spec:
  selectors:
  - cel: {expression: 'device.driver == "$DRV"'}
---
apiVersion: draco.dev/v1alpha1
kind: AllocationPolicy
metadata: {name: bindcond-e2e}
spec:
  deviceClassSelector: {names: [$DRV]}
  strategy: FirstFit
  namespaceLimits:
  - {namespace: $NS, maxDevices: 1}
---
YAML
  slice ""
} | k apply -f - >/dev/null
start_draco bindcond --leader-elect=false --binding-timeout=${TIMEOUT}s "${gates[@]}"
eventually 30 "draco is ready" draco_ready bindcond
eventually 30 "draco applies the policy" \
  grep -q "AllocationPolicy bindcond-e2e in effect" "$DRACO_LOGS/draco-bindcond.log"

claim_of() { k get pod -n "$1" "$2" -o jsonpath='{.status.resourceClaimStatuses[0].resourceClaimName}'; }
device_of() { k get resourceclaim -n "$1" "$2" -o jsonpath='{.status.allocation.devices.results[0].device}'; }
stamp_of() { k get resourceclaim -n "$1" "$2" -o jsonpath='{.status.allocation.allocationTimestamp}'; }
gated() { [[ $(k get pod -n "$1" "$2" -o jsonpath='{.spec.schedulingGates[*].name}') == draco.dev/allocation ]]; }
# (Output captured first: with pipefail, `kubectl | grep -q` fails when grep exits early.)
has_event() {  # NS KIND NAME REASON [TEXT]
  local msgs
  msgs=$(k get events -n "$1" --field-selector "involvedObject.kind=$2,involvedObject.name=$3,reason=$4" \
    -o jsonpath='{range .items[*]}{.message}{"\n"}{end}')
  grep -q -- "${5:-}" <<<"$msgs"
}
# report NS CLAIM DEVICE TYPE STATUS [REASON MESSAGE]: the driver sets one device condition.
report() {
  local now; now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  k patch resourceclaim -n "$1" "$2" --subresource=status --type=merge -p "{\"status\":{\"devices\":[
    {\"driver\":\"$DRV\",\"pool\":\"fabric\",\"device\":\"$3\",\"conditions\":[{\"type\":\"$4\",
     \"status\":\"$5\",\"reason\":\"${6:-Driver}\",\"message\":\"${7:-set by the e2e driver}\",
     \"lastTransitionTime\":\"$now\"}]}]}}" >/dev/null
}
# Nobody but draco wrote the claim's status (kube-scheduler never re-allocated it).
only_draco_wrote() {
  local managers
  managers=$(k get resourceclaim -n "$1" "$2" -o jsonpath='{range .metadata.managedFields[*]}{.manager}{"\n"}{end}')
  ! grep -q kube-scheduler <<<"$managers" || fail "kube-scheduler wrote claim $1/$2: $managers"
}

# --- failure ---------------------------------------------------------------------------------
{ template $NS one $DRV; gated_pod $NS p1 one; } | k apply -f - >/dev/null
eventually 60 "p1's claim is allocated by draco" bash -c "[[ -n \$(kubectl get resourceclaim -n $NS -o jsonpath='{.items[0].status.allocation.devices.results[0].device}') ]]"
c1=$(claim_of $NS p1)
d1=$(device_of $NS "$c1")
t1=$(stamp_of $NS "$c1")
[[ $(k get resourceclaim -n $NS "$c1" -o jsonpath='{.status.allocation.devices.results[0].bindingConditions[0]}') == Attached ]] \
  || fail "the allocation of $c1 does not carry the device's binding conditions"
[[ -n $t1 ]] || fail "the allocation of $c1 has no allocationTimestamp"
eventually 30 "p1 waits: Normal Event BindingConditionsPending" \
  has_event $NS Pod p1 BindingConditionsPending "binding condition Attached is not True yet"
sleep 3
gated $NS p1 || fail "p1 was released before its device reported Attached"
pass "p1 stays gated while $d1 is not attached"

# The driver cannot attach d1: it taints the device (so nobody gets it again) and reports the
# failure.
slice "$d1" 2 | k apply -f - >/dev/null
report $NS "$c1" "$d1" AttachFailed True FabricError "no path to the node"
eventually 30 "draco reports the failure: Warning Event BindingConditionsFailed" \
  has_event $NS Pod p1 BindingConditionsFailed "AttachFailed is True (FabricError: no path to the node)"
has_event $NS ResourceClaim "$c1" BindingConditionsFailed "draco deallocated the claim" \
  || fail "no BindingConditionsFailed Event on claim $c1"
eventually 30 "draco allocated $c1 again" \
  bash -c "d=\$(kubectl get resourceclaim -n $NS $c1 -o jsonpath='{.status.allocation.devices.results[0].device}'); [[ -n \$d && \$d != $d1 ]]"
d1b=$(device_of $NS "$c1")
echo "p1: $d1 failed, draco chose $d1b"
gated $NS p1 || fail "p1 lost its gate during the re-allocation"
[[ $(stamp_of $NS "$c1") != "$t1" ]] || fail "the new allocation kept the old allocationTimestamp"
[[ -z $(k get resourceclaim -n $NS "$c1" -o jsonpath='{.status.devices}') ]] \
  || fail "the failed device's status survived the re-allocation"
# The re-allocation counts against the policy's namespace limit (maxDevices 1): a second pod
# is refused while p1 holds its new device, even though p1 is not bound yet.
{ gated_pod $NS p2 one; } | k apply -f - >/dev/null
eventually 30 "p2 is refused by the policy's namespace limit" \
  has_event $NS Pod p2 FailedAllocation "AllocationPolicy bindcond-e2e"
gated $NS p2 || fail "p2 lost its gate over the namespace limit"
pass "p1's re-allocation is within the namespace limit; p2 waits"
[[ $(draco_metric bindcond 'draco_binding_conditions_deallocations_total{reason="failed"}') == 1 ]] \
  || fail "draco_binding_conditions_deallocations_total{reason=\"failed\"} is not 1"
pass "draco_binding_conditions_deallocations_total{reason=\"failed\"} 1"

report $NS "$c1" "$d1b" Attached True Attached "attached to the node"
eventually 60 "p1 is released and bound on draco's allocation" \
  bash -c "[[ -n \$(kubectl get pod -n $NS p1 -o jsonpath='{.spec.nodeName}') ]]"
node1=$(k get pod -n $NS p1 -o jsonpath='{.spec.nodeName}')
[[ -n $node1 ]] || fail "p1 was not bound"
[[ $(device_of $NS "$c1") == "$d1b" ]] || fail "the claim's device changed at binding"
[[ $(k get resourceclaim -n $NS "$c1" -o jsonpath='{.status.allocation.nodeSelector.nodeSelectorTerms[0].matchFields[0].values[0]}') == "$node1" ]] \
  || fail "p1 is bound to $node1, not the node its device was attached to"
[[ $(k get resourceclaim -n $NS "$c1" -o jsonpath='{.status.reservedFor[0].name}') == p1 ]] \
  || fail "claim $c1 is not reserved for p1"
only_draco_wrote $NS "$c1"
pass "p1 bound to $node1 with $d1b; only draco wrote its claim"

# --- timeout ---------------------------------------------------------------------------------
{ template $NS2 one $DRV; gated_pod $NS2 p3 one; } | k apply -f - >/dev/null
eventually 60 "p3's claim is allocated by draco" bash -c "[[ -n \$(kubectl get resourceclaim -n $NS2 -o jsonpath='{.items[0].status.allocation.devices.results[0].device}') ]]"
c3=$(claim_of $NS2 p3)
d3=$(device_of $NS2 "$c3")
t3=$(stamp_of $NS2 "$c3")
start=$SECONDS
report $NS2 "$c3" "$d3" Attached False Attaching "still attaching"
eventually $((TIMEOUT + 30)) "after --binding-timeout=${TIMEOUT}s: Warning Event BindingConditionsTimeout" \
  has_event $NS2 Pod p3 BindingConditionsTimeout "still not True ${TIMEOUT}s after the allocation"
waited=$((SECONDS - start))
((waited >= TIMEOUT - 5)) || fail "draco gave up after ${waited}s, before the ${TIMEOUT}s timeout"
eventually 30 "draco allocated $c3 again (new allocationTimestamp)" \
  bash -c "t=\$(kubectl get resourceclaim -n $NS2 $c3 -o jsonpath='{.status.allocation.allocationTimestamp}'); [[ -n \$t && \$t != $t3 ]]"
d3b=$(device_of $NS2 "$c3")
echo "p3: $d3 timed out, draco chose $d3b (nobody tainted $d3: FirstFit may choose it again)"
gated $NS2 p3 || fail "p3 lost its gate during the re-allocation"
[[ $(draco_metric bindcond 'draco_binding_conditions_deallocations_total{reason="timeout"}') -ge 1 ]] \
  || fail "draco_binding_conditions_deallocations_total{reason=\"timeout\"} is 0"
report $NS2 "$c3" "$d3b" Attached True Attached "attached to the node"
eventually 60 "p3 is released and bound" \
  bash -c "[[ -n \$(kubectl get pod -n $NS2 p3 -o jsonpath='{.spec.nodeName}') ]]"
[[ $(device_of $NS2 "$c3") == "$d3b" ]] || fail "the claim's device changed at binding"
only_draco_wrote $NS2 "$c3"
pass "p3 bound with $d3b after the timeout; only draco wrote its claim"

# --- stock behaviour: a pod that draco does not gate ------------------------------------------
# kube-scheduler allocates it and waits in PreBind; on the failure it deallocates the claim and
# allocates it again itself (documented: outside draco's policies; here no limit covers $NS3).
cat <<YAML | k apply -f - >/dev/null
$(template $NS3 one $DRV)
---
apiVersion: v1
kind: Pod
metadata: {name: p4, namespace: $NS3}
spec:
  resourceClaims: [{name: dev, resourceClaimTemplateName: one}]
  containers:
  - {name: c, image: registry.invalid/ml:1, resources: {claims: [{name: dev}]}}
YAML
eventually 60 "kube-scheduler allocates p4's claim" bash -c "[[ -n \$(kubectl get resourceclaim -n $NS3 -o jsonpath='{.items[0].status.allocation.devices.results[0].device}') ]]"
c4=$(claim_of $NS3 p4)
d4=$(device_of $NS3 "$c4")
managers=$(k get resourceclaim -n $NS3 "$c4" -o jsonpath='{range .metadata.managedFields[*]}{.manager}{"\n"}{end}')
grep -q kube-scheduler <<<"$managers" || fail "kube-scheduler did not write p4's claim: $managers"
eventually 30 "kube-scheduler waits in PreBind: Event BindingConditionsPending" \
  has_event $NS3 Pod p4 BindingConditionsPending
slice "$d1 $d4" 3 | k apply -f - >/dev/null
report $NS3 "$c4" "$d4" AttachFailed True FabricError "no path to the node"
eventually 90 "kube-scheduler deallocates and allocates p4's claim again on its own" \
  bash -c "d=\$(kubectl get resourceclaim -n $NS3 $c4 -o jsonpath='{.status.allocation.devices.results[0].device}'); [[ -n \$d && \$d != $d4 ]]"
d4b=$(device_of $NS3 "$c4")
echo "p4 (not gated by draco): $d4 failed, kube-scheduler chose $d4b"
[[ $(draco_metric bindcond 'draco_binding_conditions_deallocations_total{reason="failed"}') == 1 ]] \
  || fail "draco counted a deallocation for the pod it does not gate"
report $NS3 "$c4" "$d4b" Attached True Attached "attached to the node"
eventually 60 "p4 is bound by kube-scheduler" \
  bash -c "[[ -n \$(kubectl get pod -n $NS3 p4 -o jsonpath='{.spec.nodeName}') ]]"
pass "a pod draco does not gate gets kube-scheduler's own re-allocation ($d4 -> $d4b)"
no_double_allocation
