#!/usr/bin/env bash
# The chart's operations options without a cluster (helm template): the PrometheusRule (the rule
# file embedded unchanged but for the job matcher), the Lease name driving both the flag and the
# Role, the controller defaults equal to the binary's, the webhook configuration rendered without a
# caBundle (draco writes it; GitOps-safe), and the cert-manager option of the webhook.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/chart_lib.sh"
render_test_init
RULES=$CHART_DIR/files/prometheus-rules.yaml

# expect_fail DESC MESSAGE-REGEX ARGS...: helm template must fail and print MESSAGE-REGEX.
expect_fail() {
  local desc=$1 msg=$2 out; shift 2
  if out=$(render "$@" 2>&1); then fail "$desc: rendered, want failure"; fi
  grep -qE -- "$msg" <<<"$out" || fail "$desc: message lacks /$msg/: $out"
  pass "rejected: $desc"
}
# doc FILE KIND: the one object of KIND in a rendered stream.
doc() { awk -v k="kind: $2" '/^---/{if (hit) exit; buf=""; next} {buf = buf $0 "\n"} $0 == k {hit=1} END{if (hit) printf "%s", buf}' "$1"; }

# --- PrometheusRule --------------------------------------------------------------------------
render >"$tmp/default.yaml"
if grep -q '^kind: PrometheusRule' "$tmp/default.yaml"; then fail "PrometheusRule rendered by default"; fi
prom=(--api-versions monitoring.coreos.com/v1/PrometheusRule --set metrics.prometheusRule.enabled=true)
render "${prom[@]}" >"$tmp/pr.yaml" || fail "metrics.prometheusRule.enabled=true"
doc "$tmp/pr.yaml" PrometheusRule >"$tmp/pr-obj.yaml"
grep -qx '  name: draco' "$tmp/pr-obj.yaml" && grep -qx '  namespace: default' "$tmp/pr-obj.yaml" ||
  fail "PrometheusRule name/namespace: $(head -8 "$tmp/pr-obj.yaml")"
# spec is the rule file: same groups, comments dropped, job=~".*draco.*" -> the Service's job.
sed -n '/^spec:$/,$p' "$tmp/pr-obj.yaml" | tail -n +2 | sed 's/^  //' >"$tmp/pr-rules.yaml"
grep -v '^#' "$RULES" | sed 's/job=~"\.\*draco\.\*"/job="draco-metrics"/g' >"$tmp/want-rules.yaml"
diff -u "$tmp/want-rules.yaml" "$tmp/pr-rules.yaml" >"$tmp/rules.diff" ||
  fail "PrometheusRule spec is not files/prometheus-rules.yaml: $(cat "$tmp/rules.diff")"
[[ $(grep -c 'job="draco-metrics"' "$tmp/pr-rules.yaml") == 2 ]] ||
  fail "want the job matcher of DracoForbidden and DracoDown replaced"
[[ $(grep -c '^  - alert: ' "$tmp/pr-rules.yaml") == 6 ]] || fail "want the guide's 6 alerts"
if command -v promtool >/dev/null; then
  promtool check rules "$tmp/pr-rules.yaml" >/dev/null || fail "promtool rejects the rendered rules"
fi
pass "PrometheusRule: files/prometheus-rules.yaml with job=\"draco-metrics\" (6 alerts)"

render "${prom[@]}" --set metrics.prometheusRule.namespace=monitoring \
  --set metrics.prometheusRule.additionalLabels.release=kube-prometheus \
  --set-string 'metrics.prometheusRule.jobSelector=job="kubernetes-pods"\,app="draco"' \
  --set fullnameOverride=gpu-alloc >"$tmp/pr2.yaml" || fail "PrometheusRule options"
doc "$tmp/pr2.yaml" PrometheusRule >"$tmp/pr2-obj.yaml"
for line in '  name: gpu-alloc' '  namespace: monitoring' '    release: kube-prometheus'; do
  grep -qxF "$line" "$tmp/pr2-obj.yaml" || fail "PrometheusRule options: '$line' missing"
done
grep -qF 'absent(up{job="kubernetes-pods",app="draco"} == 1)' "$tmp/pr2-obj.yaml" ||
  fail "jobSelector not applied: $(grep absent "$tmp/pr2-obj.yaml")"
pass "PrometheusRule: namespace, additionalLabels and jobSelector"
expect_fail "PrometheusRule without the CRD" "does not serve monitoring.coreos.com/v1 PrometheusRule" \
  --set metrics.prometheusRule.enabled=true
expect_fail "schema: PrometheusRule label that is not a string" "additionalLabels/x" \
  --set metrics.prometheusRule.additionalLabels.x=1

# --- Lease name ------------------------------------------------------------------------------
# lease_pair FILE: "<flag value> <Role resourceNames>".
lease_pair() {
  local flag names
  flag=$(sed -n 's/^ *- --leader-elect-lease-name=//p' "$1")
  names=$(awk '/resources: \[leases\]/{getline; if ($1 == "resourceNames:") print $2}' "$1")
  echo "$flag $names"
}
[[ $(lease_pair "$tmp/default.yaml") == "draco [draco]" ]] ||
  fail "default Lease: flag and Role say '$(lease_pair "$tmp/default.yaml")'"
render --set leaderElection.leaseName=team-a.draco >"$tmp/lease.yaml" || fail "leaseName"
[[ $(lease_pair "$tmp/lease.yaml") == "team-a.draco [team-a.draco]" ]] ||
  fail "leaseName: flag and Role say '$(lease_pair "$tmp/lease.yaml")'"
grep -qF 'get lease {{ include "draco.leaseName" . }}' "$CHART_DIR/templates/NOTES.txt" ||
  fail "NOTES.txt does not name the Lease through draco.leaseName"
pass "leaderElection.leaseName drives --leader-elect-lease-name, the Role's resourceNames and NOTES"
expect_fail "schema: bad Lease name" "leaseName" --set leaderElection.leaseName=Draco_Lease

# --- Controller defaults = the binary's --------------------------------------------------------
RUN_H=$REPO_ROOT/controller/run/run.h
for pair in "workers:workers" "kube-api-qps:kube_api_qps" "kube-api-burst:kube_api_burst"; do
  flag=${pair%%:*} field=${pair#*:}
  want=$(sed -n "s/^ *\(double\|int\) $field = \([0-9]*\);.*/\2/p" "$RUN_H")
  [[ -n $want ]] || fail "no default for $field in $RUN_H"
  got=$(sed -n "s/^ *- --$flag=//p" "$tmp/default.yaml")
  [[ $got == "$want" ]] || fail "chart renders --$flag=$got, the binary's default is $want"
done
pass "controller.workers, kubeApiQps, kubeApiBurst default to the binary's defaults"

# --- Webhook caBundle: never rendered (draco writes it and restores it) -------------------------
wh=(--kube-version 1.34.4 --set admission.mode=webhook)
render "${wh[@]}" >"$tmp/wh.yaml" || fail "webhook mode"
if grep -q '^ *caBundle:' "$tmp/wh.yaml"; then fail "the webhook configuration renders a caBundle"; fi
if grep -qE '(\(|\{\{-?) *lookup ' "$CHART_DIR/templates/admissionwebhook.yaml"; then
  fail "admissionwebhook.yaml uses lookup (empty under helm template, Argo CD and Flux)"
fi
awk '/resources: \[mutatingwebhookconfigurations\]/{getline; getline; print}' "$tmp/wh.yaml" |
  grep -qx '  verbs: \[get, watch, patch\]' ||
  fail "draco may not watch its webhook configuration: $(grep -A3 mutatingwebhookconfigurations "$tmp/wh.yaml")"
pass "webhook mode: no caBundle rendered, no lookup; draco may get, watch and patch its configuration"

# --- cert-manager for the webhook -----------------------------------------------------------------
cm=("${wh[@]}" --api-versions cert-manager.io/v1/Certificate --set admission.webhook.certManager.enabled=true)
render "${cm[@]}" >"$tmp/cm.yaml" || fail "webhook certManager"
got=$(awk '/^kind: /{k=$2} /^  name: /{if (k) {print k "/" $2; k=""}}' "$tmp/cm.yaml" | sort)
for k in Certificate/draco-webhook Certificate/draco-webhook-ca Issuer/draco-selfsigned Issuer/draco-webhook-ca; do
  grep -qx "$k" <<<"$got" || fail "certManager: $k not rendered"
done
if grep -qx 'Role/draco-webhook' <<<"$got"; then fail "certManager: draco still gets the Secret Role"; fi
if grep -q 'mutatingwebhookconfigurations' "$tmp/cm.yaml"; then fail "certManager: draco may still patch the caBundle"; fi
grep -qx '    cert-manager.io/inject-ca-from: default/draco-webhook' "$tmp/cm.yaml" ||
  fail "certManager: no inject-ca-from annotation naming the Certificate"
awk '/^kind: Certificate$/{c=1} c && /^  name: draco-webhook$/{s=1} s' "$tmp/cm.yaml" >"$tmp/cert.yaml"
for line in '  secretName: draco-webhook-tls' '  - "draco-webhook.default.svc"' '    name: draco-webhook-ca'; do
  grep -qxF "$line" "$tmp/cert.yaml" || fail "serving Certificate lacks '$line'"
done
grep -qx -- '        - --webhook-cert-dir=/etc/draco/webhook-tls' "$tmp/cm.yaml" || fail "certManager: no --webhook-cert-dir"
for f in --webhook-cert-secret --webhook-config-name --webhook-cert-validity; do
  if grep -q -- "$f" "$tmp/cm.yaml"; then fail "certManager: $f still rendered"; fi
done
grep -qx '          secretName: draco-webhook-tls' "$tmp/cm.yaml" || fail "certManager: Secret not mounted"
pass "certManager: Certificate (self-signed CA chain), inject-ca-from, mounted Secret, no Secret/caBundle RBAC"

render "${cm[@]}" --set admission.webhook.certManager.issuerRef.name=corp-ca \
  --set admission.webhook.certManager.issuerRef.kind=ClusterIssuer >"$tmp/cm2.yaml" || fail "issuerRef"
if grep -q '^kind: Issuer' "$tmp/cm2.yaml"; then fail "issuerRef given, the chart still creates Issuers"; fi
grep -A3 '  issuerRef:' "$tmp/cm2.yaml" | grep -q 'kind: ClusterIssuer' || fail "issuerRef not rendered"
pass "certManager.issuerRef: the given ClusterIssuer signs, no chart Issuers"
expect_fail "certManager without cert-manager" "does not serve cert-manager.io/v1 Certificate" \
  "${wh[@]}" --set admission.webhook.certManager.enabled=true
expect_fail "certManager in policy mode" "certManager.enabled=true but draco serves no webhook" \
  --api-versions cert-manager.io/v1/Certificate --set admission.webhook.certManager.enabled=true
expect_fail "certManager with a webhook URL" "certManager.enabled=true with admission.webhook.url" \
  "${cm[@]}" --set admission.webhook.url=https://127.0.0.1:9443/mutate
expect_fail "schema: bad issuer kind" "kind.*must be one of" \
  "${cm[@]}" --set admission.webhook.certManager.issuerRef.kind=Vault

# --- Object names the platform guide gives (<fullname>-...), for releases "draco" and "gpu" ------
names() { awk '/^kind: /{k=$2} /^  name: /{if (k) {print k "/" $2; k=""}}' "$1"; }
for rel in draco gpu; do
  helm template "$rel" "$CHART_DIR" --kube-version 1.34.4 --set admission.mode=webhook >"$tmp/names-$rel.yaml" ||
    fail "render release $rel"
  full=$rel; [[ $rel == *draco* ]] || full=$rel-draco
  for want in "Service/$full-webhook" "Service/$full-metrics" "MutatingWebhookConfiguration/$full-scheduling-gate"; do
    names "$tmp/names-$rel.yaml" | grep -qx "$want" || fail "release $rel: the guide's $want is not rendered"
  done
  grep -q -- "--webhook-cert-secret=default/$full-webhook-tls" "$tmp/names-$rel.yaml" ||
    fail "release $rel: the webhook Secret is not $full-webhook-tls"
done
grep -qF '`<fullname>-metrics` Service' "$REPO_ROOT/docs/platform-guide.md" &&
  grep -qF '`<fullname>-webhook` Service' "$REPO_ROOT/docs/platform-guide.md" ||
  fail "the platform guide no longer names the Services <fullname>-metrics and <fullname>-webhook"
pass "the guide's object names (<fullname>-webhook, -webhook-tls, -metrics, -scheduling-gate) are rendered for releases draco and gpu"

# --- The guide's RBAC table names every resource the chart grants ---------------------------------
for m in policy webhook; do
  render --set admission.mode=$m --set claimLifecycle=auto \
    --set controller.featureGates.DRAWorkloadResourceClaims=true --show-only templates/rbac.yaml
done >"$tmp/rbac-all.yaml" || fail "render rbac.yaml"
python3 - "$tmp/rbac-all.yaml" "$REPO_ROOT/docs/platform-guide.md" <<'PY' || fail "the guide's RBAC table misses resources the chart grants"
import re, sys
text = open(sys.argv[2]).read()
start = text.index("### What the chart grants draco")
section = text[start:text.index("\n### ", start + 5)]
granted = set()
for m in re.finditer(r"resources: \[([^\]]*)\]", open(sys.argv[1]).read()):
    granted |= {r.strip() for r in m.group(1).split(",")}
missing = sorted(r for r in granted if not re.search(r"`%s[`.]" % re.escape(r), section))
if missing or not granted:
    sys.exit("not in 'What the chart grants draco': %s" % missing)
print("%d granted resources, all in the guide's table" % len(granted))
PY
pass "the guide's RBAC table names every resource the chart's ClusterRole and Roles grant"
