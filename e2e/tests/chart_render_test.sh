#!/usr/bin/env bash
# The chart without a cluster: helm lint (strict) on the defaults and on every ci/ values file,
# what helm template renders for the main value combinations, every validation.yaml failure and
# a few values.schema.json rejections, each with the message a user would see.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/chart_lib.sh"
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }
find_helm || { echo "SKIP: no helm binary (e2e/cluster/build.sh builds it)" >&2; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

helm lint --strict "$CHART_DIR" >/dev/null || fail "helm lint --strict on defaults"
for f in "$CHART_DIR"/ci/*-values.yaml; do
  helm lint --strict "$CHART_DIR" -f "$f" >/dev/null || fail "helm lint --strict -f $f"
done
pass "helm lint --strict: defaults and $(ls "$CHART_DIR"/ci/*-values.yaml | wc -l) ci values files"

# kinds FILE: sorted "Kind/name" list of a rendered stream.
kinds() {
  awk '/^kind: /{k=$2} /^  name: /{if (k) {print k "/" $2; k=""}}' "$1" | sort
}

render >"$tmp/default.yaml" || fail "helm template with defaults"
want="ClusterRole/draco
ClusterRoleBinding/draco
Deployment/draco
MutatingAdmissionPolicy/draco-scheduling-gate
MutatingAdmissionPolicyBinding/draco-scheduling-gate-selector
Pod/draco-test-metrics
Role/draco-leader-election
RoleBinding/draco-leader-election
Service/draco-metrics
ServiceAccount/draco"
got=$(kinds "$tmp/default.yaml")
[[ $got == "$want" ]] || fail "default objects differ:
$(diff <(echo "$want") <(echo "$got"))"
pass "defaults render the 10 expected objects"

grep -q -- '- --leader-elect=true' "$tmp/default.yaml" || fail "leader election flag missing"
for f in lease-duration=15s renew-deadline=10s retry-period=2s; do
  grep -q -- "- --leader-elect-$f" "$tmp/default.yaml" || fail "--leader-elect-$f missing"
done
grep -q 'readOnlyRootFilesystem: true' "$tmp/default.yaml" || fail "read-only root missing"
grep -q 'runAsNonRoot: true' "$tmp/default.yaml" || fail "runAsNonRoot missing"
grep -q 'draco.dev/gated: "true"' "$tmp/default.yaml" || fail "default gating selector missing"
grep -q 'Object.spec.schedulingGates{name: "draco.dev/allocation"}' "$tmp/default.yaml" \
  || fail "admission policy does not add the draco.dev/allocation gate"
if grep -q 'type: Recreate' "$tmp/default.yaml"; then fail "Recreate strategy with leader election"; fi
pass "controller flags, security contexts and the gate mutation are rendered"

render -f "$CHART_DIR/ci/all-features-values.yaml" --set metrics.serviceMonitor.enabled=true \
  --api-versions monitoring.coreos.com/v1/ServiceMonitor >"$tmp/all.yaml" || fail "all features"
for k in NetworkPolicy/draco PodDisruptionBudget/draco ConfigMap/draco-dashboard \
  ServiceMonitor/draco DeviceClass/gpu.ci.draco.dev AllocationPolicy/ci-gpus-binpack \
  MutatingAdmissionPolicyBinding/draco-scheduling-gate-names \
  MutatingAdmissionPolicyBinding/draco-scheduling-gate-selector; do
  kinds "$tmp/all.yaml" | grep -qx "$k" || fail "all features: $k not rendered"
done
grep -q 'replicas: 2' "$tmp/all.yaml" || fail "replicas not rendered"
grep -q '"uid": "draco-overview"' "$tmp/all.yaml" || fail "dashboard JSON not embedded"
pass "every optional object renders with all features on"

render --set leaderElection.enabled=false >"$tmp/nole.yaml" || fail "leader election off"
grep -q 'type: Recreate' "$tmp/nole.yaml" || fail "no Recreate strategy without leader election"
if kinds "$tmp/nole.yaml" | grep -q '^Role/'; then fail "lease Role rendered without leader election"; fi
pass "without leader election: Recreate strategy and no lease Role"

render --set admission.gatedNamespaces.all=true --set admission.gatedNamespaces.selector=null \
  >"$tmp/allns.yaml" || fail "gate all namespaces"
kinds "$tmp/allns.yaml" | grep -qx 'MutatingAdmissionPolicyBinding/draco-scheduling-gate-all' \
  || fail "all-namespaces binding missing"
grep -A20 'scheduling-gate-all$' "$tmp/allns.yaml" | grep -q 'operator: NotIn' \
  || fail "all-namespaces binding does not exclude kube-system"
pass "gatedNamespaces.all binds everywhere except excludeNames"

render --set admission.enabled=false --set metrics.enabled=false >"$tmp/min.yaml" || fail "minimal"
if kinds "$tmp/min.yaml" | grep -qE '^(MutatingAdmissionPolicy|Service|Pod)/'; then
  fail "admission/metrics/test objects rendered while disabled"
fi
pass "admission.enabled=false and metrics.enabled=false drop their objects"

render --kube-version 1.35.0 --set admission.apiVersion=admissionregistration.k8s.io/v1beta1 \
  | grep -q 'apiVersion: admissionregistration.k8s.io/v1beta1' || fail "apiVersion override ignored"
pass "admission.apiVersion overrides auto-detection"

# expect_fail DESC MESSAGE-REGEX ARGS...: helm template must fail and print MESSAGE-REGEX.
expect_fail() {
  local desc=$1 msg=$2 out; shift 2
  if out=$(render "$@" 2>&1); then fail "$desc: rendered, want failure"; fi
  grep -qE -- "$msg" <<<"$out" || fail "$desc: message lacks /$msg/: $out"
  pass "rejected: $desc"
}
expect_fail "replicas>1 without leader election" "replicas=3 needs leaderElection.enabled=true" \
  --set replicas=3 --set leaderElection.enabled=false
expect_fail "leader-election timing that is not a duration" "renewDeadline" \
  --set leaderElection.renewDeadline=ten
expect_fail "PDB blocking every drain" "would block every node drain" \
  --set podDisruptionBudget.enabled=true
expect_fail "PDB with min and max" "either minAvailable or maxUnavailable" \
  --set podDisruptionBudget.enabled=true --set podDisruptionBudget.maxUnavailable=1 --set replicas=2
expect_fail "ServiceMonitor without metrics" "needs metrics.enabled=true" \
  --set metrics.serviceMonitor.enabled=true --set metrics.enabled=false
expect_fail "ServiceMonitor without the CRD" "does not serve monitoring.coreos.com/v1 ServiceMonitor" \
  --set metrics.serviceMonitor.enabled=true
expect_fail "admission gating no namespace" "no namespace is gated" \
  --set admission.gatedNamespaces.selector=null
expect_fail "admission all plus names" "gatedNamespaces.all=true gates every namespace" \
  --set admission.gatedNamespaces.all=true --set 'admission.gatedNamespaces.names={ml}'
expect_fail "namespace gated and excluded" '"kube-system" is in both' \
  --set 'admission.gatedNamespaces.names={kube-system}'
expect_fail "no MutatingAdmissionPolicy API" "serves no MutatingAdmissionPolicy API" \
  --kube-version 1.35.0
expect_fail "egress policy without API server CIDRs" "would cut draco off from the API server" \
  --set networkPolicy.enabled=true --set networkPolicy.egress.enabled=true
expect_fail "existing ServiceAccount without a name" "serviceAccount.create=false needs serviceAccount.name" \
  --set serviceAccount.create=false
expect_fail "duplicate DeviceClass" '"gpu.x" is listed twice' \
  --set 'deviceClasses[0].name=gpu.x' --set 'deviceClasses[0].driver=gpu.x' \
  --set 'deviceClasses[1].name=gpu.x' --set 'deviceClasses[1].driver=gpu.x'
expect_fail "schema: unknown top-level key" "additional properties 'replica' not allowed" \
  --set replica=2
expect_fail "schema: bad log format" "logFormat.*must be one of" --set controller.logFormat=xml
expect_fail "schema: bad failurePolicy" "failurePolicy.*must be one of" --set admission.failurePolicy=Maybe
expect_fail "schema: negative replicas" "replicas" --set replicas=-1
expect_fail "schema: bad namespace name" "names/0" --set 'admission.gatedNamespaces.names={ML_Team}'
