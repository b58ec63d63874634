# Helpers for e2e tests on the local real nodes (e2e/cluster/up.sh --real-nodes N), sourced after
# lib.sh and draco_helpers.sh. The tests skip (77) on a control plane without a real node. All
# assertions read the cluster through kubectl: pod phases and container logs (what the container
# saw, printed by the workload image's show-devices), claims, Events.
REAL_NODE=$(kubectl get nodes -l draco-e2e/real-node=true -o jsonpath='{.items[0].metadata.name}' 2>/dev/null || true)
if [[ -z $REAL_NODE ]]; then
  echo "SKIP: no real node in this cluster (e2e/cluster/up.sh --real-nodes 1)" >&2
  exit 77
fi
REAL_DRIVER=test-driver.cdi.k8s.io
REAL_DEVICES=$(kubectl get resourceslices --field-selector "spec.nodeName=$REAL_NODE,spec.driver=$REAL_DRIVER" \
  -o jsonpath='{range .items[*]}{range .spec.devices[*]}{.name}{"\n"}{end}{end}' | grep -c . || true)
MINOR=$(kubectl version -o json | sed -n 's/.*"gitVersion": "v1\.\([0-9]*\)\..*/\1/p' | tail -n1)
CLUSTER=$E2E_ROOT/cluster

# real_class NAME [EXTENDED_RESOURCE]: a DeviceClass of the real node's driver.
real_class() {
  local ern=""
  [[ -z ${2:-} ]] || ern="extendedResourceName: $2"
  k apply -f - >/dev/null <<YAML
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: $1}
spec:
  selectors: [{cel: {expression: 'device.driver == "$REAL_DRIVER"'}}]
  $ern
YAML
}

# real_template NS NAME CLASS [REQUEST [MODE]]: prints a claim template with one request (default
# "gpu", one device; MODE All takes every matching device of a node).
real_template() {
  local mode=""
  [[ -z ${5:-} ]] || mode=", allocationMode: $5"
  cat <<YAML
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: $2, namespace: $1}
spec:
  spec:
    devices:
      requests: [{name: ${4:-gpu}, exactly: {deviceClassName: $3$mode}}]
YAML
}

# real_pod NS NAME [ARGS_JSON]: the head of a pod for the real node (its taint tolerated, its
# label selected, draco's scheduling gate, a short grace period). The caller appends
# resourceClaims (at spec level, 2 spaces) and then calls real_container for each container.
real_pod() {
  cat <<YAML
---
apiVersion: v1
kind: Pod
metadata: {name: $2, namespace: $1}
spec:
  schedulingGates: [{name: draco.dev/allocation}]
  nodeSelector: {draco-e2e/real-node: "true"}
  tolerations: [{key: draco-e2e/real-node, operator: Exists, effect: NoSchedule}]
  terminationGracePeriodSeconds: 2
  restartPolicy: ${3:-Always}
YAML
}
# real_container NAME CLAIM... [-- ARGS_JSON]: a container of the workload image using CLAIMs.
real_container() {
  local name=$1 claims="" args='[]'; shift
  while (($#)); do
    if [[ $1 == -- ]]; then args=$2; break; fi
    claims+="{name: $1}, "
    shift
  done
  echo "  - {name: $name, image: draco.local/workload:1, args: $args, resources: {claims: [${claims%, }]}}"
}

phase() { kubectl get pod -n "$1" "$2" -o jsonpath='{.status.phase}' 2>/dev/null; }
running() { [[ $(phase "$1" "$2") == Running ]]; }
succeeded() { [[ $(phase "$1" "$2") == Succeeded ]]; }
gone_pod() { ! kubectl get pod -n "$1" "$2" >/dev/null 2>&1; }
# printed NS POD [CONTAINER]: the container has printed what it saw (its log ends the listing).
# (The log is read whole before grep: with pipefail, grep -q stopping early fails the pipe.)
printed() {
  local log
  log=$(kubectl logs -n "$1" "$2" ${3:+-c "$3"} 2>/dev/null) || return 1
  grep -q '^show-devices: done' <<<"$log"
}
# saw NS POD [CONTAINER]: the devices the container saw, "pool/device" sorted, from the device
# metadata file the driver mounted (1.37), else "-" per injected claim variable (older drivers
# publish no metadata; the variable still proves the claim's CDI spec reached the container).
saw() {
  local log
  log=$(kubectl logs -n "$1" "$2" ${3:+-c "$3"} 2>/dev/null)
  if grep -q '^dra-device: ' <<<"$log"; then
    sed -n 's/^dra-device: \([^ ]*\) .*/\1/p' <<<"$log" | sort
  else
    grep '^dra-env: claim_' <<<"$log" | sed 's/.*/-/'
  fi
}
# saw_claim_env NS POD CLAIM REQUEST [CONTAINER]: the driver's CDI spec for CLAIM/REQUEST set
# claim_<claim>_<request>=true in the container (non-alphanumerics as _).
saw_claim_env() {
  local var
  local log
  var=$(echo "claim_$3_$4" | sed 's/[^a-zA-Z0-9]/_/g')
  log=$(kubectl logs -n "$1" "$2" ${5:+-c "$5"} 2>/dev/null) || return 1
  grep -qx "dra-env: $var=true" <<<"$log"
}
# allocated NS CLAIM: "pool/device" of the claim's results, sorted.
allocated() {
  kubectl get resourceclaim -n "$1" "$2" \
    -o jsonpath='{range .status.allocation.devices.results[*]}{.pool}/{.device}{"\n"}{end}' | sort
}
# pod_claim NS POD NAME: the claim behind the pod's claim entry NAME (template or standalone).
pod_claim() {
  local c
  c=$(kubectl get pod -n "$1" "$2" -o jsonpath="{.status.resourceClaimStatuses[?(@.name==\"$3\")].resourceClaimName}")
  [[ -n $c ]] || c=$(kubectl get pod -n "$1" "$2" -o jsonpath="{.spec.resourceClaims[?(@.name==\"$3\")].resourceClaimName}")
  echo "$c"
}
# sees_its_devices NS POD CLAIM_ENTRY [CONTAINER]: what the container saw is what draco allocated.
sees_its_devices() {
  local c want got
  c=$(pod_claim "$1" "$2" "$3")
  [[ -n $c ]] || fail "$2: no claim for entry $3"
  want=$(allocated "$1" "$c")
  got=$(saw "$1" "$2" "${4:-}")
  if ((MINOR >= 37)); then
    [[ -n $want && $got == "$want" ]] || fail "$2${4:+/$4}: saw '$got', draco allocated '$want' ($c)"
  else
    [[ -n $got ]] || fail "$2${4:+/$4}: no claim variable injected for $c"
  fi
  pass "$2${4:+/$4} saw $(echo $want) of $c"
}
# real_node_on_fail NS: what explains a failure on a real node.
real_node_on_fail() {
  kubectl get pods -n "$1" -o wide
  kubectl get resourceclaims -n "$1" -o wide
  kubectl get events -n "$1" --sort-by=.lastTimestamp | tail -n 25
  tail -n 20 "$DRACO_E2E_DIR/logs/$REAL_NODE-kubelet.log" "$DRACO_E2E_DIR/logs/$REAL_NODE-driver.log"
}
# kubelet_dra_calls METHOD [CODE]: how many DRA gRPC calls METHOD (NodePrepareResources,
# NodeUnprepareResources) the real node's kubelet made since it started that ended with CODE
# (default OK); "!OK" counts every other code. Read from the kubelet's own metrics through the API
# server's node proxy.
kubelet_dra_calls() {
  local code=${2:-OK}
  kubectl get --raw "/api/v1/nodes/$REAL_NODE/proxy/metrics" 2>/dev/null |
    awk -v m="$1" -v c="$code" '$1 ~ /^dra_grpc_operations_duration_seconds_count\{/ && index($1, m "\"") {
        match($1, /grpc_status_code="[^"]*"/); got = substr($1, RSTART + 18, RLENGTH - 19)
        if ((c == "!OK" && got != "OK") || got == c) n += $2 }
      END { print n + 0 }'
}
# kubelet_accepted_all: the kubelet's DRA calls to the driver all succeeded.
kubelet_accepted_all() {
  local m bad
  for m in NodePrepareResources NodeUnprepareResources; do
    bad=$(kubelet_dra_calls $m '!OK')
    [[ $bad == 0 ]] || fail "$bad $m calls of the kubelet failed"
  done
  pass "every NodePrepareResources/NodeUnprepareResources call of the kubelet succeeded"
}
