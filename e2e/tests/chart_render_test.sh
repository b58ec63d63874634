#!/usr/bin/env bash
# The chart without a cluster: helm lint (strict) on the defaults and on every ci/ values file,
# what helm template renders for the main value combinations, every validation.yaml failure and
# a few values.schema.json rejections, each with the message a user would see.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/chart_lib.sh"
render_test_init

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
ClusterRole/draco-metrics-reader
ClusterRoleBinding/draco
ClusterRoleBinding/draco-test-metrics
Deployment/draco
MutatingAdmissionPolicy/draco-scheduling-gate
MutatingAdmissionPolicyBinding/draco-scheduling-gate-all
Pod/draco-test-metrics
Role/draco-leader-election
RoleBinding/draco-leader-election
Service/draco-metrics
ServiceAccount/draco
ServiceAccount/draco-test-metrics"
got=$(kinds "$tmp/default.yaml")
[[ $got == "$want" ]] || fail "default objects differ:
$(diff <(echo "$want") <(echo "$got"))"
pass "defaults render the 13 expected objects"

grep -q -- '- --leader-elect=true' "$tmp/default.yaml" || fail "leader election flag missing"
for f in lease-duration=15s renew-deadline=10s retry-period=2s; do
  grep -q -- "- --leader-elect-$f" "$tmp/default.yaml" || fail "--leader-elect-$f missing"
done
grep -q 'readOnlyRootFilesystem: true' "$tmp/default.yaml" || fail "read-only root missing"
grep -q 'runAsNonRoot: true' "$tmp/default.yaml" || fail "runAsNonRoot missing"
kinds "$tmp/default.yaml" | grep -qx 'MutatingAdmissionPolicyBinding/draco-scheduling-gate-all' \
  || fail "default does not gate every namespace (one allocator per device)"
grep -q 'Object.spec.schedulingGates{name: "draco.dev/allocation"}' "$tmp/default.yaml" \
  || fail "admission policy does not add the draco.dev/allocation gate"
if grep -q 'type: Recreate' "$tmp/default.yaml"; then fail "Recreate strategy with leader election"; fi
pass "controller flags, security contexts and the gate mutation are rendered"

# The startupProbe covers the initial LIST (on /readyz: informers synced), before liveness starts;
# /healthz's thresholds are flags.
probe=$(awk '/^        startupProbe:/{p=1; next} p && /^        [a-zA-Z]/{exit} p' "$tmp/default.yaml")
grep -q 'path: /readyz' <<<"$probe" && grep -q 'failureThreshold: 60' <<<"$probe" \
  && grep -q 'periodSeconds: 10' <<<"$probe" || fail "startupProbe not rendered: '$probe'"
for f in initial-sync-timeout=10m watch-down-timeout=5m stuck-worker-timeout=5m; do
  grep -q -- "- --healthz-$f" "$tmp/default.yaml" || fail "--healthz-$f missing"
done
pass "startupProbe on /readyz (10 minutes before liveness) and the /healthz thresholds"

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
if grep -q 'resources: \[leases\]' "$tmp/nole.yaml"; then fail "lease rules rendered without leader election"; fi
grep -q 'resources: \[resourceclaimtemplates\]' "$tmp/nole.yaml" ||
  fail "the claim lifecycle probe's rules (claimLifecycle: auto) are missing without leader election"
render --set leaderElection.enabled=false --set claimLifecycle=draco >"$tmp/nole-draco.yaml" ||
  fail "leader election off, claimLifecycle draco"
if kinds "$tmp/nole-draco.yaml" | grep -q '^Role/'; then fail "Role rendered without leader election and probe"; fi
grep -q -- '--claim-lifecycle=draco' "$tmp/nole-draco.yaml" || fail "--claim-lifecycle not rendered"
pass "without leader election: Recreate strategy, no lease rules; the probe's Role only with claimLifecycle auto"

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

# Extended resources (KEP-5004): off by default; on, the gate also matches pods asking for the
# listed names, the chart's classes' extendedResourceName and the implicit class names.
# extendedResources.enabled=auto: on with the policy, off with the webhook (1.35 default).
grep -q 'deviceclass.resource.kubernetes.io/' "$tmp/default.yaml" \
  || fail "extended resources not gated by default in policy mode"
render --kube-version 1.35.0 >"$tmp/default135.yaml" || fail "defaults on 1.35 (webhook)"
if grep -q 'deviceclass.resource.kubernetes.io/' "$tmp/default135.yaml"; then
  fail "extended resources gated in webhook mode"
fi
render --kube-version 1.35.0 --set admission.extendedResources.enabled=false >/dev/null \
  || fail "extendedResources.enabled=false"
render --show-only templates/admissionpolicy.yaml --set admission.extendedResources.enabled=true \
  --set 'admission.extendedResources.resourceNames={example.com/gpu}' \
  --set 'deviceClasses[0].name=fpga.x' --set 'deviceClasses[0].driver=fpga.x' \
  --set 'deviceClasses[0].extendedResourceName=example.com/fpga' >"$tmp/ext.yaml" \
  || fail "extended resources gate"
grep -q 'r in \["example.com/gpu","example.com/fpga"\] || r.startsWith("deviceclass.resource.kubernetes.io/")' \
  "$tmp/ext.yaml" || fail "extended-resource names missing from the gate: $(grep -n 'r in' "$tmp/ext.yaml")"
grep -q 'size(object.spec.resourceClaims) > 0) ||' "$tmp/ext.yaml" || fail "claims no longer gated"
pass "admission.extendedResources gates pods asking for served extended resources"

render --kube-version 1.35.0 --set admission.apiVersion=admissionregistration.k8s.io/v1beta1 \
  | grep -q 'apiVersion: admissionregistration.k8s.io/v1beta1' || fail "apiVersion override ignored"
pass "admission.apiVersion overrides auto-detection"

# admission.mode=auto without a policy API (1.34/1.35 by default): draco's webhook.
render --kube-version 1.34.4 -n draco-system >"$tmp/wh.yaml" || fail "helm template for 1.34.4"
want="ClusterRole/draco
ClusterRole/draco-metrics-reader
ClusterRoleBinding/draco
ClusterRoleBinding/draco-test-metrics
Deployment/draco
MutatingWebhookConfiguration/draco-scheduling-gate
Pod/draco-test-metrics
Role/draco-leader-election
Role/draco-webhook
RoleBinding/draco-leader-election
RoleBinding/draco-webhook
Service/draco-metrics
Service/draco-webhook
ServiceAccount/draco
ServiceAccount/draco-test-metrics"
got=$(kinds "$tmp/wh.yaml")
[[ $got == "$want" ]] || fail "1.34 (webhook mode) objects differ:
$(diff <(echo "$want") <(echo "$got"))"
for line in '- --webhook-bind-address=$(POD_IP):9443' \
  '- --webhook-cert-secret=draco-system/draco-webhook-tls' \
  '- --webhook-config-name=draco-scheduling-gate' \
  '- --webhook-cert-hosts=draco-webhook.draco-system.svc,draco-webhook,draco-webhook.draco-system' \
  'fieldRef: {fieldPath: status.podIP}' '- name: all.scheduling-gate.draco.dev' \
  'failurePolicy: Fail' 'sideEffects: None' 'admissionReviewVersions: [v1]' 'path: /mutate' \
  'resources: [mutatingwebhookconfigurations]' 'resourceNames: [draco-webhook-tls]'; do
  grep -qF -- "$line" "$tmp/wh.yaml" || fail "webhook mode: '$line' not rendered"
done
pass "admission.mode=auto on 1.34 renders draco's webhook (configuration, Service, flags, RBAC)"

# block FILE KEY: the YAML under every "KEY:" line, de-indented, comments dropped; "--" before
# each block.
block() {
  awk -v key="$2:" '
    { match($0, /^ */); ind = RLENGTH; t = substr($0, ind + 1) }
    inb && t ~ /^#/ { next }
    inb && t != "" && (ind < hind || (ind == hind && t !~ /^- /)) { inb = 0 }
    inb && t != "" { print substr($0, hind + 1) }
    t == key { inb = 1; hind = ind; print "--" }' "$1"
}
sel=(--set admission.gatedNamespaces.all=false --set 'admission.gatedNamespaces.names={ml}'
  --set admission.gatedNamespaces.selector.matchLabels.team=ml
  --set admission.gatedNamespaces.excludeNames='{kube-system,ops}'
  --set admission.extendedResources.enabled=false)
render --set admission.mode=webhook "${sel[@]}" >"$tmp/w.yaml"
render --set admission.mode=policy "${sel[@]}" >"$tmp/p.yaml"
# One policy binding per webhook, in the same order, with the same namespaceSelector.
[[ $(block "$tmp/w.yaml" namespaceSelector | grep -c '^--$') == 2 ]] || fail "want 2 webhook selectors"
[[ $(block "$tmp/w.yaml" namespaceSelector) == "$(block "$tmp/p.yaml" namespaceSelector)" ]] \
  || fail "namespaceSelectors differ:
$(diff <(block "$tmp/p.yaml" namespaceSelector) <(block "$tmp/w.yaml" namespaceSelector))"
# The policy's one list of matchConditions, repeated in each webhook.
pmc=$(block "$tmp/p.yaml" matchConditions)
[[ $(grep -c 'expression:' <<<"$pmc") == 3 ]] || fail "policy: want 3 matchConditions: $pmc"
[[ $(block "$tmp/w.yaml" matchConditions) == "$pmc"$'\n'"$pmc" ]] || fail "matchConditions differ:
$(diff <(echo "$pmc"; echo "$pmc") <(block "$tmp/w.yaml" matchConditions))"
[[ $(grep -c 'scheduling-gate.draco.dev$' "$tmp/w.yaml") == 2 ]] || fail "want 2 webhooks (names, selector)"
if grep -q 'mutatingwebhookconfigurations' "$tmp/p.yaml"; then fail "policy mode grants webhook RBAC"; fi
pass "webhook and policy select the same namespaces with the same matchConditions"

render --set admission.mode=webhook --set admission.webhook.url=https://127.0.0.1:9443/mutate \
  >"$tmp/url.yaml"
grep -qF 'url: "https://127.0.0.1:9443/mutate"' "$tmp/url.yaml" || fail "webhook URL not rendered"
if kinds "$tmp/url.yaml" | grep -qx 'Service/draco-webhook'; then fail "URL mode renders the Service"; fi
pass "admission.webhook.url calls draco outside the cluster (no Service)"

if grep -q -- '--feature-gates' "$tmp/default.yaml"; then fail "defaults render --feature-gates"; fi
render --set controller.featureGates.DRAWorkloadResourceClaims=true \
  --set controller.featureGates.DRADeviceTaints=false >"$tmp/gates.yaml" || fail "featureGates"
grep -qx -- '        - --feature-gates=DRADeviceTaints=false,DRAWorkloadResourceClaims=true' \
  "$tmp/gates.yaml" || fail "featureGates not rendered as one sorted --feature-gates: $(grep -- --feature "$tmp/gates.yaml")"
pass "controller.featureGates renders draco run --feature-gates (sorted; absent by default)"
# PodGroups: the informer (draco watches PodGroups whenever they are served: gangs need no gate)
# and the GET (stale reservations) always; status writes only with the gate.
pg_rules() { awk '/^kind: ClusterRole$/{on=1} on && /^- apiGroups: \[scheduling.k8s.io\]/{getline; r=$0; getline; print r " " $0}' "$1"; }
[[ $(pg_rules "$tmp/default.yaml") == "  resources: [podgroups]   verbs: [get, list, watch]" ]] \
  || fail "default PodGroup RBAC: $(pg_rules "$tmp/default.yaml")"
[[ $(pg_rules "$tmp/gates.yaml") == "  resources: [podgroups]   verbs: [get, list, watch]
  resources: [podgroups/status]   verbs: [patch]" ]] || fail "gate PodGroup RBAC: $(pg_rules "$tmp/gates.yaml")"
pass "PodGroup RBAC: get, list, watch always; status patch with DRAWorkloadResourceClaims"

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
expect_fail "an unknown claim lifecycle" "claimLifecycle.*auto.*draco.*upstream" \
  --set claimLifecycle=kcm
expect_fail "PDB blocking every drain" "would block every node drain" \
  --set podDisruptionBudget.enabled=true
expect_fail "PDB with min and max" "either minAvailable or maxUnavailable" \
  --set podDisruptionBudget.enabled=true --set podDisruptionBudget.maxUnavailable=1 --set replicas=2
expect_fail "ServiceMonitor without metrics" "needs metrics.enabled=true" \
  --set metrics.serviceMonitor.enabled=true --set metrics.enabled=false
expect_fail "ServiceMonitor without the CRD" "does not serve monitoring.coreos.com/v1 ServiceMonitor" \
  --set metrics.serviceMonitor.enabled=true
expect_fail "admission gating no namespace" "no namespace is gated" \
  --set admission.gatedNamespaces.all=false
expect_fail "admission all plus names" "gatedNamespaces.all=true gates every namespace" \
  --set admission.gatedNamespaces.all=true --set 'admission.gatedNamespaces.names={ml}'
expect_fail "namespace gated and excluded" '"kube-system" is in both' \
  --set admission.gatedNamespaces.all=false --set 'admission.gatedNamespaces.names={kube-system}'
expect_fail "policy mode without a MutatingAdmissionPolicy API" "serves no MutatingAdmissionPolicy API" \
  --kube-version 1.35.0 --set admission.mode=policy
expect_fail "webhook URL in policy mode" "admission.webhook.url is set but admission.mode resolves to policy" \
  --set admission.webhook.url=https://127.0.0.1:9443/mutate
expect_fail "schema: bad admission mode" "mode.*must be one of" --set admission.mode=magic
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
expect_fail "schema: bad extended resource name" "resourceNames/0" \
  --set 'admission.extendedResources.resourceNames={gpu}'
expect_fail "schema: feature gate that is not a boolean" "featureGates/DRAWorkloadResourceClaims" \
  --set-string controller.featureGates.DRAWorkloadResourceClaims=yes
