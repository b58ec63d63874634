# Helpers for e2e tests that run draco itself (sourced after lib.sh).
DRACO=${DRACO_BUILD_DIR:-$E2E_ROOT/../build}/controller/draco
[[ -x $DRACO ]] || { echo "SKIP: $DRACO not built" >&2; exit 77; }
DRACO_LOGS=${DRACO_E2E_DIR:-/tmp/draco-e2e}/logs
mkdir -p "$DRACO_LOGS"
declare -A DRACO_PIDS=()
declare -A DRACO_PORTS=()
# Below the ephemeral range (32768-60999 by default): an outgoing connection cannot hold the port
# (2026-12-06: "cannot listen on 127.0.0.1:36760" failed draco_safety_net_test once).
_draco_port=$((20000 + RANDOM % 10000))

# start_draco NAME [flags...]: starts `draco run` in the background (its own metrics/probe ports).
start_draco() {
  local name=$1; shift
  local port=$_draco_port; _draco_port=$((_draco_port + 2))
  "$DRACO" run --kubeconfig "$KUBECONFIG" --metrics-bind-address "127.0.0.1:$port" \
    --health-probe-bind-address "127.0.0.1:$((port + 1))" --kube-api-qps 500 --kube-api-burst 1000 \
    -v 4 "$@" >>"$DRACO_LOGS/draco-$name.log" 2>&1 &
  DRACO_PIDS[$name]=$!
  DRACO_PORTS[$name]=$port
}
# stop_draco NAME [SIGNAL]
stop_draco() {
  local pid=${DRACO_PIDS[$1]:-}
  [[ -n $pid ]] || return 0
  kill -"${2:-TERM}" "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  unset "DRACO_PIDS[$1]"
}
stop_all_draco() { local n; for n in "${!DRACO_PIDS[@]}"; do stop_draco "$n" KILL; done; }
draco_metric() { curl -s "127.0.0.1:${DRACO_PORTS[$1]}/metrics" | awk -v m="$2" '$1==m {print $2}'; }
draco_ready() { curl -sf "127.0.0.1:$((${DRACO_PORTS[$1]} + 1))/readyz" >/dev/null; }

# make_driver NS DRIVER DEVICES_PER_NODE NODE...: a DeviceClass "<driver>" and one node-local
# ResourceSlice per node, as a node driver would publish them.
make_driver() {
  local ns=$1 driver=$2 per=$3; shift 3
  {
    cat <<YAML
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: $driver}
spec:
  selectors:
  - cel: {expression: 'device.driver == "$driver"'}
YAML
    local n i
    for n in "$@"; do
      echo "---"
      cat <<YAML
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: $n-$driver}
spec:
  driver: $driver
  nodeName: $n
  pool: {name: $n, generation: 1, resourceSliceCount: 1}
  devices:
YAML
      for i in $(seq 0 $((per - 1))); do
        echo "  - {name: dev-$i, attributes: {index: {int: $i}}}"
      done
    done
  } | k apply -f - >/dev/null
}
# delete_driver DRIVER NODE...
delete_driver() {
  local driver=$1; shift
  k delete deviceclass "$driver" --wait=false >/dev/null 2>&1 || true
  local n; for n in "$@"; do k delete resourceslice "$n-$driver" --wait=false >/dev/null 2>&1 || true; done
}
# gated_pod NS NAME TEMPLATE_OR_EMPTY [CLAIM]: a pod with draco's scheduling gate.
gated_pod() {
  local ns=$1 name=$2 tmpl=$3 claim=${4:-}
  local src
  if [[ -n $tmpl ]]; then src="resourceClaimTemplateName: $tmpl"; else src="resourceClaimName: $claim"; fi
  cat <<YAML
---
apiVersion: v1
kind: Pod
metadata: {name: $name, namespace: $ns}
spec:
  schedulingGates: [{name: draco.dev/allocation}]
  resourceClaims: [{name: dev, $src}]
  containers:
  - {name: c, image: registry.invalid/ml:1, resources: {claims: [{name: dev}]}}
YAML
}
# template NS NAME CLASS
template() {
  cat <<YAML
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: $2, namespace: $1}
spec:
  metadata: {labels: {draco-e2e: "true"}}
  spec:
    devices:
      requests:
      - name: dev
        exactly: {deviceClassName: $3}
YAML
}
# no_double_allocation NS_REGEX: every (driver,pool,device) appears in at most one claim.
no_double_allocation() {
  local dups
  dups=$(k get resourceclaims -A -o jsonpath='{range .items[*]}{range .status.allocation.devices.results[*]}{.driver}/{.pool}/{.device}{"\n"}{end}{end}' \
    | sort | uniq -d)
  [[ -z $dups ]] || fail "devices allocated twice: $dups"
  pass "no device is allocated to two claims"
}
# pod_on_its_devices NS POD: the pod is bound to the node whose pool holds its devices.
pod_on_its_devices() {
  local node pools
  node=$(k get pod -n "$1" "$2" -o jsonpath='{.spec.nodeName}')
  [[ -n $node ]] || return 1
  for c in $(k get pod -n "$1" "$2" -o jsonpath='{range .status.resourceClaimStatuses[*]}{.resourceClaimName}{" "}{end}{range .spec.resourceClaims[*]}{.resourceClaimName}{" "}{end}'); do
    pools=$(k get resourceclaim -n "$1" "$c" -o jsonpath='{range .status.allocation.devices.results[*]}{.pool}{" "}{end}')
    [[ -n $pools ]] || return 1
    for p in $pools; do [[ $p == "$node" ]] || return 1; done
  done
}

# partitionable_pool DRV PREFIX: prints a DeviceClass DRV and one pool on node-0 in two slices
# (PREFIX-counters, PREFIX-devices): a GPU with 80Gi memory, offered whole or as two 40Gi
# partitions (part-0, part-1, whole; attribute whole true/false).
partitionable_pool() {
  cat <<YAML
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: $1}
spec:
  selectors:
  - cel: {expression: 'device.driver == "$1"'}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: $2-counters}
spec:
  driver: $1
  nodeName: node-0
  pool: {name: node-0, generation: 1, resourceSliceCount: 2}
  sharedCounters:
  - name: gpu-0
    counters: {memory: {value: 80Gi}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: $2-devices}
spec:
  driver: $1
  nodeName: node-0
  pool: {name: node-0, generation: 1, resourceSliceCount: 2}
  devices:
  - name: part-0
    attributes: {whole: {bool: false}}
    consumesCounters: [{counterSet: gpu-0, counters: {memory: {value: 40Gi}}}]
  - name: part-1
    attributes: {whole: {bool: false}}
    consumesCounters: [{counterSet: gpu-0, counters: {memory: {value: 40Gi}}}]
  - name: whole
    attributes: {whole: {bool: true}}
    consumesCounters: [{counterSet: gpu-0, counters: {memory: {value: 80Gi}}}]
YAML
}

# partition_workload NS DRV: on a partitionable_pool, gated pod "half" takes a partition (waits
# until draco released it), then gated pod "whole" wants the whole GPU, which the partition's
# memory blocks: it stays pending (devices_unavailable).
partition_workload() {
  {
    template "$1" part "$2"
    cat <<YAML
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: whole, namespace: $1}
spec:
  spec:
    devices:
      requests:
      - name: dev
        exactly:
          deviceClassName: $2
          selectors: [{cel: {expression: 'device.attributes["$2"].whole'}}]
YAML
    gated_pod "$1" half part
  } | k apply -f - >/dev/null
  eventually 30 "the pod taking a partition is released" \
    bash -c "[[ -z \$(kubectl get pod -n $1 half -o jsonpath='{.spec.schedulingGates}') ]]"
  gated_pod "$1" whole whole | k apply -f - >/dev/null
}

# cleanup_partitionable NS DRV PREFIX: deletes the test namespace, waits until draco has released
# its claims (it removes their finalizers), stops every draco, deletes the pool and the class.
cleanup_partitionable() {
  cleanup_ns "$1"
  local i
  for i in $(seq 40); do
    [[ -z $(k get resourceclaims -n "$1" -o name 2>/dev/null) ]] && break
    sleep 0.5
  done
  stop_all_draco
  k delete deviceclass "$2" --wait=false >/dev/null 2>&1 || true
  k delete resourceslice "$3-counters" "$3-devices" --wait=false >/dev/null 2>&1 || true
}
