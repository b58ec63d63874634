#!/usr/bin/env bash
# A DeviceClass with a CEL selector that fails at runtime: the pod that uses it stays gated and
# gets a clear Warning Event (pod and claim) quoting the CEL error; a pod of the same namespace
# using a healthy class is allocated and bound as usual. Fixing the class retries the parked pod
# without any polling.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/draco_helpers.sh"
NS=draco-badcel
DRV=cel.draco.dev
trap 'stop_all_draco; cleanup_ns $NS; delete_driver $DRV node-0 node-1; k delete deviceclass broken.draco.dev --wait=false >/dev/null 2>&1 || true' EXIT
fresh_ns $NS
make_driver $NS $DRV 2 node-0 node-1
cat <<YAML | k apply -f - >/dev/null
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: broken.draco.dev}
spec:
  selectors:
  - cel: {expression: 'device.driver == "$DRV" && device.attributes["$DRV"].model == "a100"'}
YAML
start_draco badcel --leader-elect=false
eventually 30 "draco is ready" draco_ready badcel
{
  template $NS broken broken.draco.dev
  template $NS healthy $DRV
  gated_pod $NS bad broken
  gated_pod $NS good healthy
} | k apply -f - >/dev/null
eventually 60 "the pod with a healthy class is allocated and bound" pod_on_its_devices $NS good
has_event() {
  kubectl get events -n $NS --field-selector "involvedObject.kind=$1,involvedObject.name=$2,type=Warning" \
    -o jsonpath='{range .items[*]}{.reason}: {.message}{"\n"}{end}' | grep -q "$3"
}
eventually 30 "the pod gets a Warning Event naming the CEL failure" has_event Pod bad "no such key"
claim=$(k get pod -n $NS bad -o jsonpath='{.status.resourceClaimStatuses[0].resourceClaimName}')
eventually 30 "its claim gets the same Warning Event" has_event ResourceClaim "$claim" "no such key"
k get events -n $NS --field-selector involvedObject.name=bad -o jsonpath='{.items[0].message}' | head -c 300; echo
[[ -z $(k get pod -n $NS bad -o jsonpath='{.spec.nodeName}') ]] || fail "pod with broken class was scheduled"
gates=$(k get pod -n $NS bad -o jsonpath='{.spec.schedulingGates[*].name}')
[[ $gates == draco.dev/allocation ]] || fail "gate removed from unallocatable pod: '$gates'"
pass "the pod with the broken class stays gated"
# Fix the class: the parked pod is retried by the class update event.
cat <<YAML | k apply -f - >/dev/null
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: broken.draco.dev}
spec:
  selectors:
  - cel: {expression: 'device.driver == "$DRV"'}
YAML
eventually 60 "after fixing the class the pod is allocated and bound" pod_on_its_devices $NS bad
no_double_allocation
