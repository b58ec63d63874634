#!/usr/bin/env bash
# The chart's admission gate on the real API server, in the mode admission.mode=auto picks there
# (a MutatingAdmissionPolicy where the server serves one; else draco's webhook, run on this host as
# the chart's ServiceAccount): new pods with resourceClaims in gated
# namespaces (by name or by label) get the draco.dev/allocation scheduling gate and kube-scheduler
# leaves them alone; pods without claims, already-bound pods and pods in other or excluded
# namespaces are untouched; existing gates are kept. Then the chart's ServiceAccount (and only it)
# removes the gate, as draco does after allocating, and kube-scheduler allocates and binds the pod.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/chart_lib.sh"
find_helm || fail "no helm binary in DRACO_BIN"
REL=draco-ag
NS=draco-ag-system
GATED=draco-ag-gated LABELED=draco-ag-labeled PLAIN=draco-ag-plain EXCLUDED=draco-ag-excluded
SA=system:serviceaccount:$NS:$REL
GATE=draco.dev/allocation
# DRACO_E2E_ADMISSION_MODE=webhook tests the webhook where auto would pick the policy.
MODE=${DRACO_E2E_ADMISSION_MODE:-$(gate_mode)}
WEBHOOK_PID=""
cleanup() {
  rm -f "${PROBE_OUT:-}"
  [[ -n $WEBHOOK_PID ]] && kill "$WEBHOOK_PID" 2>/dev/null
  helm uninstall "$REL" -n "$NS" --wait=false >/dev/null 2>&1 || true
  drop_ns $GATED $LABELED $PLAIN $EXCLUDED $NS
  k delete resourceslice draco-ag-node-0 deviceclass draco-ag.example.com --ignore-not-found >/dev/null 2>&1 || true
}
trap cleanup EXIT

drop_ns $GATED $LABELED $PLAIN $EXCLUDED  # leftovers of an aborted run
for n in $GATED $LABELED $PLAIN $EXCLUDED; do
  kubectl wait --for=delete "namespace/$n" --timeout=120s >/dev/null 2>&1 || true
done
fresh_ns "$NS"
mode_args=()
if [[ $MODE == webhook ]]; then
  find_draco || { echo "SKIP: webhook mode needs the draco binary (DRACO_BUILD_DIR)" >&2; exit 77; }
  WPORT=$((30000 + RANDOM % 2500))  # below the ephemeral range
  mode_args=(--set admission.mode=webhook --set admission.webhook.url=https://127.0.0.1:$WPORT/mutate)
fi
helm install "$REL" "$CHART_DIR" -n "$NS" --set admission.gatedNamespaces.all=false \
  --set admission.gatedNamespaces.names="{$GATED}" \
  --set-string 'admission.gatedNamespaces.selector.matchLabels.draco\.dev/gated=true' \
  --set admission.gatedNamespaces.excludeNames="{kube-system,$EXCLUDED}" "${mode_args[@]}" >/dev/null
pass "helm install $REL in $MODE mode (gating $GATED by name and draco.dev/gated=true namespaces)"
if [[ $MODE == webhook ]]; then
  k get mutatingwebhookconfiguration "$REL-scheduling-gate" >/dev/null || fail "no MutatingWebhookConfiguration"
  start_local_webhook "$NS" "$REL" "$WPORT" "${DRACO_E2E_DIR:-/tmp/draco-e2e}/logs/$REL-webhook.log" \
    --leader-elect=false --allocate=false
  eventually 60 "draco (as the chart's ServiceAccount) serves the webhook and is ready" \
    curl -sf "$WEBHOOK_READYZ/readyz"
fi

k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Namespace
metadata: {name: $GATED}
---
apiVersion: v1
kind: Namespace
metadata: {name: $LABELED, labels: {draco.dev/gated: "true"}}
---
apiVersion: v1
kind: Namespace
metadata: {name: $PLAIN}
---
apiVersion: v1
kind: Namespace
metadata: {name: $EXCLUDED, labels: {draco.dev/gated: "true"}}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: draco-ag.example.com}
spec:
  selectors: [{cel: {expression: 'device.driver == "draco-ag.example.com"'}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: draco-ag-node-0}
spec:
  driver: draco-ag.example.com
  nodeName: node-0
  pool: {name: node-0, generation: 1, resourceSliceCount: 1}
  devices: [{name: dev-0}, {name: dev-1}, {name: dev-2}, {name: dev-3}]
YAML
wait_default_sa $GATED $LABELED $PLAIN $EXCLUDED
for n in $GATED $LABELED $PLAIN $EXCLUDED; do
  k apply -n "$n" -f - >/dev/null <<YAML
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: claim}
spec:
  devices:
    requests: [{name: dev, exactly: {deviceClassName: draco-ag.example.com}}]
YAML
done

# pod NS NAME [claim] [nodeName] [extra-gate]: a pod manifest.
pod() {
  local ns=$1 name=$2 claim=${3:-} node=${4:-} gate=${5:-}
  echo "apiVersion: v1
kind: Pod
metadata: {name: $name, namespace: $ns}
spec:
  terminationGracePeriodSeconds: 0"
  [[ -n $node ]] && echo "  nodeName: $node"
  [[ -n $gate ]] && echo "  schedulingGates: [{name: $gate}]"
  [[ -n $claim ]] && echo "  resourceClaims: [{name: dev, resourceClaimName: $claim}]"
  echo "  containers:
  - name: c
    image: busybox"
  [[ -n $claim ]] && echo "    resources: {claims: [{name: dev}]}"
  return 0
}
gates() { k get pod -n "$1" "$2" -o jsonpath='{range .spec.schedulingGates[*]}{.name}{" "}{end}'; }

# The policy (or the webhook configuration) is loaded asynchronously by the API server's admission
# plugin; wait for it to act.
PROBE_OUT=$(mktemp)
probe_gated() {
  pod "$GATED" probe claim | kubectl create --dry-run=server -o jsonpath='{.spec.schedulingGates[*].name}' -f - \
    >"$PROBE_OUT" 2>&1
  grep -q "$GATE" "$PROBE_OUT"
}
on_fail() {
  echo "last dry-run answer: $(cat "$PROBE_OUT" 2>/dev/null)"
  if [[ $MODE == webhook ]]; then
    echo "MutatingWebhookConfiguration:"
    k get mutatingwebhookconfiguration "$REL-scheduling-gate" \
      -o jsonpath='{range .webhooks[*]}{.name} url={.clientConfig.url} caBundle={.clientConfig.caBundle}{"\n"}{end}' | cut -c1-200
    echo "webhook log (last 30 lines):"
    tail -n 30 "${DRACO_E2E_DIR:-/tmp/draco-e2e}/logs/$REL-webhook.log" | cut -c1-300
    echo "listeners on :${WPORT:-}:"; ss -ltnp 2>/dev/null | grep ":${WPORT:-x} " || echo none
  fi
  echo "kube-apiserver log (webhook lines):"
  grep -i "webhook" "${DRACO_E2E_DIR:-/tmp/draco-e2e}/logs/kube-apiserver.log" | tail -n 15 | cut -c1-300
}
eventually 30 "the admission $MODE is active" probe_gated

pod "$GATED" with-claim claim | k create -f - >/dev/null
pod "$GATED" no-claim | k create -f - >/dev/null
pod "$GATED" other-gate claim "" example.com/other | k create -f - >/dev/null
pod "$GATED" bound claim node-1 | k create -f - >/dev/null
pod "$LABELED" with-claim claim | k create -f - >/dev/null
pod "$PLAIN" with-claim claim | k create -f - >/dev/null
pod "$EXCLUDED" with-claim claim | k create -f - >/dev/null

[[ $(gates "$GATED" with-claim) == "$GATE " ]] || fail "pod with claim in $GATED: gates '$(gates "$GATED" with-claim)'"
pass "pod with a claim in a namespace gated by name gets $GATE"
[[ $(gates "$LABELED" with-claim) == "$GATE " ]] || fail "pod in $LABELED: gates '$(gates "$LABELED" with-claim)'"
pass "pod with a claim in a namespace labelled draco.dev/gated=true gets $GATE"
[[ $(gates "$GATED" other-gate) == "example.com/other $GATE " ]] \
  || fail "pod with another gate: '$(gates "$GATED" other-gate)'"
pass "existing scheduling gates are kept and $GATE is added"
for p in "$GATED no-claim" "$GATED bound" "$PLAIN with-claim" "$EXCLUDED with-claim"; do
  [[ -z $(gates $p) ]] || fail "pod $p was gated: '$(gates $p)'"
done
pass "pods without claims, bound pods, and pods in ungated or excluded namespaces get no gate"

eventually 60 "kube-scheduler binds the ungated pod without claims" \
  bash -c "[[ -n \$(kubectl get pod -n $GATED no-claim -o jsonpath='{.spec.nodeName}') ]]"
eventually 60 "kube-scheduler allocates and binds the pod with a claim in the ungated namespace" \
  bash -c "[[ \$(kubectl get pod -n $PLAIN with-claim -o jsonpath='{.spec.nodeName}') == node-0 ]]"
eventually 30 "the gated pod reports PodScheduled=False/SchedulingGated" \
  bash -c "[[ \$(kubectl get pod -n $GATED with-claim -o jsonpath='{.status.conditions[?(@.type==\"PodScheduled\")].reason}') == SchedulingGated ]]"
[[ -z $(k get pod -n "$GATED" with-claim -o jsonpath='{.spec.nodeName}') ]] || fail "gated pod was bound"
[[ -z $(k get resourceclaim -n "$GATED" claim -o jsonpath='{.status.allocation}') ]] \
  || fail "kube-scheduler allocated the gated pod's claim"
pass "the gated pod is neither bound nor has its claim allocated"

ungate='[{"op":"remove","path":"/spec/schedulingGates/0"}]'
if k patch pod -n "$GATED" with-claim --type=json -p "$ungate" \
  --as=system:serviceaccount:$GATED:default >/dev/null 2>&1; then
  fail "an unrelated ServiceAccount removed the gate"
fi
pass "an unrelated ServiceAccount may not remove the gate"
k patch pod -n "$GATED" with-claim --type=json -p "$ungate" --as="$SA" >/dev/null \
  || fail "the chart's ServiceAccount could not remove the gate"
pass "the chart's ServiceAccount removes the gate (as draco does after allocating)"
eventually 60 "kube-scheduler then allocates the claim and binds the pod to node-0" \
  bash -c "[[ \$(kubectl get pod -n $GATED with-claim -o jsonpath='{.spec.nodeName}') == node-0 ]]"

if [[ $MODE == webhook ]]; then
  # A webhook that is down blocks only what it gates: claim pods in gated namespaces.
  kill "$WEBHOOK_PID"; wait "$WEBHOOK_PID" 2>/dev/null; WEBHOOK_PID=""
  pod "$PLAIN" down-with-claim claim | k create -f - >/dev/null \
    || fail "webhook down: a pod with a claim in an ungated namespace was refused"
  pod "$GATED" down-no-claim | k create -f - >/dev/null \
    || fail "webhook down: a pod without claims in a gated namespace was refused"
  if out=$(pod "$GATED" down-with-claim claim | k create -f - 2>&1); then
    fail "webhook down: a pod with a claim in a gated namespace was admitted ungated (failurePolicy Fail)"
  fi
  grep -q 'scheduling-gate.draco.dev' <<<"$out" || fail "refusal does not name the webhook: $out"
  pass "with the webhook down, only claim pods in gated namespaces are refused (failurePolicy Fail)"
fi
