#!/usr/bin/env bash
# A PodGroup claim (KEP-5729, 1.37 with DRAWorkloadResourceClaims: the "workload-claims" profile)
# run by a real kubelet and DRA driver: draco creates the group's claim, allocates it once and
# reserves it for the PodGroup, not for the pods; the kubelet must accept that reservation for
# each member, and both members must see the one device.
source "$(dirname "$0")/lib.sh"
if [[ ${DRACO_E2E_WORKLOAD_CLAIMS:-0} != 1 ]]; then
  echo "SKIP: needs the workload-claims profile with a real node (up.sh --workload-claims --real-nodes 1)" >&2
  exit 77
fi
source "$(dirname "$0")/draco_helpers.sh"
source "$(dirname "$0")/real_node_lib.sh"
NS=draco-real-podgroup
CLS=real-podgroup.draco.dev
on_fail() { real_node_on_fail $NS; k get podgroup -n $NS -o yaml; tail -n 20 "$DRACO_LOGS/draco-realpg.log"; }
trap 'stop_all_draco; k delete podgroup --all -n $NS --wait=false >/dev/null 2>&1 || true; cleanup_ns $NS; k delete deviceclass $CLS --ignore-not-found >/dev/null 2>&1 || true' EXIT
fresh_ns $NS
real_class $CLS
start_draco realpg --leader-elect=false --feature-gates=DRAWorkloadResourceClaims=true
eventually 30 "draco is ready" draco_ready realpg
{
  real_template $NS one $CLS
  cat <<YAML
---
apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {name: train, namespace: $NS}
spec:
  schedulingPolicy: {basic: {}}
  resourceClaims: [{name: gpu, resourceClaimTemplateName: one}]
YAML
  for p in member-0 member-1; do
    real_pod $NS $p
    echo "  schedulingGroup: {podGroupName: train}"
    echo "  resourceClaims: [{name: gpu, resourceClaimTemplateName: one}]"
    echo "  containers:"
    real_container main gpu
  done
} | k apply -f - >/dev/null
for p in member-0 member-1; do
  eventually 90 "$p runs on $REAL_NODE" running $NS $p
  eventually 30 "$p printed what it saw" printed $NS $p
done
claim=$(k get podgroup -n $NS train -o jsonpath='{.status.resourceClaimStatuses[?(@.name=="gpu")].resourceClaimName}')
[[ -n $claim ]] || fail "the PodGroup records no claim"
[[ $(k get resourceclaims -n $NS -o name | grep -c .) == 1 ]] || fail "want one claim: $(k get resourceclaims -n $NS -o name)"
reserved=$(k get resourceclaim -n $NS "$claim" -o jsonpath='{range .status.reservedFor[*]}{.resource}/{.name}{" "}{end}')
[[ $reserved == "podgroups/train " ]] || fail "$claim is reserved for '$reserved', want the PodGroup only"
pass "one claim ($claim), reserved for the PodGroup, and the kubelet ran both members with it"
for p in member-0 member-1; do
  [[ $(pod_claim $NS $p gpu) == "$claim" ]] || fail "$p records '$(pod_claim $NS $p gpu)'"
  sees_its_devices $NS $p gpu
done
[[ $(saw $NS member-0) == "$(saw $NS member-1)" ]] || fail "the members saw different devices"
pass "both members saw the group's device"
no_double_allocation
kubelet_accepted_all
