#!/usr/bin/env bash
# PodGroup claims (DRAWorkloadResourceClaims, #14) on the real control plane with the
# "workload-claims" profile (e2e/cluster/up.sh --workload-claims: GenericWorkload,
# DRAWorkloadResourceClaims and scheduling.k8s.io/v1beta1 on kube-apiserver, kube-scheduler and
# KCM, KCM's resourceclaim-controller off). A PodGroup with a claim template and three gated member
# pods: draco creates the group's claim once (the PodGroup as owner, recorded in its status),
# allocates it once, every member records it and kube-scheduler binds all three to the node with
# the device, which the claim reserves for the PodGroup. When the members are done the group's
# reservation stays (as upstream's); when the PodGroup is deleted the claim is released and
# deleted.
source "$(dirname "$0")/lib.sh"
if [[ ${DRACO_E2E_WORKLOAD_CLAIMS:-0} != 1 ]]; then
  echo "SKIP: needs the workload-claims control plane profile (DRAWorkloadResourceClaims is off" \
    "by default in 1.37): DRACO_E2E_DIR=<dir> e2e/cluster/up.sh --workload-claims" >&2
  exit 77
fi
source "$(dirname "$0")/draco_helpers.sh"
NS=draco-podgroup
DRV=podgroup.draco.dev
trap 'stop_all_draco; k delete podgroup --all -n $NS --wait=false >/dev/null 2>&1 || true; cleanup_ns $NS; delete_driver $DRV node-0 node-1' EXIT
fresh_ns $NS
make_driver $NS $DRV 1 node-0 node-1
start_draco podgroup --leader-elect=false --feature-gates=DRAWorkloadResourceClaims=true
eventually 30 "draco is ready" draco_ready podgroup
grep -q "PodGroups served" "$DRACO_LOGS/draco-podgroup.log" || fail "draco did not discover PodGroups"

member() {
  cat <<YAML
---
apiVersion: v1
kind: Pod
metadata: {name: $1, namespace: $NS}
spec:
  schedulingGroup: {podGroupName: train}
  schedulingGates: [{name: draco.dev/allocation}]
  resourceClaims: [{name: dev, resourceClaimTemplateName: one-dev}]
  containers:
  - {name: c, image: registry.invalid/ml:1, resources: {claims: [{name: dev}]}}
YAML
}
{
  template $NS one-dev $DRV
  cat <<YAML
---
apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {name: train, namespace: $NS}
spec:
  schedulingPolicy: {basic: {}}
  resourceClaims: [{name: dev, resourceClaimTemplateName: one-dev}]
YAML
  member train-0
  member train-1
  member train-2
} | k apply -f - >/dev/null
pass "created a PodGroup with a claim template and 3 gated members"

group_claim() { k get podgroup -n $NS train -o jsonpath='{.status.resourceClaimStatuses[?(@.name=="dev")].resourceClaimName}'; }
group_claim_recorded() { [[ -n $(group_claim) ]]; }  # evaluated on every try
eventually 60 "the PodGroup's status records its claim" group_claim_recorded
claim=$(group_claim)
for p in train-0 train-1 train-2; do
  eventually 60 "$p is bound" bash -c "[[ -n \$(kubectl get pod -n $NS $p -o jsonpath='{.spec.nodeName}') ]]"
done
claims=$(k get resourceclaims -n $NS -o name)
[[ $claims == "resourceclaim.resource.k8s.io/$claim" ]] || fail "want exactly the group's claim, got: $claims"
owner=$(k get resourceclaim -n $NS "$claim" -o jsonpath='{.metadata.ownerReferences[0].apiVersion}/{.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}/{.metadata.ownerReferences[0].controller}')
[[ $owner == scheduling.k8s.io/v1beta1/PodGroup/train/true ]] || fail "claim owner: $owner"
[[ $(k get resourceclaim -n $NS "$claim" -o jsonpath='{.metadata.annotations.resource\.kubernetes\.io/pod-claim-name}') == dev ]] ||
  fail "claim lacks the pod-claim-name annotation"
[[ $(k get resourceclaim -n $NS "$claim" -o jsonpath='{.metadata.generateName}') == train-dev- ]] || fail "claim generateName"
pass "one claim, created from the template for the PodGroup (owner, annotation, name)"

node=$(k get pod -n $NS train-0 -o jsonpath='{.spec.nodeName}')
for p in train-0 train-1 train-2; do
  [[ $(k get pod -n $NS $p -o jsonpath='{.spec.nodeName}') == "$node" ]] || fail "$p is not on $node"
  [[ $(k get pod -n $NS $p -o jsonpath='{.status.resourceClaimStatuses[?(@.name=="dev")].resourceClaimName}') == "$claim" ]] ||
    fail "$p does not record the group's claim"
done
pool=$(k get resourceclaim -n $NS "$claim" -o jsonpath='{.status.allocation.devices.results[*].pool}')
[[ $pool == "$node" ]] || fail "claim allocated on pool '$pool', members on $node"
pass "all 3 members share the claim and are bound to $node, where its device is"
reserved=$(k get resourceclaim -n $NS "$claim" -o jsonpath='{range .status.reservedFor[*]}{.apiGroup}/{.resource}/{.name}{" "}{end}')
[[ $reserved == "scheduling.k8s.io/podgroups/train " ]] || fail "reservedFor: '$reserved'"
pass "the claim is reserved for the PodGroup only"
[[ $(draco_metric podgroup 'draco_allocation_attempts_total{result="success"}') == 1 ]] ||
  fail "draco allocated $(draco_metric podgroup 'draco_allocation_attempts_total{result="success"}') times, want once"
pass "draco allocated the group's claim once"

for p in train-0 train-1 train-2; do
  k patch pod -n $NS $p --subresource=status --type=merge -p '{"status":{"phase":"Succeeded"}}' >/dev/null
done
sleep 3
[[ -n $(k get resourceclaim -n $NS "$claim" -o jsonpath='{.status.allocation}') ]] ||
  fail "the group's claim was deallocated while the PodGroup exists"
pass "members done: the PodGroup's reservation stays while the group exists (as upstream's)"

k delete pods --all -n $NS --grace-period=0 --force >/dev/null 2>&1
k delete podgroup -n $NS train --wait=false >/dev/null
eventually 60 "PodGroup deleted" bash -c "! kubectl get podgroup -n $NS train >/dev/null 2>&1"
eventually 60 "the group's claim is released and deleted" \
  bash -c "! kubectl get resourceclaim -n $NS $claim >/dev/null 2>&1"
no_double_allocation
