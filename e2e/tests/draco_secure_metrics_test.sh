#!/usr/bin/env bash
# Secure /metrics (draco run --metrics-secure) on the real API server, as controller-runtime's
# secure metrics serving: draco runs as a ServiceAccount that may create only TokenReviews and
# SubjectAccessReviews, serves /metrics over HTTPS with its self-signed certificate, and curl
# (with ServiceAccount tokens from `kubectl create token`) sees: no token or a forged one 401, a
# ServiceAccount without get on /metrics 403, one bound to a ClusterRole with get on the
# non-resource URL /metrics 200 with the Prometheus text; plain HTTP is not served there; the
# probes stay plain HTTP without authentication; repeated scrapes make no further reviews (cached);
# and a draco that may not create SubjectAccessReviews answers 500, logs why and keeps running.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/draco_helpers.sh"
source "$(dirname "$0")/chart_lib.sh"
command -v curl >/dev/null || { echo "SKIP: curl missing" >&2; exit 77; }
NS=draco-secmetrics
tmp=$(mktemp -d)
cleanup() {
  stop_all_draco
  k delete clusterrole,clusterrolebinding -l draco-e2e=secure-metrics --ignore-not-found >/dev/null 2>&1 || true
  cleanup_ns $NS
  rm -rf "$tmp"
}
trap cleanup EXIT
on_fail() {
  local n
  for n in secure authn-only; do
    echo "--- draco-$n.log (tail)"
    tail -n 30 "$DRACO_LOGS/draco-$n.log" 2>/dev/null || true
  done
}
fresh_ns $NS

# ServiceAccounts: draco itself (reviews only), draco without SubjectAccessReviews, a reader bound
# to get on /metrics, and one with no binding.
cat <<YAML | k apply -f - >/dev/null
apiVersion: v1
kind: ServiceAccount
metadata: {name: draco, namespace: $NS}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: authn-only, namespace: $NS}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: reader, namespace: $NS}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: nobody, namespace: $NS}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: $NS-reviews, labels: {draco-e2e: secure-metrics}}
rules:
- {apiGroups: [authentication.k8s.io], resources: [tokenreviews], verbs: [create]}
- {apiGroups: [authorization.k8s.io], resources: [subjectaccessreviews], verbs: [create]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: $NS-authn-only, labels: {draco-e2e: secure-metrics}}
rules:
- {apiGroups: [authentication.k8s.io], resources: [tokenreviews], verbs: [create]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: $NS-metrics-reader, labels: {draco-e2e: secure-metrics}}
rules:
- {nonResourceURLs: [/metrics], verbs: [get]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: $NS-reviews, labels: {draco-e2e: secure-metrics}}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: $NS-reviews}
subjects: [{kind: ServiceAccount, name: draco, namespace: $NS}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: $NS-authn-only, labels: {draco-e2e: secure-metrics}}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: $NS-authn-only}
subjects: [{kind: ServiceAccount, name: authn-only, namespace: $NS}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: $NS-metrics-reader, labels: {draco-e2e: secure-metrics}}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: $NS-metrics-reader}
subjects: [{kind: ServiceAccount, name: reader, namespace: $NS}]
YAML
reader=$(k create token reader -n $NS --duration=10m)
nobody=$(k create token nobody -n $NS --duration=10m)
eventually 20 "RBAC in effect: the reader may get /metrics, nobody may not" \
  bash -c "[[ \$(kubectl auth can-i get /metrics --as=system:serviceaccount:$NS:reader) == yes &&
    \$(kubectl auth can-i get /metrics --as=system:serviceaccount:$NS:nobody) == no ]]"

# draco as its ServiceAccount: it may list nothing (its informers are refused and retry), which
# does not stop it from serving /metrics.
sa_kubeconfig $NS draco "$tmp/draco.kubeconfig"
start_draco secure --kubeconfig "$tmp/draco.kubeconfig" --metrics-secure --leader-elect=false
port=${DRACO_PORTS[secure]}
url=https://127.0.0.1:$port/metrics
# code [curl args...]: the HTTP status of GET $url (000: no HTTP answer).
code() { curl -sk -o /dev/null -w '%{http_code}' --max-time 10 "$@" "$url" || true; }
eventually 30 "draco serves https on its metrics port" bash -c "[[ \$(curl -sk -o /dev/null -w '%{http_code}' '$url') == 401 ]]"

[[ $(code) == 401 ]] || fail "no token: $(code), want 401"
[[ $(code -H "Authorization: Bearer forged.token.value") == 401 ]] || fail "forged token: want 401"
pass "no token and a forged token: 401"
got=$(code -H "Authorization: Bearer $nobody")
[[ $got == 403 ]] || fail "ServiceAccount without get on /metrics: $got, want 403"
body=$(curl -sk --max-time 10 -H "Authorization: Bearer $nobody" "$url")
grep -q "Authorization denied for user system:serviceaccount:$NS:nobody" <<<"$body" ||
  fail "403 body: $body"
pass "ServiceAccount without get on /metrics: 403 ($body)"
curl -sk --max-time 10 -D "$tmp/headers" -H "Authorization: Bearer $reader" "$url" >"$tmp/metrics" ||
  fail "scrape as the reader failed"
head -n1 "$tmp/headers" | grep -q ' 200' || fail "reader: $(head -n1 "$tmp/headers"), want 200"
grep -qi '^content-type: text/plain; version=0.0.4' "$tmp/headers" || fail "content type: $(cat "$tmp/headers")"
grep -q '^# TYPE draco_allocation_attempts_total counter' "$tmp/metrics" ||
  fail "the reader's 200 is not draco's Prometheus text: $(head -c 300 "$tmp/metrics")"
pass "ServiceAccount bound to get on /metrics: 200 with the Prometheus text ($(grep -c '^# TYPE' "$tmp/metrics") families)"

# TLS only on that port; the probes stay plain HTTP and open.
plain=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://127.0.0.1:$port/metrics" || true)
[[ $plain != 200 ]] || fail "plain HTTP served /metrics on the secure port"
subject=$(openssl s_client -connect 127.0.0.1:$port -servername localhost </dev/null 2>/dev/null |
  openssl x509 -noout -ext subjectAltName 2>/dev/null | tr -d ' \n' || true)
[[ $subject == *DNS:localhost* && $subject == *IPAddress:127.0.0.1* ]] ||
  fail "self-signed certificate SANs: '$subject'"
[[ $(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$((port + 1))/healthz") == 200 ]] ||
  fail "/healthz is not plain HTTP without authentication"
pass "HTTPS only on the metrics port (self-signed: $subject); /healthz plain and open"

# Cached decisions: more scrapes make no TokenReview or SubjectAccessReview (draco's POSTs).
posts() {
  curl -sk --max-time 10 -H "Authorization: Bearer $reader" "$url" |
    awk '/^rest_client_requests_total/ && /method="POST"/ {s += $2} END {print s + 0}'
}
before=$(posts)
for _ in 1 2 3 4 5; do [[ $(code -H "Authorization: Bearer $reader") == 200 ]] || fail "scrape"; done
after=$(posts)
((before >= 2)) || fail "draco counted $before POSTs for the first reviews, want >= 2"
[[ $after == "$before" ]] || fail "scrapes made reviews: POSTs $before -> $after"
pass "7 more scrapes, no more reviews (POSTs stay $before: decisions cached)"

# A draco that may not create SubjectAccessReviews: 500, a log line, and it keeps serving.
sa_kubeconfig $NS authn-only "$tmp/authn-only.kubeconfig"
start_draco authn-only --kubeconfig "$tmp/authn-only.kubeconfig" --metrics-secure --leader-elect=false
url=https://127.0.0.1:${DRACO_PORTS[authn-only]}/metrics
eventually 30 "the second draco serves https" bash -c "[[ \$(curl -sk -o /dev/null -w '%{http_code}' '$url') == 401 ]]"
got=$(code -H "Authorization: Bearer $reader")
[[ $got == 500 ]] || fail "SubjectAccessReview refused to draco: $got, want 500"
grep -q "authorization for user system:serviceaccount:$NS:reader failed" "$DRACO_LOGS/draco-authn-only.log" ||
  fail "no log line for the failed SubjectAccessReview"
[[ $(code) == 401 ]] || fail "draco stopped answering after the API error"
kill -0 "${DRACO_PIDS[authn-only]}" || fail "draco exited after the API error"
pass "SubjectAccessReview refused: 500, logged ($(grep -m1 -o 'SubjectAccessReview: .*' "$DRACO_LOGS/draco-authn-only.log" | cut -c1-80)), still serving"
