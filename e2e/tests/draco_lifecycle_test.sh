#!/usr/bin/env bash
# draco run on the real control plane: ML pods with claim templates and a shared standalone claim
# get claims, allocations and bind to the node that holds their devices; finished and deleted pods
# release their devices and their generated claims are deleted; the shared claim is deallocated
# when its last consumer goes and loses the finalizer.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/draco_helpers.sh"
NS=draco-lifecycle
DRV=lifecycle.draco.dev
trap 'stop_all_draco; cleanup_ns $NS; delete_driver $DRV node-0 node-1' EXIT
fresh_ns $NS
make_driver $NS $DRV 2 node-0 node-1
start_draco lifecycle --leader-elect=false
eventually 30 "draco is ready" draco_ready lifecycle

{
  template $NS one-dev $DRV
  cat <<YAML
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: shared, namespace: $NS}
spec:
  devices:
    requests:
    - name: dev
      exactly: {deviceClassName: $DRV}
YAML
  gated_pod $NS train-a one-dev
  gated_pod $NS train-b one-dev
  gated_pod $NS infer-a "" shared
  gated_pod $NS infer-b "" shared
  # A pod with its own node affinity: draco's pin is ANDed into its term.
  gated_pod $NS train-c one-dev
  cat <<YAML
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions: [{key: kubernetes.io/os, operator: In, values: [linux]}]
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 10
        preference: {matchExpressions: [{key: kubernetes.io/arch, operator: In, values: [amd64]}]}
YAML
} | k apply -f - >/dev/null
pass "created template, shared claim and 5 gated pods"

for p in train-a train-b train-c infer-a infer-b; do
  eventually 60 "$p is bound to the node that holds its devices" pod_on_its_devices $NS $p
done
# Node-local allocations: the gate removal pinned each pod to its devices' node.
aff='{.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms}'
for p in train-a train-c; do
  node=$(k get pod -n $NS $p -o jsonpath='{.spec.nodeName}')
  pin=$(k get pod -n $NS $p -o jsonpath='{.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchFields[0]}')
  [[ $pin == *'"key":"metadata.name"'* && $pin == *'"operator":"In"'* && $pin == *"[\"$node\"]"* ]] ||
    fail "$p: expected required affinity metadata.name In [$node], got '$pin'"
done
terms=$(k get pod -n $NS train-c -o jsonpath="$aff")
[[ $terms == *'"key":"kubernetes.io/os"'* ]] || fail "train-c: own matchExpressions lost: $terms"
[[ $(k get pod -n $NS train-c -o jsonpath='{.spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight}') == 10 ]] ||
  fail "train-c: preferred terms lost"
pass "gate removal pinned node-local pods to their node, keeping the pod's own affinity"
for p in train-a train-b; do
  claim=$(k get pod -n $NS $p -o jsonpath='{.status.resourceClaimStatuses[0].resourceClaimName}')
  [[ $claim == $p-dev-* ]] || fail "$p: generated claim name '$claim'"
  owner=$(k get resourceclaim -n $NS $claim -o jsonpath='{.metadata.ownerReferences[0].name}/{.metadata.ownerReferences[0].controller}')
  [[ $owner == "$p/true" ]] || fail "$claim: owner $owner"
  ann=$(k get resourceclaim -n $NS $claim -o jsonpath='{.metadata.annotations.resource\.kubernetes\.io/pod-claim-name}')
  [[ $ann == dev ]] || fail "$claim: pod-claim-name annotation '$ann'"
  lbl=$(k get resourceclaim -n $NS $claim -o jsonpath='{.metadata.labels.draco-e2e}')
  [[ $lbl == true ]] || fail "$claim: template labels not copied"
  ts=$(k get resourceclaim -n $NS $claim -o jsonpath='{.status.allocation.allocationTimestamp}')
  [[ -n $ts ]] || fail "$claim: no allocationTimestamp"
done
pass "generated claims carry owner, annotation, labels and allocationTimestamp"
n=$(k get pods -n $NS -o json | grep -c '"resourceClaimName": "train-' || true)
[[ $n -eq 3 ]] || fail "expected 3 recorded generated claims, got $n"
eventually 30 "shared claim is reserved for both pods" \
  bash -c "[[ \$(kubectl get resourceclaim -n $NS shared -o jsonpath='{.status.reservedFor[*].name}' | wc -w) -eq 2 ]]"
no_double_allocation

# A finished pod: its generated claim is deallocated and deleted.
claim_a=$(k get pod -n $NS train-a -o jsonpath='{.status.resourceClaimStatuses[0].resourceClaimName}')
k patch pod -n $NS train-a --subresource=status --type=merge -p '{"status":{"phase":"Succeeded"}}' >/dev/null
eventually 30 "claim of the finished pod is deleted" \
  bash -c "! kubectl get resourceclaim -n $NS $claim_a >/dev/null 2>&1"
# A deleted pod: same.
claim_b=$(k get pod -n $NS train-b -o jsonpath='{.status.resourceClaimStatuses[0].resourceClaimName}')
k delete pod -n $NS train-b --grace-period=0 --force >/dev/null 2>&1
eventually 30 "claim of the deleted pod is deleted" \
  bash -c "! kubectl get resourceclaim -n $NS $claim_b >/dev/null 2>&1"

# The shared claim keeps its allocation while one consumer remains, then is deallocated.
k delete pod -n $NS infer-a --grace-period=0 --force >/dev/null 2>&1
eventually 30 "shared claim is reserved for the remaining pod only" \
  bash -c "[[ \$(kubectl get resourceclaim -n $NS shared -o jsonpath='{.status.reservedFor[*].name}') == infer-b ]]"
[[ -n $(k get resourceclaim -n $NS shared -o jsonpath='{.status.allocation}') ]] || fail "shared claim deallocated too early"
k delete pod -n $NS infer-b --grace-period=0 --force >/dev/null 2>&1
eventually 30 "shared claim is deallocated and loses the finalizer after its last consumer" \
  bash -c "[[ -z \$(kubectl get resourceclaim -n $NS shared -o jsonpath='{.status.allocation}{.metadata.finalizers}') ]]"
[[ $(draco_metric lifecycle draco_double_allocated_devices) == 0 ]] || fail "auditor reports double allocation"
pass "auditor reports no double allocation"
