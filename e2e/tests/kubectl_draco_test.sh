#!/usr/bin/env bash
# kubectl draco (#17): the draco binary installed as the kubectl plugin, driven as a user would on
# the real control plane while draco allocates. Two fake nodes with two 40Gi devices each; a pod
# bound by nodeName on kd-1 ("occupant"), a gated pod with anti-affinity against it ("train-0",
# draco puts it on kd-2) and a gated pod asking for three devices on one node ("big", fits
# nowhere). Checked against kubectl (never draco's own client):
#   explain pod/train-0   names the node and device the claim holds (as kubectl reads them), exit 0
#   explain pod/big       the funnel with numbers and "fits on no node now", exit 1
#   pools                 devices/allocated/free per node equal kubectl's count of allocated claims
#   simulate --from-cluster -f EXTRA   where extra pods would go, what stays pending
#   -o json|yaml          parse; a ServiceAccount without "list resourceslices" gets exit 2 and
#                         the verb/resource/group; the pending pod has one aggregated Event.
# With DRACO_TRANSCRIPT_DIR set, the commands and their output are saved there (the platform
# guide's transcripts come from these runs).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/draco_helpers.sh"
NS=kd-e2e
DRV=kd.draco.dev
NODES=(kd-1 kd-2)
WORK=$(mktemp -d)
cleanup() {
  stop_all_draco
  cleanup_ns $NS
  k delete deviceclass $DRV --wait=false >/dev/null 2>&1 || true
  k delete resourceslice kd-1-$DRV kd-2-$DRV --wait=false >/dev/null 2>&1 || true
  k delete node "${NODES[@]}" --wait=false >/dev/null 2>&1 || true
  k delete clusterrole kd-viewer --wait=false >/dev/null 2>&1 || true
  k delete clusterrolebinding kd-viewer --wait=false >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT
on_fail() {
  k get pods,resourceclaims -n $NS -o wide 2>&1 | sed 's/^/  /'
  tail -n 20 "$DRACO_LOGS/draco-kd.log" 2>/dev/null | sed 's/^/  draco: /'
}
fresh_ns $NS
# The plugin: the same binary under the name kubectl looks for.
mkdir -p "$WORK/bin"
ln -s "$DRACO" "$WORK/bin/kubectl-draco"
export PATH="$WORK/bin:$PATH"
k plugin list 2>/dev/null | grep -q kubectl-draco || fail "kubectl does not list the plugin"
pass "kubectl plugin list shows kubectl-draco"

now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
{
  for n in "${NODES[@]}"; do
    cat <<YAML
---
apiVersion: v1
kind: Node
metadata: {name: $n, labels: {kubernetes.io/hostname: $n, kubernetes.io/os: linux}}
status:
  allocatable: {cpu: "16", memory: 64Gi, pods: "110"}
  capacity: {cpu: "16", memory: 64Gi, pods: "110"}
  conditions:
  - {type: Ready, status: "True", reason: KubeletReady, message: "fake node", lastHeartbeatTime: "$now", lastTransitionTime: "$now"}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: $n-$DRV}
spec:
  driver: $DRV
  nodeName: $n
  pool: {name: $n, generation: 1, resourceSliceCount: 1}
  devices:
  - {name: gpu-0, capacity: {memory: {value: 40Gi}}}
  - {name: gpu-1, capacity: {memory: {value: 40Gi}}}
YAML
  done
  cat <<YAML
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: $DRV}
spec:
  selectors: [{cel: {expression: 'device.driver == "$DRV"'}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: three, namespace: $NS}
spec:
  spec:
    devices:
      requests: [{name: gpus, exactly: {deviceClassName: $DRV, count: 3}}]
---
apiVersion: v1
kind: Pod
metadata: {name: occupant, namespace: $NS, labels: {app: occupant}}
spec:
  nodeName: kd-1
  containers: [{name: c, image: registry.invalid/app:1}]
YAML
  template $NS one $DRV
  gated_pod $NS big three
} | k apply -f - >/dev/null
k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: train-0, namespace: $NS}
spec:
  schedulingGates: [{name: draco.dev/allocation}]
  resourceClaims: [{name: dev, resourceClaimTemplateName: one}]
  affinity:
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector: {matchLabels: {app: occupant}}
        topologyKey: kubernetes.io/hostname
  containers:
  - {name: c, image: registry.invalid/ml:1, resources: {claims: [{name: dev}]}}
YAML
start_draco kd --leader-elect=false
eventually 30 "draco is ready" draco_ready kd
bound() { [[ -n $(k get pod -n $NS train-0 -o jsonpath='{.spec.nodeName}') ]]; }
eventually 60 "train-0 is bound" bound

# run NAME CMD...: runs a kubectl draco command, keeps its output in $WORK/NAME and its exit code
# in $rc, and appends both to the transcript.
run() {
  local name=$1; shift
  set +e
  "$@" >"$WORK/$name" 2>&1
  rc=$?
  set -e
  if [[ -n ${DRACO_TRANSCRIPT_DIR:-} ]]; then
    mkdir -p "$DRACO_TRANSCRIPT_DIR"
    { echo "\$ ${*}"; cat "$WORK/$name"; echo "# exit $rc"; echo; } >>"$DRACO_TRANSCRIPT_DIR/kubectl-draco.txt"
  fi
}
has() { grep -qF -- "$2" "$WORK/$1" || { sed 's/^/  | /' "$WORK/$1"; fail "$1: no \"$2\""; }; }

# explain an allocated pod: what kubectl says the claim holds.
claim=$(k get pod -n $NS train-0 -o jsonpath='{.status.resourceClaimStatuses[0].resourceClaimName}')
node=$(k get pod -n $NS train-0 -o jsonpath='{.spec.nodeName}')
dev=$(k get resourceclaim -n $NS "$claim" -o jsonpath='{.status.allocation.devices.results[0].device}')
run explain-train kubectl draco explain pod/train-0 -n $NS
((rc == 0)) || fail "explain pod/train-0 exit $rc"
has explain-train "claim $NS/$claim (pod claim dev): allocated on node $node"
has explain-train "dev -> $DRV/$node/$dev"
[[ $node == kd-2 ]] || fail "train-0 on $node, anti-affinity rules out kd-1"
pass "explain pod/train-0: $claim on $node, device $dev, as kubectl reads it"

# explain a pending pod: the funnel with numbers, exit 1.
eventually 30 "big's claim exists" bash -c "[[ -n \$(kubectl get pod -n $NS big -o jsonpath='{.status.resourceClaimStatuses[0].resourceClaimName}') ]]"
run explain-big kubectl draco explain pod/big -n $NS
((rc == 1)) || fail "explain pod/big exit $rc, want 1"
has explain-big "PENDING"
has explain-big "needs 3"
has explain-big "fits on no node now"
pass "explain pod/big: pending, funnel needs 3, exit 1"

# pools: per node, allocated = kubectl's count of allocated devices on that pool.
run pools kubectl draco pools --driver $DRV -o wide
((rc == 0)) || fail "pools exit $rc"
for n in "${NODES[@]}"; do
  want=$(k get resourceclaims -A -o jsonpath='{range .items[*]}{range .status.allocation.devices.results[*]}{.driver}/{.pool}{"\n"}{end}{end}' | grep -c "^$DRV/$n\$" || true)
  row=$(awk -v n=$n '$2 == n && $3 == n' "$WORK/pools")
  [[ -n $row ]] || fail "pools: no row for $n"
  read -r _ _ _ total alloc free tainted _ <<<"$row"
  ((total == 2 && alloc == want && free == 2 - want && tainted == 0)) ||
    fail "pools $n: $row (kubectl: $want allocated)"
done
has pools "memory 40Gi/80Gi"
run pools-json kubectl draco pools --driver $DRV -o json
python3 - "$WORK/pools-json" "$DRV" <<'PY' || fail "pools -o json"
import json, sys
r = json.load(open(sys.argv[1]))
assert sum(p["devices"] for p in r["pools"]) == 4, r
# Other tests' DeviceClasses may be left in the cluster: only this test's class counts.
fits = {f["node"]: f["largestRequest"] for f in r["fragmentation"] if f["deviceClass"] == sys.argv[2]}
assert fits == {"kd-1": 2, "kd-2": 1}, fits
PY
pass "pools: devices, allocated and free per node match kubectl; largest fit kd-1 2, kd-2 1"

# simulate --from-cluster: the live pending pod plus extra manifests.
mkdir -p "$WORK/extra"
{ gated_pod $NS extra-a one; gated_pod $NS extra-b one; } >"$WORK/extra/pods.yaml"
run simulate kubectl draco simulate --from-cluster -f "$WORK/extra"
((rc == 1)) || fail "simulate exit $rc, want 1 (big stays pending)"
has simulate "pod $NS/extra-a: allocated on kd-1"
has simulate "pod $NS/extra-b: allocated on kd-1"
has simulate "pod $NS/big: NOT ALLOCATED"
has simulate "2 allocated, 1 not allocated"  # the settled live pods are not counted
[[ -z $(k get pod -n $NS extra-a --ignore-not-found -o name) ]] || fail "simulate created a pod"
pass "simulate --from-cluster: extra pods on kd-1, big stays pending, nothing created"

run explain-yaml kubectl draco explain pod/train-0 -n $NS -o yaml
python3 -c 'import sys, yaml; d = yaml.safe_load(open(sys.argv[1])); assert d["claims"][0]["allocated"], d' \
  "$WORK/explain-yaml" || fail "explain -o yaml does not parse"
pass "explain -o yaml parses"

# RBAC: everything but resourceslices.
k create serviceaccount -n $NS viewer >/dev/null
k apply -f - >/dev/null <<YAML
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: kd-viewer}
rules:
- apiGroups: [""]
  resources: [pods, nodes, namespaces, persistentvolumes, persistentvolumeclaims]
  verbs: [list]
- apiGroups: [resource.k8s.io]
  resources: [deviceclasses, resourceclaims, resourceclaimtemplates]
  verbs: [list]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: kd-viewer}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: kd-viewer}
subjects: [{kind: ServiceAccount, name: viewer, namespace: $NS}]
YAML
cp "$KUBECONFIG" "$WORK/viewer.kubeconfig"
KUBECONFIG="$WORK/viewer.kubeconfig" kubectl config set-credentials kd-viewer \
  --token="$(k create token -n $NS viewer)" >/dev/null
KUBECONFIG="$WORK/viewer.kubeconfig" kubectl config set-context --current --user=kd-viewer >/dev/null
run rbac kubectl draco pools --kubeconfig "$WORK/viewer.kubeconfig"
((rc == 2)) || fail "pools without list on resourceslices: exit $rc, want 2"
has rbac 'needs RBAC verb "list" on resource "resourceslices" in API group "resource.k8s.io"'
pass "a user without list on resourceslices gets exit 2 naming verb, resource and group"

# Events: big's pending reason is on the pod, one aggregated Event.
events() { k get events -n $NS --field-selector involvedObject.name=big,reason=FailedAllocation -o jsonpath='{range .items[*]}{.count}{"\n"}{end}'; }
eventually 30 "big has a FailedAllocation Event" bash -c "[[ -n \$(kubectl get events -n $NS --field-selector involvedObject.name=big,reason=FailedAllocation -o name) ]]"
[[ $(events | wc -l) -eq 1 ]] || fail "big has $(events | wc -l) FailedAllocation Events, want 1 aggregated"
k describe pod -n $NS big | grep -q "FailedAllocation" || fail "kubectl describe pod big shows no FailedAllocation"
pass "big's FailedAllocation is one Event (count $(events)), shown by kubectl describe"
