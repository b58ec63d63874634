#!/usr/bin/env bash
# draco's allocations, run by a real kubelet, containerd and upstream's DRA test driver
# (e2e/cluster/up.sh --real-nodes 1): every container must see exactly the devices draco wrote
# into its claim, and every write of draco's that only a kubelet or driver reads (reservedFor,
# the allocation's results and node selector, the extended-resource claim status) must be
# accepted by them.
#  1. a device freed by a completed pod runs the next pod (all of the node's devices, twice);
#  2. a pod with a template claim runs and sees its device;
#  3. two containers of one pod share one claim: both see the same device;
#  4. one claim shared by two pods: allocated once, reserved for both, both run;
#  5. a KEP-5004 extended-resource pod (1.36+: DRAExtendedResource on by default) runs with its
#     device.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/draco_helpers.sh"
source "$(dirname "$0")/real_node_lib.sh"
NS=draco-real-workloads
CLS=real-workloads.draco.dev
ERN=draco.dev/real-gpu
on_fail() { real_node_on_fail $NS; tail -n 20 "$DRACO_LOGS/draco-realwl.log"; }
trap 'stop_all_draco; cleanup_ns $NS; k delete deviceclass $CLS --ignore-not-found >/dev/null 2>&1 || true' EXIT
fresh_ns $NS
if ((MINOR >= 36)); then real_class $CLS $ERN; else real_class $CLS; fi
start_draco realwl --leader-elect=false
eventually 30 "draco is ready" draco_ready realwl
((REAL_DEVICES >= 2)) || fail "$REAL_NODE publishes $REAL_DEVICES devices, need 2"
pass "$REAL_NODE publishes $REAL_DEVICES devices of $REAL_DRIVER"

# --- 1. completion frees the devices for the next pod ------------------------------------------
{
  real_template $NS all-devices $CLS gpus All
  real_pod $NS first Never
  echo "  resourceClaims: [{name: gpus, resourceClaimTemplateName: all-devices}]"
  echo "  containers:"
  real_container main gpus -- '["2"]'
} | k apply -f - >/dev/null
eventually 90 "first (all $REAL_DEVICES devices, exits after 2 s) completes" succeeded $NS first
c=$(pod_claim $NS first gpus)
n=$(kubectl logs -n $NS first | grep -c '^dra-env: claim_' || true)
((n == 1)) || fail "first: $n claim variables"
all=$(kubectl get resourceslices --field-selector "spec.nodeName=$REAL_NODE,spec.driver=$REAL_DRIVER" \
  -o jsonpath='{range .items[*]}{range .spec.devices[*]}{.name}{"\n"}{end}{end}' | sed "s|^|$REAL_NODE/|" | sort)
((MINOR < 37)) || [[ $(saw $NS first) == "$all" ]] ||
  fail "first saw '$(saw $NS first | tr '\n' ' ')', want all of $REAL_NODE: $(echo $all)"
pass "first saw its claim ($c) with all $REAL_DEVICES devices"
eventually 60 "the completed pod's claim is released and deleted" \
  bash -c "! kubectl get resourceclaim -n $NS $c"
{
  real_pod $NS next Never
  echo "  resourceClaims: [{name: gpus, resourceClaimTemplateName: all-devices}]"
  echo "  containers:"
  real_container main gpus -- '["1"]'
} | k apply -f - >/dev/null
eventually 90 "next completes" succeeded $NS next
((MINOR < 37)) || [[ $(saw $NS next) == "$all" ]] || fail "next saw '$(saw $NS next | tr '\n' ' ')'"
pass "next ran on the same $REAL_DEVICES devices after first completed"
k delete pod -n $NS first next --wait=false >/dev/null

# --- 2.-4. a template claim, a claim shared by two containers, a claim shared by two pods -------
{
  real_template $NS one $CLS
  cat <<YAML
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: shared, namespace: $NS}
spec:
  devices:
    requests: [{name: gpu, exactly: {deviceClassName: $CLS}}]
YAML
  real_pod $NS solo
  echo "  resourceClaims: [{name: gpu, resourceClaimTemplateName: one}]"
  echo "  containers:"
  real_container main gpu
  real_pod $NS duo
  echo "  resourceClaims: [{name: gpu, resourceClaimTemplateName: one}]"
  echo "  containers:"
  real_container left gpu
  real_container right gpu
  for p in share-a share-b; do
    real_pod $NS $p
    echo "  resourceClaims: [{name: gpu, resourceClaimName: shared}]"
    echo "  containers:"
    real_container main gpu
  done
} | k apply -f - >/dev/null
for p in solo duo share-a share-b; do eventually 90 "$p runs on $REAL_NODE" running $NS $p; done
for p in solo share-a share-b; do eventually 30 "$p printed what it saw" printed $NS $p; done
for ctr in left right; do eventually 30 "duo/$ctr printed what it saw" printed $NS duo $ctr; done
sees_its_devices $NS solo gpu
saw_claim_env $NS solo "$(pod_claim $NS solo gpu)" gpu || fail "solo: no claim variable for its claim"
sees_its_devices $NS duo gpu left
sees_its_devices $NS duo gpu right
[[ $(saw $NS duo left) == "$(saw $NS duo right)" ]] || fail "duo's containers saw different devices"
pass "both containers of duo saw the one device of their shared claim"
sees_its_devices $NS share-a gpu
sees_its_devices $NS share-b gpu
[[ $(allocated $NS shared | grep -c .) == 1 ]] || fail "shared: $(allocated $NS shared | grep -c .) devices"
reserved=$(k get resourceclaim -n $NS shared -o jsonpath='{range .status.reservedFor[*]}{.name}{" "}{end}')
[[ $reserved == *share-a* && $reserved == *share-b* ]] || fail "shared is reserved for '$reserved'"
pass "the shared claim is allocated once and reserved for both pods, which both run"
no_double_allocation

# --- 5. an extended-resource pod ---------------------------------------------------------------
if ((MINOR >= 36)); then
  {
    real_pod $NS ext
    echo "  containers:"
    echo "  - {name: main, image: draco.local/workload:1, resources: {limits: {$ERN: 1}}}"
  } | k apply -f - >/dev/null
  eventually 90 "the extended-resource pod runs on $REAL_NODE" running $NS ext
  eventually 30 "ext printed what it saw" printed $NS ext
  c=$(k get pod -n $NS ext -o jsonpath='{.status.extendedResourceClaimStatus.resourceClaimName}')
  req=$(k get pod -n $NS ext -o jsonpath='{.status.extendedResourceClaimStatus.requestMappings[0].requestName}')
  [[ -n $c && -n $req ]] || fail "ext: no extendedResourceClaimStatus"
  saw_claim_env $NS ext "$c" "$req" || fail "ext: the driver's variable for $c/$req is missing"
  want=$(allocated $NS "$c")
  ((MINOR < 37)) || [[ $(saw $NS ext) == "$want" ]] || fail "ext saw '$(saw $NS ext)', claim $c has '$want'"
  pass "ext saw $(echo $want) of its extended-resource claim $c"
  no_double_allocation
else
  pass "extended-resource pod skipped: DRAExtendedResource is alpha (off) on 1.$MINOR"
fi

# Every pod's device went away when it ended: deleting them frees the node.
k delete pod -n $NS --all --wait=true --timeout=60s >/dev/null
eventually 60 "no claim of the test keeps a device after its pods are gone" \
  bash -c "[[ -z \$(kubectl get resourceclaims -n $NS -o jsonpath='{.items[*].status.allocation.devices.results[*].device}') ]]"
kubelet_accepted_all
