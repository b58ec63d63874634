#!/usr/bin/env bash
# A real node's kubelet and DRA driver restart under pods whose claims draco allocated, and a
# NoExecute device taint hits one of them (e2e/cluster/up.sh --real-nodes 1):
#  1. kubelet restart: the running pod keeps its container (same ID, no restart) and its claim;
#     a pod created after the restart runs;
#  2. driver restart (killed, started again): the running pod is untouched; a new pod is prepared
#     by the restarted driver and runs; deleting the old pod makes the kubelet unprepare its claim
#     through the restarted driver (a successful NodeUnprepareResources; upstream's test driver
#     keeps what it prepared in memory only, so it cannot remove the old CDI spec after a restart)
#     and draco deletes the claim;
#  3. (1.37: DeviceTaintRule in resource.k8s.io/v1) a NoExecute taint on the device of a running
#     pod: kube-controller-manager's device-taint eviction deletes the pod, and draco never hands
#     the tainted device out again while the taint stands: the node's other devices fill up and
#     the next pod waits with draco's explanation; when the rule goes, that pod gets the device.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/draco_helpers.sh"
source "$(dirname "$0")/real_node_lib.sh"
NS=draco-real-disruption
CLS=real-disruption.draco.dev
RULE=draco-e2e-real-taint
on_fail() { real_node_on_fail $NS; tail -n 20 "$DRACO_LOGS/draco-realdis.log"; }
cleanup() {
  stop_all_draco
  cleanup_ns $NS
  k delete devicetaintrule $RULE --ignore-not-found >/dev/null 2>&1 || true
  k delete deviceclass $CLS --ignore-not-found >/dev/null 2>&1 || true
}
trap cleanup EXIT
fresh_ns $NS
real_class $CLS
start_draco realdis --leader-elect=false
eventually 30 "draco is ready" draco_ready realdis
one_pod() {  # one_pod NAME: a pod with its own one-device claim
  {
    real_pod $NS "$1"
    echo "  resourceClaims: [{name: gpu, resourceClaimTemplateName: one}]"
    echo "  containers:"
    real_container main gpu
  } | k apply -f - >/dev/null
}
real_template $NS one $CLS | k apply -f - >/dev/null
container_id() { kubectl get pod -n $NS "$1" -o jsonpath='{.status.containerStatuses[0].containerID}'; }
restarts() { kubectl get pod -n $NS "$1" -o jsonpath='{.status.containerStatuses[0].restartCount}'; }

# --- 1. kubelet restart ------------------------------------------------------------------------
one_pod steady
eventually 90 "steady runs" running $NS steady
eventually 30 "steady printed what it saw" printed $NS steady
sees_its_devices $NS steady gpu
cid=$(container_id steady)
claim=$(pod_claim $NS steady gpu)
before=$(allocated $NS "$claim")
"$CLUSTER/restart-node.sh" "$REAL_NODE" kubelet >/dev/null 2>&1 || fail "kubelet did not come back"
pass "restarted $REAL_NODE's kubelet"
one_pod after-kubelet
eventually 90 "a pod created after the kubelet restart runs" running $NS after-kubelet
eventually 30 "after-kubelet printed what it saw" printed $NS after-kubelet
sees_its_devices $NS after-kubelet gpu
[[ $(container_id steady) == "$cid" && $(restarts steady) == 0 ]] || fail "steady's container changed"
running $NS steady || fail "steady is $(phase $NS steady) after the kubelet restart"
[[ $(allocated $NS "$claim") == "$before" ]] || fail "steady's claim changed"
pass "steady kept its container and its claim ($before) across the kubelet restart"

# --- 2. driver restart -------------------------------------------------------------------------
cdi_dir=$DRACO_E2E_DIR/nodes/$REAL_NODE/cdi
uid=$(k get resourceclaim -n $NS "$claim" -o jsonpath='{.metadata.uid}')
[[ $(ls "$cdi_dir") == *"$uid"* ]] || fail "no CDI spec of steady's claim in $cdi_dir"
pass "the driver prepared steady's claim with a CDI spec in $cdi_dir"
"$CLUSTER/restart-node.sh" "$REAL_NODE" driver --kill >/dev/null 2>&1 || fail "the driver did not come back"
pass "killed and restarted $REAL_NODE's DRA driver"
one_pod after-driver
eventually 90 "a pod created after the driver restart runs" running $NS after-driver
eventually 30 "after-driver printed what it saw" printed $NS after-driver
sees_its_devices $NS after-driver gpu
[[ $(container_id steady) == "$cid" ]] && running $NS steady || fail "steady was disturbed by the driver restart"
pass "steady kept running across the driver restart"
unprepared=$(kubelet_dra_calls NodeUnprepareResources)
k delete pod -n $NS steady --wait=true --timeout=60s >/dev/null
unprepared_now() { (($(kubelet_dra_calls NodeUnprepareResources) > unprepared)); }
eventually 60 "the kubelet unprepared steady's claim through the restarted driver" unprepared_now
eventually 60 "draco deleted steady's claim" bash -c "! kubectl get resourceclaim -n $NS $claim"
kubelet_accepted_all
no_double_allocation
k delete pod -n $NS --all --wait=true --timeout=60s >/dev/null

# --- 3. a NoExecute device taint ---------------------------------------------------------------
if ((MINOR < 37)); then
  pass "device taint part skipped: draco reads DeviceTaintRules from resource.k8s.io/v1 (1.37+)"
  exit 0
fi
one_pod victim
eventually 90 "victim runs" running $NS victim
dev=$(allocated $NS "$(pod_claim $NS victim gpu)" | head -n1)
k apply -f - >/dev/null <<YAML
apiVersion: resource.k8s.io/v1
kind: DeviceTaintRule
metadata: {name: $RULE}
spec:
  deviceSelector: {driver: $REAL_DRIVER, pool: ${dev%%/*}, device: ${dev#*/}}
  taint: {key: draco-e2e/broken, value: "true", effect: NoExecute}
YAML
pass "tainted $dev NoExecute"
eventually 90 "kube-controller-manager evicts victim from the tainted device" gone_pod $NS victim
# Every other device of the node, and one more pod: it must not get the tainted device.
for i in $(seq 1 "$REAL_DEVICES"); do one_pod "fill-$i"; done
for i in $(seq 1 $((REAL_DEVICES - 1))); do eventually 90 "fill-$i runs" running $NS "fill-$i"; done
sleep 5
for i in $(seq 1 "$REAL_DEVICES"); do
  c=$(pod_claim $NS "fill-$i" gpu)
  [[ -z $c ]] || [[ $(allocated $NS "$c") != "$dev" ]] || fail "fill-$i got the tainted device $dev"
done
waiting=$(for i in $(seq 1 "$REAL_DEVICES"); do running $NS "fill-$i" || echo "fill-$i"; done)
[[ $(echo "$waiting" | grep -c .) == 1 ]] || fail "pods not running: '$waiting', want exactly one"
pass "$((REAL_DEVICES - 1)) pods run on the untainted devices; $waiting waits"
reason=$(k get events -n $NS --field-selector "involvedObject.name=$waiting" -o jsonpath='{.items[*].message}')
[[ $reason == *aint* ]] || fail "$waiting: no explanation naming the taint: $reason"
pass "draco explains why $waiting waits: the taint"
k delete devicetaintrule $RULE >/dev/null
eventually 90 "with the rule gone, $waiting gets the device and runs" running $NS "$waiting"
sees_its_devices $NS "$waiting" gpu
no_double_allocation
kubelet_accepted_all
