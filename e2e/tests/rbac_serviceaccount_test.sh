#!/usr/bin/env bash
# The chart's RBAC suffices for draco, proven as the chart's ServiceAccount on the real API server:
# `kubectl auth can-i` allows every call draco makes and denies a list of calls it never makes;
# the calls themselves succeed with a bound token of the ServiceAccount (claims, claim status,
# pods and pods/status, events in both APIs, the leader-election Lease, reads of every informer
# resource); and, once the draco binary with `run` exists, draco run out-of-cluster with that
# token takes the Lease and becomes ready with no 403 from the API server.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/chart_lib.sh"
find_helm || fail "no helm binary in DRACO_BIN"
REL=draco-rbac
NS=draco-rbac-system
WORK=draco-rbac-work
SA=system:serviceaccount:$NS:$REL
tmp=$(mktemp -d)
draco_pid=""
cleanup() {
  [[ -n $draco_pid ]] && kill "$draco_pid" 2>/dev/null || true
  helm uninstall "$REL" -n "$NS" --wait=false >/dev/null 2>&1 || true
  drop_ns "$NS" "$WORK"
  rm -rf "$tmp"
}
trap cleanup EXIT

fresh_ns "$NS"
fresh_ns "$WORK"
helm install "$REL" "$CHART_DIR" -n "$NS" --set admission.enabled=false >/dev/null
pass "helm install $REL"

# kubectl auth can-i, one call per action, impersonating the ServiceAccount.
can_i() {
  local verb=$1 group=$2 res=$3 sub=$4 ns=$5 name=$6 args=()
  local r=$res
  [[ $group != - ]] && r=$res.$group
  [[ $name != - ]] && r=$r/$name
  [[ $sub != - ]] && args+=(--subresource="$sub")
  [[ $ns == "*" ]] && ns=$NS
  if [[ $ns == - ]]; then args+=(--all-namespaces); else args+=(-n "$ns"); fi
  kubectl auth can-i "$verb" "$r" "${args[@]}" --as="$SA" >/dev/null 2>&1
}
eventually 20 "the ClusterRole and Role are in effect" can_i list - pods - - -
n=0
while read -r -a a; do
  can_i "${a[@]}" || fail "kubectl auth can-i denies a call draco makes: ${a[*]}"
  n=$((n + 1))
done < <(required_actions)
pass "kubectl auth can-i allows all $n calls draco makes"
n=0
while read -r -a a; do
  if can_i "${a[@]}"; then fail "kubectl auth can-i allows a call draco never makes: ${a[*]}"; fi
  n=$((n + 1))
done < <(forbidden_actions)
pass "kubectl auth can-i denies all $n calls draco never makes"

# The calls themselves, with a bound token of the ServiceAccount (no impersonation).
sa_kubeconfig "$NS" "$REL" "$tmp/sa.kubeconfig"
sa() { kubectl --kubeconfig "$tmp/sa.kubeconfig" "$@"; }
token=$(sed -n 's/.*token: "\(.*\)".*/\1/p' "$tmp/sa.kubeconfig")
# sa_patch PATH TYPE BODY: one PATCH request as the ServiceAccount, as draco sends it (kubectl
# patch would first GET the status subresource, which draco never does).
sa_patch() {
  local code
  code=$(curl -sS -o "$tmp/resp" -w '%{http_code}' --cacert "$DRACO_CA" -X PATCH \
    -H "Authorization: Bearer $token" -H "Content-Type: $2" --data "$3" "$DRACO_APISERVER$1")
  [[ $code == 200 ]] || { echo "PATCH $1 -> $code: $(head -c 400 "$tmp/resp")" >&2; return 1; }
}
for r in resourceclaims.resource.k8s.io resourceclaimtemplates.resource.k8s.io pods nodes; do
  sa get "$r" -A >/dev/null 2>&1 || fail "list $r as the ServiceAccount"
done
for r in deviceclasses resourceslices devicetaintrules; do
  sa get "$r.resource.k8s.io" >/dev/null 2>&1 || fail "list $r as the ServiceAccount"
done
sa get allocationpolicies.draco.dev >/dev/null 2>&1 || fail "list allocationpolicies"
sa get --raw "/api/v1/pods?watch=1&timeoutSeconds=1" >/dev/null || fail "watch pods"
pass "the ServiceAccount lists and watches every informer resource"

sa apply --server-side --field-manager=draco -f - >/dev/null <<YAML || fail "create a claim"
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: rbac-claim, namespace: $WORK}
spec:
  devices:
    requests: [{name: dev, exactly: {deviceClassName: rbac.example.com}}]
YAML
sa patch resourceclaim -n "$WORK" rbac-claim --type=merge \
  -p '{"metadata":{"finalizers":["resource.kubernetes.io/delete-protection"]}}' >/dev/null \
  || fail "patch the claim's finalizer"
claim_status=/apis/resource.k8s.io/v1/namespaces/$WORK/resourceclaims/rbac-claim/status
sa_patch "$claim_status" application/merge-patch+json \
  '{"status":{"allocation":{"devices":{"results":[{"request":"dev","driver":"rbac.example.com","pool":"p","device":"d0"}]},"allocationTimestamp":"2026-01-01T00:00:00Z"}}}' \
  || fail "write the claim's status.allocation"
pass "the ServiceAccount creates a claim, sets its finalizer and writes status.allocation"
sa_patch "$claim_status" application/json-patch+json '[{"op":"remove","path":"/status/allocation"}]' \
  || fail "deallocate"
sa patch resourceclaim -n "$WORK" rbac-claim --type=json \
  -p '[{"op":"remove","path":"/metadata/finalizers"}]' >/dev/null || fail "drop the finalizer"
sa delete resourceclaim -n "$WORK" rbac-claim >/dev/null || fail "delete the claim"
pass "the ServiceAccount deallocates, removes the finalizer and deletes the claim"

k apply -n "$WORK" -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: rbac-pod}
spec:
  schedulingGates: [{name: draco.dev/allocation}]
  resourceClaims: [{name: dev, resourceClaimName: some-claim}]
  containers: [{name: c, image: busybox, resources: {claims: [{name: dev}]}}]
YAML
sa_patch "/api/v1/namespaces/$WORK/pods/rbac-pod/status?fieldManager=draco&force=true" \
  application/apply-patch+yaml \
  '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"rbac-pod","namespace":"'"$WORK"'"},"status":{"resourceClaimStatuses":[{"name":"dev","resourceClaimName":"some-claim"}]}}' \
  || fail "server-side apply of pods/status resourceClaimStatuses"
sa patch pod -n "$WORK" rbac-pod --type=json -p '[{"op":"remove","path":"/spec/schedulingGates/0"}]' \
  >/dev/null || fail "remove the scheduling gate"
pass "the ServiceAccount writes pod.status.resourceClaimStatuses and removes the scheduling gate"

now=$(date -u +%Y-%m-%dT%H:%M:%S.000000Z)
sa create -f - >/dev/null <<YAML || fail "create a core Event"
apiVersion: v1
kind: Event
metadata: {name: rbac-pod.core, namespace: $WORK}
involvedObject: {kind: Pod, name: rbac-pod, namespace: $WORK, apiVersion: v1}
reason: AllocationFailed
message: test
type: Warning
source: {component: draco}
count: 1
YAML
sa_patch "/api/v1/namespaces/$WORK/events/rbac-pod.core" application/strategic-merge-patch+json \
  '{"count":2}' || fail "patch a core Event"
sa create -f - >/dev/null <<YAML || fail "create an events.k8s.io Event"
apiVersion: events.k8s.io/v1
kind: Event
metadata: {name: rbac-pod.events, namespace: $WORK}
regarding: {kind: Pod, name: rbac-pod, namespace: $WORK, apiVersion: v1}
reason: AllocationFailed
action: Allocate
note: test
type: Warning
eventTime: "$now"
reportingController: draco.dev/draco
reportingInstance: draco-0
YAML
sa_patch "/apis/events.k8s.io/v1/namespaces/$WORK/events/rbac-pod.events" \
  application/merge-patch+json '{"series":{"count":2,"lastObservedTime":"'"$now"'"}}' \
  || fail "patch an events.k8s.io Event"
pass "the ServiceAccount creates and patches Events in both APIs"

sa create -f - >/dev/null <<YAML || fail "create the Lease"
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: draco, namespace: $NS}
spec: {holderIdentity: rbac-test, leaseDurationSeconds: 15}
YAML
sa get lease -n "$NS" draco >/dev/null || fail "get the Lease"
sa patch lease -n "$NS" draco --type=merge -p '{"spec":{"holderIdentity":"rbac-test-2"}}' >/dev/null 2>&1 \
  && fail "patch of the Lease is allowed but draco only needs update"
lease=$(sa get lease -n "$NS" draco -o json | sed 's/"rbac-test"/"rbac-test-2"/')
sa replace -f - <<<"$lease" >/dev/null || fail "update the Lease"
k delete lease -n "$NS" draco >/dev/null
pass "the ServiceAccount creates, gets and updates (not patches) its Lease"

if find_draco; then
  hp=$((20000 + RANDOM % 10000)); mp=$((hp + 1))
  "$DRACO" run --kubeconfig "$tmp/sa.kubeconfig" --leader-elect --leader-elect-namespace "$NS" \
    --metrics-bind-address "127.0.0.1:$mp" --health-probe-bind-address "127.0.0.1:$hp" \
    >"$tmp/draco.log" 2>&1 &
  draco_pid=$!
  eventually 60 "draco run as the ServiceAccount takes the Lease" \
    bash -c "[[ -n \$(kubectl get lease -n $NS draco -o jsonpath='{.spec.holderIdentity}') ]]"
  eventually 60 "draco run as the ServiceAccount is ready" curl -fsS "http://127.0.0.1:$hp/readyz"
  sleep 3
  if grep -qiE 'forbidden|\b403\b' "$tmp/draco.log"; then
    fail "draco logged a 403 with the chart's RBAC: $(grep -iE 'forbidden|\b403\b' "$tmp/draco.log" | head -3)"
  fi
  if curl -fsS "http://127.0.0.1:$mp/metrics" | grep -E '^rest_client_requests_total\{[^}]*code="403"' | grep -qv ' 0$'; then
    fail "draco's metrics count 403 responses"
  fi
  pass "draco run out-of-cluster with the chart's ServiceAccount token: leader, ready, no 403"
else
  echo "NOTE: no draco binary with 'run' yet; RBAC proven with kubectl auth can-i and the calls above"
fi
