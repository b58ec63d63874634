#!/usr/bin/env bash
# metrics.secure without a cluster (helm template): on by default, it renders --metrics-secure, the
# ClusterRole rules draco needs for it (create tokenreviews and subjectaccessreviews), the
# "<fullname>-metrics-reader" ClusterRole for scrapers, an https Service port and a ServiceMonitor
# that scrapes https with Prometheus' ServiceAccount token; off, none of that, and the
# ServiceMonitor scrapes plain http with no tlsConfig (a tlsConfig is refused: draco would answer
# TLS handshakes with plain HTTP). metrics.certSecret mounts a Secret for --metrics-cert-dir.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/chart_lib.sh"
render_test_init
python3 -c 'import yaml' 2>/dev/null || { echo "SKIP: needs python3-yaml" >&2; exit 77; }
SM=(--api-versions monitoring.coreos.com/v1/ServiceMonitor --set metrics.serviceMonitor.enabled=true)

# facts FILE: one line per fact of the rendered stream that this test checks.
facts() {
  python3 - "$1" <<'PY'
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
def obj(kind, name):
    return next((d for d in docs if d["kind"] == kind and d["metadata"]["name"] == name), None)
dep = obj("Deployment", "draco")
c = dep["spec"]["template"]["spec"]["containers"][0]
for a in c["args"]:
    if a.startswith("--metrics-"):
        print("arg", a)
for m in c.get("volumeMounts", []):
    print("mount", m["name"], m["mountPath"], m.get("readOnly", False))
for v in dep["spec"]["template"]["spec"].get("volumes", []):
    if "secret" in v:
        print("volume", v["name"], v["secret"]["secretName"])
for r in obj("ClusterRole", "draco")["rules"]:
    if r.get("apiGroups", [""])[0].startswith(("authentication", "authorization")):
        print("draco-rule", r["apiGroups"][0], ",".join(r["resources"]), ",".join(r["verbs"]))
reader = obj("ClusterRole", "draco-metrics-reader")
if reader:
    print("reader", reader["rules"])
for p in obj("Service", "draco-metrics")["spec"]["ports"]:
    print("service-port", p["name"], p["targetPort"], p.get("appProtocol"))
sm = obj("ServiceMonitor", "draco")
if sm:
    e = sm["spec"]["endpoints"][0]
    print("sm", e["port"], e.get("scheme"), e.get("bearerTokenFile"), e.get("tlsConfig"))
pod = obj("Pod", "draco-test-metrics")
if pod:
    print("test-pod", pod["spec"].get("serviceAccountName"), pod["spec"]["automountServiceAccountToken"],
          "https://" in pod["spec"]["containers"][0]["command"][2])
PY
}
has() { grep -qxF -- "$2" "$1" || fail "$3: '$2' not rendered; got:
$(cat "$1")"; }
hasnt() { if grep -q -- "$2" "$1"; then fail "$3: '$2' rendered: $(grep -- "$2" "$1")"; fi; }

render "${SM[@]}" >"$tmp/on.yaml" || fail "helm template with defaults and the ServiceMonitor"
facts "$tmp/on.yaml" >"$tmp/on.facts"
has "$tmp/on.facts" "arg --metrics-secure=true" "defaults"
hasnt "$tmp/on.facts" "--metrics-cert-dir" "defaults (self-signed)"
has "$tmp/on.facts" "draco-rule authentication.k8s.io tokenreviews create" "defaults"
has "$tmp/on.facts" "draco-rule authorization.k8s.io subjectaccessreviews create" "defaults"
has "$tmp/on.facts" "reader [{'nonResourceURLs': ['/metrics'], 'verbs': ['get']}]" "defaults"
has "$tmp/on.facts" "service-port https-metrics metrics https" "defaults"
has "$tmp/on.facts" \
  "sm https-metrics https /var/run/secrets/kubernetes.io/serviceaccount/token {'insecureSkipVerify': True}" \
  "ServiceMonitor (secure)"
has "$tmp/on.facts" "test-pod draco-test-metrics True True" "helm test pod (secure)"
pass "metrics.secure (default): flag, review rules, metrics-reader, https port, ServiceMonitor https with the token"

render "${SM[@]}" --set metrics.serviceMonitor.tlsConfig.serverName=draco-metrics.draco.svc \
  --set metrics.serviceMonitor.tlsConfig.ca.secret.name=draco-metrics-ca \
  --set metrics.serviceMonitor.tlsConfig.ca.secret.key=ca.crt \
  --set metrics.serviceMonitor.bearerTokenFile=/var/run/token \
  --set metrics.certSecret=draco-metrics-tls >"$tmp/cert.yaml" || fail "certSecret + tlsConfig"
facts "$tmp/cert.yaml" >"$tmp/cert.facts"
has "$tmp/cert.facts" "arg --metrics-cert-dir=/etc/draco/metrics-tls" "certSecret"
has "$tmp/cert.facts" "mount metrics-tls /etc/draco/metrics-tls True" "certSecret"
has "$tmp/cert.facts" "volume metrics-tls draco-metrics-tls" "certSecret"
has "$tmp/cert.facts" "sm https-metrics https /var/run/token {'ca': {'secret': {'key': 'ca.crt', 'name': 'draco-metrics-ca'}}, 'serverName': 'draco-metrics.draco.svc'}" \
  "tlsConfig passed through"
pass "metrics.certSecret mounts the Secret for --metrics-cert-dir; tlsConfig and bearerTokenFile pass through"

render "${SM[@]}" --set metrics.secure=false >"$tmp/off.yaml" || fail "metrics.secure=false"
facts "$tmp/off.yaml" >"$tmp/off.facts"
hasnt "$tmp/off.facts" "--metrics-secure" "metrics.secure=false"
hasnt "$tmp/off.facts" "^draco-rule" "metrics.secure=false"
hasnt "$tmp/off.facts" "^reader" "metrics.secure=false"
has "$tmp/off.facts" "service-port metrics metrics http" "metrics.secure=false"
has "$tmp/off.facts" "sm metrics http None None" "ServiceMonitor (plain)"
has "$tmp/off.facts" "test-pod None False False" "helm test pod (plain)"
if grep -q 'kind: ServiceAccount' <(render --set metrics.secure=false --show-only templates/tests/metrics-test.yaml); then
  fail "metrics.secure=false renders the test ServiceAccount"
fi
pass "metrics.secure=false: no flag, rules or reader; the ServiceMonitor scrapes http without tlsConfig"

if out=$(render "${SM[@]}" --set metrics.secure=false \
  --set metrics.serviceMonitor.tlsConfig.insecureSkipVerify=true 2>&1); then
  fail "tlsConfig with metrics.secure=false rendered"
fi
grep -q 'metrics.serviceMonitor.tlsConfig is set but metrics.secure=false' <<<"$out" ||
  fail "tlsConfig without secure: unexpected message: $out"
if out=$(render --set metrics.secure=yes 2>&1); then fail "metrics.secure=yes accepted"; fi
grep -q 'secure' <<<"$out" || fail "schema message lacks the field: $out"
pass "rejected: a tlsConfig on plain HTTP, a non-boolean metrics.secure"
