#!/usr/bin/env bash
# AllocationPolicies in draco run on the real control plane: draco starts and allocates while the
# CRD is absent (FirstFit, no limits); once the CRD is installed it is picked up without a restart;
# a policy's namespace limit keeps a pod gated with Warning Events naming the policy, its BinPack
# strategy puts pods on the already-used node, and raising the limit retries the parked pod at
# once (event-driven).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/draco_helpers.sh"
NS=draco-policy
DRV=policy.draco.dev
CRD=$E2E_ROOT/../crds/draco.dev_allocationpolicies.yaml
cleanup() {
  stop_all_draco
  cleanup_ns $NS
  delete_driver $DRV node-0 node-1
  k delete allocationpolicy policy-e2e --ignore-not-found >/dev/null 2>&1 || true
  k apply -f "$CRD" >/dev/null 2>&1 || true  # leave the CRD installed for other tests
}
trap cleanup EXIT
k delete crd allocationpolicies.draco.dev --ignore-not-found >/dev/null
eventually 60 "the AllocationPolicy CRD is gone" \
  bash -c "! kubectl get --raw /apis/draco.dev/v1alpha1 >/dev/null 2>&1"
fresh_ns $NS
make_driver $NS $DRV 2 node-0 node-1
start_draco policy --leader-elect=false --allocation-policy-recheck-interval=2
eventually 30 "draco is ready without the AllocationPolicy CRD" draco_ready policy
grep -q "AllocationPolicy CRD (allocationpolicies.draco.dev) not installed" \
  "$DRACO_LOGS/draco-policy.log" || fail "draco did not say that the CRD is absent"
{ template $NS one $DRV; gated_pod $NS p0 one; } | k apply -f - >/dev/null
eventually 60 "without the CRD a pod is allocated FirstFit and bound" pod_on_its_devices $NS p0
node0=$(k get pod -n $NS p0 -o jsonpath='{.spec.nodeName}')

k apply -f "$CRD" >/dev/null
k wait --for=condition=Established crd/allocationpolicies.draco.dev --timeout=60s >/dev/null
policy() {
  cat <<YAML | k apply -f - >/dev/null
apiVersion: draco.dev/v1alpha1
kind: AllocationPolicy
metadata: {name: policy-e2e}
spec:
  deviceClassSelector: {names: [$DRV]}
  strategy: BinPack
  namespaceLimits:
  - {namespace: $NS, maxDevices: $1}
YAML
}
policy 2
eventually 30 "draco picks up the CRD installed while it runs" \
  grep -q "AllocationPolicy CRD found" "$DRACO_LOGS/draco-policy.log"
eventually 30 "draco applies the policy" \
  grep -q "AllocationPolicy policy-e2e in effect (strategy BinPack, 1 namespace limit(s))" \
  "$DRACO_LOGS/draco-policy.log"
{ gated_pod $NS p1 one; } | k apply -f - >/dev/null
eventually 60 "p1 is allocated under the limit (2 devices)" pod_on_its_devices $NS p1
[[ $(k get pod -n $NS p1 -o jsonpath='{.spec.nodeName}') == "$node0" ]] \
  || fail "BinPack did not put p1 on $node0, the node already in use"
pass "BinPack puts p1 on $node0 next to p0"
{ gated_pod $NS p2 one; } | k apply -f - >/dev/null
has_event() {
  kubectl get events -n $NS --field-selector "involvedObject.kind=$1,involvedObject.name=$2,type=Warning" \
    -o jsonpath='{range .items[*]}{.reason}: {.message}{"\n"}{end}' | grep -q "$3"
}
eventually 30 "p2 gets a Warning Event naming the policy and its limit" \
  has_event Pod p2 "AllocationPolicy policy-e2e"
k get events -n $NS --field-selector involvedObject.name=p2,type=Warning -o jsonpath='{.items[0].message}' | head -c 300; echo
[[ -z $(k get pod -n $NS p2 -o jsonpath='{.spec.nodeName}') ]] || fail "p2 was scheduled over the limit"
[[ $(k get pod -n $NS p2 -o jsonpath='{.spec.schedulingGates[*].name}') == draco.dev/allocation ]] \
  || fail "p2 lost its scheduling gate over the limit"
pass "p2 stays gated over the namespace limit"
policy 3
eventually 60 "raising the limit retries p2 at once: allocated and bound" pod_on_its_devices $NS p2
no_double_allocation
n=$(k get resourceclaims -n $NS -o jsonpath='{range .items[*]}{.status.allocation.devices.results[0].device}{"\n"}{end}' | grep -c .)
[[ $n == 3 ]] || fail "expected 3 allocated claims in $NS, got $n"
pass "3 claims allocated within the raised limit"
