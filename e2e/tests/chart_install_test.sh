#!/usr/bin/env bash
# The chart and CRD on the real control plane: the AllocationPolicy CRD's schema and CEL rules
# accept good policies and reject bad ones with their messages; every object the chart renders
# (defaults and all features) passes a server-side dry run; helm install, upgrade, a refused
# upgrade and uninstall behave.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/chart_lib.sh"
find_helm || fail "no helm binary in DRACO_BIN"
REL=draco-it
NS=draco-it-system
tmp=$(mktemp -d)
cleanup() {
  helm uninstall "$REL" -n "$NS" --wait=false >/dev/null 2>&1 || true
  k delete allocationpolicies.draco.dev -l draco-e2e=chart-install --ignore-not-found >/dev/null 2>&1 || true
  drop_ns "$NS"
  rm -rf "$tmp"
}
trap cleanup EXIT

k apply --server-side -f "$REPO_ROOT/crds/" >/dev/null
k wait --for=condition=Established crd/allocationpolicies.draco.dev --timeout=60s >/dev/null
pass "AllocationPolicy CRD installed and Established"

# policy NAME SPEC-YAML: an AllocationPolicy manifest.
policy() {
  printf 'apiVersion: draco.dev/v1alpha1\nkind: AllocationPolicy\nmetadata:\n  name: %s\n  labels: {draco-e2e: chart-install}\nspec:\n%s\n' "$1" "$2"
}
accept() {
  local out
  out=$(policy "$1" "$2" | k apply --server-side --dry-run=server -f - 2>&1) \
    || fail "policy $1 rejected: $out"
  pass "CRD accepts: $1"
}
reject() {
  local out
  if out=$(policy "$1" "$3" | k apply --server-side --dry-run=server -f - 2>&1); then
    fail "policy $1 accepted, want rejection /$2/"
  fi
  grep -qE -- "$2" <<<"$out" || fail "policy $1: message lacks /$2/: $out"
  pass "CRD rejects: $1"
}
accept names-binpack '  deviceClassSelector: {names: [gpu.example.com, fpga.example.com]}
  strategy: BinPack
  namespaceLimits:
  - {namespace: "*", maxDevices: 4}
  - {namespace: team-a, maxDevices: 16, maxCapacity: {memory: 640Gi, example.com/cores: "128"}}'
accept selector-spread '  deviceClassSelector:
    labelSelector:
      matchLabels: {draco.dev/policy: gpus}
      matchExpressions: [{key: tier, operator: In, values: [gold]}, {key: legacy, operator: DoesNotExist}]
  strategy: Spread
  priority: 10'
reject both-selectors 'set exactly one of deviceClassSelector.names and deviceClassSelector.labelSelector' \
  '  deviceClassSelector: {names: [a], labelSelector: {matchLabels: {a: b}}}'
reject no-selector 'set exactly one of' '  deviceClassSelector: {}'
reject empty-label-selector 'an empty labelSelector would select every DeviceClass' \
  '  deviceClassSelector: {labelSelector: {}}'
reject in-without-values 'operators In and NotIn need values' \
  '  deviceClassSelector: {labelSelector: {matchExpressions: [{key: a, operator: In}]}}'
reject exists-with-values 'Exists and DoesNotExist take none' \
  '  deviceClassSelector: {labelSelector: {matchExpressions: [{key: a, operator: Exists, values: [x]}]}}'
reject bad-strategy 'Unsupported value: "Random"' \
  '  deviceClassSelector: {names: [a]}
  strategy: Random'
reject empty-limit 'a namespace limit needs maxDevices, maxCapacity, or both' \
  '  deviceClassSelector: {names: [a]}
  namespaceLimits: [{namespace: team-a}]'
reject negative-capacity 'must be a non-negative quantity' \
  '  deviceClassSelector: {names: [a]}
  namespaceLimits: [{namespace: team-a, maxCapacity: {memory: "-1Gi"}}]'
reject non-quantity 'must be a non-negative quantity' \
  '  deviceClassSelector: {names: [a]}
  namespaceLimits: [{namespace: team-a, maxCapacity: {memory: lots}}]'
reject bad-capacity-name 'maxCapacity keys are capacity names' \
  '  deviceClassSelector: {names: [a]}
  namespaceLimits: [{namespace: team-a, maxCapacity: {"Mem ory": "1"}}]'
reject duplicate-namespace 'duplicate entries for key \[namespace="team-a"\]' \
  '  deviceClassSelector: {names: [a]}
  namespaceLimits: [{namespace: team-a, maxDevices: 1}, {namespace: team-a, maxDevices: 2}]'
reject negative-devices 'should be greater than or equal to 0' \
  '  deviceClassSelector: {names: [a]}
  namespaceLimits: [{namespace: team-a, maxDevices: -1}]'
reject bad-namespace 'namespaceLimits\[0\].namespace' \
  '  deviceClassSelector: {names: [a]}
  namespaceLimits: [{namespace: Team_A, maxDevices: 1}]'
policy defaults-e2e '  deviceClassSelector: {names: [gpu.example.com]}' | k apply --server-side -f - >/dev/null
got=$(k get allocationpolicy defaults-e2e -o jsonpath='{.spec.strategy}/{.spec.priority}')
[[ $got == FirstFit/0 ]] || fail "defaults: got strategy/priority $got, want FirstFit/0"
pass "CRD defaults strategy FirstFit and priority 0"

# Server-side dry run of every rendered object.
fresh_ns "$NS"
for vals in default all-features; do
  args=(-n "$NS")
  [[ $vals == all-features ]] && args+=(-f "$CHART_DIR/ci/all-features-values.yaml")
  render "${args[@]}" >"$tmp/$vals.yaml"
  n=$(grep -c '^kind: ' "$tmp/$vals.yaml")
  # A dry run creates nothing, and a Pod (the helm test pod) must name an existing ServiceAccount:
  # the rendered ServiceAccounts are created for real first (the namespace is the test's own).
  for sa in $(awk '/^kind: ServiceAccount$/{on=1} on && /^  name: /{print $2; on=0}' "$tmp/$vals.yaml"); do
    k create serviceaccount -n "$NS" "$sa" >/dev/null 2>&1 || true
  done
  out=$(k apply --server-side --dry-run=server -f "$tmp/$vals.yaml" 2>&1) \
    || fail "server-side dry run ($vals values): $out"
  ok=$(grep -c 'serverside-applied (server dry run)' <<<"$out")
  [[ $ok == "$n" ]] || fail "dry run ($vals): $ok of $n objects applied: $out"
  pass "server-side dry run: all $n objects rendered with $vals values"
done

# Install, upgrade, refused upgrade, uninstall.
helm install "$REL" "$CHART_DIR" -n "$NS" -f "$CHART_DIR/ci/all-features-values.yaml" \
  --set 'deviceClasses[0].name=gpu.it.draco.dev' --set 'deviceClasses[0].driver=gpu.example.com' \
  --set admission.gatedNamespaces.names='{draco-it-gated}' >/dev/null
[[ $(helm status "$REL" -n "$NS" -o json | grep -o '"status":"[a-z-]*"' | head -1) == '"status":"deployed"' ]] \
  || fail "release not deployed"
for o in deployment/$REL serviceaccount/$REL service/$REL-metrics role/$REL-leader-election \
  poddisruptionbudget/$REL networkpolicy/$REL configmap/$REL-dashboard; do
  k get -n "$NS" "$o" >/dev/null || fail "installed release lacks $o"
done
# admission.mode=auto: a MutatingAdmissionPolicy where the server serves one, else the webhook.
if [[ $(gate_mode) == policy ]]; then
  gate_objs=(mutatingadmissionpolicy/$REL-scheduling-gate mutatingadmissionpolicybinding/$REL-scheduling-gate-names)
else
  gate_objs=(mutatingwebhookconfiguration/$REL-scheduling-gate)
  for o in service/$REL-webhook role/$REL-webhook rolebinding/$REL-webhook; do
    k get -n "$NS" "$o" >/dev/null || fail "installed release (webhook mode) lacks $o"
  done
  if k get mutatingadmissionpolicy "$REL-scheduling-gate" >/dev/null 2>&1; then
    fail "webhook mode also installed a MutatingAdmissionPolicy"
  fi
fi
for o in clusterrole/$REL clusterrolebinding/$REL "${gate_objs[@]}" deviceclass/gpu.it.draco.dev \
  allocationpolicy/ci-gpus-binpack; do
  k get "$o" >/dev/null || fail "installed release lacks $o"
done
pass "helm install created every object (admission gate: $(gate_mode))"
eventually 60 "kube-scheduler places the controller pods (security context and scheduling knobs accepted)" \
  bash -c "[[ \$(kubectl get pods -n $NS -l app.kubernetes.io/component=controller -o jsonpath='{range .items[*]}{.spec.nodeName}{\" \"}{end}' | wc -w) == 2 ]]"

helm upgrade "$REL" "$CHART_DIR" -n "$NS" --reuse-values --set replicas=3 >/dev/null
[[ $(k get deploy "$REL" -n "$NS" -o jsonpath='{.spec.replicas}') == 3 ]] || fail "upgrade to 3 replicas"
pass "helm upgrade applies replicas=3"
if out=$(helm upgrade "$REL" "$CHART_DIR" -n "$NS" --reuse-values --set leaderElection.enabled=false 2>&1); then
  fail "upgrade to 3 replicas without leader election succeeded"
fi
grep -q 'needs leaderElection.enabled=true' <<<"$out" || fail "refused upgrade message: $out"
[[ $(helm history "$REL" -n "$NS" -o json | grep -o '"revision":[0-9]*' | tail -1) == '"revision":2' ]] \
  || fail "refused upgrade created a revision"
pass "helm upgrade to an invalid combination is refused and leaves revision 2"

helm uninstall "$REL" -n "$NS" >/dev/null
for o in clusterrole/$REL "${gate_objs[0]}" deviceclass/gpu.it.draco.dev \
  allocationpolicy/ci-gpus-binpack; do
  if k get "$o" >/dev/null 2>&1; then fail "uninstall left $o"; fi
done
k get crd allocationpolicies.draco.dev >/dev/null || fail "uninstall removed the CRD (Helm must keep crds/)"
pass "helm uninstall removes the release's objects and keeps the CRD"
