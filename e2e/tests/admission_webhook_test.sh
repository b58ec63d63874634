#!/usr/bin/env bash
# admission.mode=webhook on the real control plane: the chart installs a MutatingWebhookConfiguration
# (and no MutatingAdmissionPolicy); two draco replicas, running on this host as the chart's
# ServiceAccount with leader election, create the webhook CA Secret, fill in the caBundle and both
# serve the webhook with the same certificate, trusted through that caBundle; a pod with a claim in
# a gated namespace is gated by the webhook, allocated by draco (its node pin) and bound by
# kube-scheduler; pods elsewhere are untouched. A re-apply of the manifest (GitOps) blanks the
# caBundle, and draco restores it within seconds.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/chart_lib.sh"
find_helm || fail "no helm binary in DRACO_BIN"
find_draco || { echo "SKIP: draco not built (DRACO_BUILD_DIR)" >&2; exit 77; }
REL=draco-wh
NS=draco-wh-system
GATED=draco-wh-gated PLAIN=draco-wh-plain
DRV=wh.draco.dev
GATE=draco.dev/allocation
LOGS=${DRACO_E2E_DIR:-/tmp/draco-e2e}/logs
mkdir -p "$LOGS"
P1=$((30000 + RANDOM % 2500)) P2=$((P1 + 1))  # below the ephemeral range
pids=()
tmp=$(mktemp -d)
cleanup() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  helm uninstall "$REL" -n "$NS" --wait=false >/dev/null 2>&1 || true
  drop_ns $GATED $PLAIN $NS
  k delete resourceslice $DRV-node-0 deviceclass $DRV --ignore-not-found >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT

drop_ns $GATED $PLAIN
for n in $GATED $PLAIN; do kubectl wait --for=delete "namespace/$n" --timeout=120s >/dev/null 2>&1 || true; done
fresh_ns "$NS"
helm install "$REL" "$CHART_DIR" -n "$NS" --set admission.mode=webhook \
  --set admission.webhook.url=https://127.0.0.1:$P1/mutate \
  --set admission.gatedNamespaces.all=false --set admission.gatedNamespaces.names="{$GATED}" >/dev/null
k get mutatingwebhookconfiguration "$REL-scheduling-gate" >/dev/null || fail "no MutatingWebhookConfiguration"
if k get mutatingadmissionpolicy "$REL-scheduling-gate" >/dev/null 2>&1; then
  fail "webhook mode installed a MutatingAdmissionPolicy too"
fi
[[ -z $(k get mutatingwebhookconfiguration "$REL-scheduling-gate" -o jsonpath='{.webhooks[0].clientConfig.caBundle}') ]] \
  || fail "caBundle set before draco ran"
pass "helm install in webhook mode: MutatingWebhookConfiguration without caBundle, no policy"

for i in 1 2; do
  port=$((P1 + i - 1))
  start_local_webhook "$NS" "$REL" "$port" "$LOGS/$REL-$i.log" --leader-elect=true \
    --leader-elect-namespace "$NS" --pin-allocated-node=true
  pids+=("$WEBHOOK_PID")
  eventually 60 "replica $i (as the chart's ServiceAccount) is ready, webhook included" \
    curl -sf "$WEBHOOK_READYZ/readyz"
done
k get secret -n "$NS" "$REL-webhook-tls" >/dev/null || fail "no webhook Secret"
ca=$(k get secret -n "$NS" "$REL-webhook-tls" -o jsonpath='{.data.ca\.crt}' | base64 -d)
bundle=$(k get mutatingwebhookconfiguration "$REL-scheduling-gate" -o jsonpath='{.webhooks[0].clientConfig.caBundle}' | base64 -d)
[[ -n $ca && $ca == "$bundle" ]] || fail "caBundle differs from the Secret's ca.crt"
echo "$bundle" >"$tmp/ca.pem"
fp() {
  openssl s_client -connect "127.0.0.1:$1" -CAfile "$tmp/ca.pem" -verify_return_error \
    -verify_ip 127.0.0.1 </dev/null 2>/dev/null | openssl x509 -noout -fingerprint -sha256
}
f1=$(fp $P1) && f2=$(fp $P2) || fail "a replica's certificate does not verify against the caBundle"
[[ -n $f1 && $f1 == "$f2" ]] || fail "replicas serve different certificates: $f1 / $f2"
pass "both replicas serve the Secret's certificate, verified through the configuration's caBundle"

k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Namespace
metadata: {name: $GATED}
---
apiVersion: v1
kind: Namespace
metadata: {name: $PLAIN}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: $DRV}
spec:
  selectors: [{cel: {expression: 'device.driver == "$DRV"'}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: $DRV-node-0}
spec:
  driver: $DRV
  nodeName: node-0
  pool: {name: node-0, generation: 1, resourceSliceCount: 1}
  devices: [{name: dev-0}, {name: dev-1}]
YAML
wait_default_sa $GATED $PLAIN
pod() {
  cat <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $2, namespace: $1}
spec:
  terminationGracePeriodSeconds: 0
  resourceClaims: [{name: dev, resourceClaimName: claim}]
  containers:
  - name: c
    image: busybox
    resources: {claims: [{name: dev}]}
YAML
}
for n in $GATED $PLAIN; do
  k apply -n "$n" -f - >/dev/null <<YAML
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: claim}
spec:
  devices:
    requests: [{name: dev, exactly: {deviceClassName: $DRV}}]
YAML
done
probe_gated() {
  pod $GATED probe | kubectl create --dry-run=server -o jsonpath='{.spec.schedulingGates[*].name}' -f - \
    | grep -q "$GATE"
}
eventually 30 "the API server calls draco's webhook" probe_gated
created=$(pod $GATED train | k create -o jsonpath='{.spec.schedulingGates[*].name}' -f -)
[[ $created == "$GATE" ]] || fail "pod in $GATED created with gates '$created', want $GATE"
plain=$(pod $PLAIN train | k create -o jsonpath='{.spec.schedulingGates[*].name}' -f -)
[[ -z $plain ]] || fail "pod in the ungated namespace got gates '$plain'"
pass "the webhook gates the claim pod in $GATED and leaves $PLAIN alone"

eventually 60 "draco allocates the gated pod's claim and kube-scheduler binds it to node-0" \
  bash -c "[[ \$(kubectl get pod -n $GATED train -o jsonpath='{.spec.nodeName}') == node-0 ]]"
pin=$(k get pod -n $GATED train -o jsonpath='{.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchFields[0]}')
[[ $pin == *'"key":"metadata.name"'* && $pin == *'["node-0"]'* ]] \
  || fail "the gated pod was not released by draco (no node pin): '$pin'"
[[ -n $(k get resourceclaim -n $GATED claim -o jsonpath='{.status.allocation}') ]] || fail "claim not allocated"
pass "the webhook-gated pod was allocated by draco (node pin) and bound to node-0"
grep -q 'admission webhook on 127.0.0.1' "$LOGS/$REL-1.log" || fail "replica 1 log lacks the webhook line"

# GitOps: a re-apply of the chart's manifest (Argo CD Replace=true, Flux force, kubectl replace)
# writes the configuration without a caBundle, since the chart renders none; draco, watching its
# configuration, writes the bundle back within seconds (its periodic check alone takes a minute).
helm get manifest "$REL" -n "$NS" |
  awk '/^---/{if (m) exit; buf=""; next} {buf = buf $0 "\n"} /^kind: MutatingWebhookConfiguration$/{m=1} END{printf "%s", buf}' \
  >"$tmp/mwc.yaml"
grep -q '^kind: MutatingWebhookConfiguration$' "$tmp/mwc.yaml" || fail "no MutatingWebhookConfiguration in the release manifest"
if grep -q 'caBundle:' "$tmp/mwc.yaml"; then fail "the release manifest carries a caBundle"; fi
k replace -f "$tmp/mwc.yaml" >/dev/null || fail "kubectl replace of the rendered configuration"
blanked=$SECONDS
current_bundle() {
  k get mutatingwebhookconfiguration "$REL-scheduling-gate" -o jsonpath='{.webhooks[0].clientConfig.caBundle}'
}
[[ -z $(current_bundle) ]] || echo "note: draco restored the caBundle before this test could read it blank"
eventually 20 "draco restores the caBundle a re-apply blanked" \
  bash -c "[[ \$(kubectl get mutatingwebhookconfiguration $REL-scheduling-gate -o jsonpath='{.webhooks[0].clientConfig.caBundle}' | base64 -d) == \"\$(cat $tmp/ca.pem)\" ]]"
echo "caBundle back after $((SECONDS - blanked)) s"
grep -q 'restoring it' "$LOGS/$REL-1.log" "$LOGS/$REL-2.log" || fail "no replica logged restoring the caBundle"
eventually 30 "the API server calls draco's webhook again after the re-apply" probe_gated
