#!/usr/bin/env bash
# draco's node choice is one kube-scheduler accepts (#13): for each scheduling constraint a gated
# pod with a device claim ends bound by kube-scheduler on the node that holds its devices, and
# never on the node the constraint rules out (the first node with devices, which draco's
# first-fit allocator would otherwise pick): required pod anti-affinity against a pod bound by
# nodeName (the issue's case), required pod affinity, topology spread across two zones, a host
# port taken, a device-plugin extended resource exhausted, a PVC bound to a PV with node affinity.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/draco_helpers.sh"
NS=draco-sched
DRV=sched.draco.dev
NODES=(fit-1 fit-2 fit-3 fit-4)
cleanup() {
  stop_all_draco
  cleanup_ns $NS
  delete_driver $DRV "${NODES[@]}"
  k delete pv sched-pv --wait=false >/dev/null 2>&1 || true
  k delete node "${NODES[@]}" --wait=false >/dev/null 2>&1 || true
}
trap cleanup EXIT
fresh_ns $NS
# Four fake Ready nodes in two zones, each with one device-plugin resource.
now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
for i in 1 2 3 4; do
  zone=zone-a; ((i > 2)) && zone=zone-b
  cat <<YAML
---
apiVersion: v1
kind: Node
metadata:
  name: fit-$i
  labels: {kubernetes.io/hostname: fit-$i, kubernetes.io/os: linux, topology.kubernetes.io/zone: $zone}
status:
  capacity: {cpu: "16", memory: 64Gi, pods: "110", example.com/nic: "1"}
  allocatable: {cpu: "16", memory: 64Gi, pods: "110", example.com/nic: "1"}
  conditions:
  - {type: Ready, status: "True", reason: KubeletReady, message: "fake node", lastHeartbeatTime: "$now", lastTransitionTime: "$now"}
YAML
done | k apply -f - >/dev/null
make_driver $NS $DRV 4 "${NODES[@]}"
start_draco sched --leader-elect=false
eventually 30 "draco is ready" draco_ready sched

# placed NAME NODE LABELS [EXTRA_CONTAINER_YAML]: a pod bound by nodeName (no claims).
placed() {
  cat <<YAML
---
apiVersion: v1
kind: Pod
metadata: {name: $1, namespace: $NS, labels: $3}
spec:
  nodeName: $2
  containers:
  - name: c
    image: registry.invalid/app:1
${4:-}
YAML
}
# gated NAME LABELS SPEC_YAML [CONTAINER_EXTRA_YAML]: a gated pod with one device from the template.
gated() {
  cat <<YAML
---
apiVersion: v1
kind: Pod
metadata: {name: $1, namespace: $NS, labels: $2}
spec:
  schedulingGates: [{name: draco.dev/allocation}]
  resourceClaims: [{name: dev, resourceClaimTemplateName: one-dev}]
$3
  containers:
  - name: c
    image: registry.invalid/ml:1
    resources:
      claims: [{name: dev}]
${4:-}
YAML
}
# bound_on_devices POD: bound by kube-scheduler on the node of its devices; prints the node.
check_case() {
  local pod=$1; shift
  eventually 60 "$pod is bound on the node that holds its devices" pod_on_its_devices $NS "$pod"
  local node
  node=$(k get pod -n $NS "$pod" -o jsonpath='{.spec.nodeName}')
  for bad in "$@"; do
    [[ $node != "$bad" ]] || fail "$pod was bound on $bad, which its constraint rules out"
  done
  pass "$pod avoided ${*} (bound on $node)"
}

{
  template $NS one-dev $DRV
  placed occupant fit-1 '{app: occupant}'
} | k apply -f - >/dev/null

# 1. The issue's case: required anti-affinity against a pod bound by nodeName on fit-1.
gated anti '{app: anti}' '  affinity:
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector: {matchLabels: {app: occupant}}
        topologyKey: kubernetes.io/hostname' | k apply -f - >/dev/null
check_case anti fit-1

# 2. Required affinity to a pod in zone-b.
placed buddy fit-4 '{app: buddy}' | k apply -f - >/dev/null
gated friend '{app: friend}' '  affinity:
    podAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector: {matchLabels: {app: buddy}}
        topologyKey: topology.kubernetes.io/zone' | k apply -f - >/dev/null
check_case friend fit-1 fit-2

# 3. Topology spread across two zones: one replica already in zone-a.
placed replica-0 fit-2 '{app: inference}' | k apply -f - >/dev/null
gated replica-1 '{app: inference}' '  topologySpreadConstraints:
  - maxSkew: 1
    topologyKey: topology.kubernetes.io/zone
    whenUnsatisfiable: DoNotSchedule
    labelSelector: {matchLabels: {app: inference}}' | k apply -f - >/dev/null
check_case replica-1 fit-1 fit-2

# 4. A host port taken on the first node.
placed web fit-1 '{app: web}' '    ports: [{containerPort: 80, hostPort: 8080}]' | k apply -f - >/dev/null
gated port '{app: port}' '' '    ports: [{containerPort: 80, hostPort: 8080}]' | k apply -f - >/dev/null
check_case port fit-1

# 5. A device-plugin extended resource exhausted on the first node.
placed nic-user fit-1 '{app: nic}' '    resources: {requests: {example.com/nic: "1"}, limits: {example.com/nic: "1"}}' |
  k apply -f - >/dev/null
gated nic '{app: nic2}' '' '      requests: {example.com/nic: "1"}
      limits: {example.com/nic: "1"}' | k apply -f - >/dev/null
check_case nic fit-1

# 6. A PVC bound to a PV whose node affinity allows only fit-3.
cat <<YAML | k apply -f - >/dev/null
apiVersion: v1
kind: PersistentVolume
metadata: {name: sched-pv}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: ""
  claimRef: {namespace: $NS, name: data}
  hostPath: {path: /tmp/sched-pv}
  nodeAffinity:
    required:
      nodeSelectorTerms:
      - matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [fit-3]}]
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: $NS}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: ""
  volumeName: sched-pv
  resources: {requests: {storage: 1Gi}}
YAML
eventually 60 "PVC data is bound to its PV" \
  bash -c "[[ \$(kubectl get pvc -n $NS data -o jsonpath='{.status.phase}') == Bound ]]"
gated storage '{app: storage}' '  volumes: [{name: data, persistentVolumeClaim: {claimName: data}}]' |
  k apply -f - >/dev/null
check_case storage fit-1 fit-2 fit-4

no_double_allocation
