#!/usr/bin/env bash
# The chart's RBAC suffices for draco, proven as the chart's ServiceAccount on the real API server:
# `kubectl auth can-i` allows every call draco makes and denies a list of calls it never makes;
# the calls themselves, sent exactly as draco sends them (POST/PUT/PUT status/DELETE of claims,
# live GET, JSON patch and server-side apply of pods, core Events, the Lease, list and watch of
# every informer resource), succeed with a bound token of the ServiceAccount; and draco run
# out-of-cluster with that token takes the Lease, becomes ready, allocates a real pod's claim and
# releases the pod with no 403 from the API server.
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

# kubectl auth can-i, one call per action, impersonating the ServiceAccount. kubectl resolves the
# resource through discovery; for an API the server does not serve (scheduling.k8s.io PodGroups
# without the workload-claims profile) it would check a core resource literally named
# "podgroups.scheduling.k8s.io", so those actions go to a SubjectAccessReview (can_batch) with
# the exact group instead.
served=$(kubectl api-resources -o name 2>/dev/null)
can_i() {
  local verb=$1 group=$2 res=$3 sub=$4 ns=$5 name=$6 args=()
  local r=$res
  [[ $group != - ]] && r=$res.$group
  if ! grep -qxF "$r" <<<"$served"; then
    [[ $(printf '%s\n' "$*" | can_batch "$SA" "$NS") == yes\ * ]]
    return
  fi
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
for r in resourceclaims.resource.k8s.io resourceclaimtemplates.resource.k8s.io pods nodes; do
  sa get "$r" -A >/dev/null 2>&1 || fail "list $r as the ServiceAccount"
done
for r in deviceclasses resourceslices devicetaintrules; do
  sa get "$r.resource.k8s.io" >/dev/null 2>&1 || fail "list $r as the ServiceAccount"
done
sa get allocationpolicies.draco.dev >/dev/null 2>&1 || fail "list allocationpolicies"
# draco watches PodGroups whenever the server serves them (the workload-claims profile; test.sh
# runs this test there too), with or without the DRAWorkloadResourceClaims gate.
if grep -qxF podgroups.scheduling.k8s.io <<<"$served"; then
  sa get podgroups.scheduling.k8s.io -A >/dev/null 2>&1 || fail "list podgroups as the ServiceAccount"
  sa get --raw "/apis/scheduling.k8s.io/v1beta1/podgroups?watch=1&timeoutSeconds=1" >/dev/null ||
    fail "watch podgroups as the ServiceAccount"
  echo "  (the server serves PodGroups: listed and watched too)"
fi
sa get --raw "/api/v1/pods?watch=1&timeoutSeconds=1" >/dev/null || fail "watch pods"
pass "the ServiceAccount lists and watches every informer resource"

# sa_req METHOD PATH TYPE BODY: one request as the ServiceAccount, exactly as draco sends it.
sa_req() {
  local code
  code=$(curl -sS -o "$tmp/resp" -w '%{http_code}' --cacert "$DRACO_CA" -X "$1" \
    -H "Authorization: Bearer $token" -H "Content-Type: $3" --data "$4" "$DRACO_APISERVER$2")
  [[ $code == 200 || $code == 201 ]] || { echo "$1 $2 -> $code: $(head -c 400 "$tmp/resp")" >&2; return 1; }
}
# edit_json EXPR: applies a python expression to the JSON object `o` read from $tmp/resp.
edit_json() { python3 -c "import json,sys; o=json.load(open('$tmp/resp')); $1; print(json.dumps(o))"; }
claims=/apis/resource.k8s.io/v1/namespaces/$WORK/resourceclaims
sa_req POST "$claims" application/json '{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"rbac-claim"},"spec":{"devices":{"requests":[{"name":"dev","exactly":{"deviceClassName":"rbac.example.com"}}]}}}' \
  || fail "create a claim (POST)"
body=$(edit_json 'o["metadata"].setdefault("finalizers",[]).append("resource.kubernetes.io/delete-protection")')
sa_req PUT "$claims/rbac-claim" application/json "$body" || fail "set the claim's finalizer (PUT)"
body=$(edit_json 'o["status"]={"allocation":{"devices":{"results":[{"request":"dev","driver":"rbac.example.com","pool":"p","device":"d0"}]},"allocationTimestamp":"2026-01-01T00:00:00Z"}}')
sa_req PUT "$claims/rbac-claim/status" application/json "$body" || fail "write status.allocation (PUT status)"
pass "the ServiceAccount creates a claim, sets its finalizer and writes status.allocation (POST, PUT, PUT status)"
body=$(edit_json 'o["status"].pop("allocation")')
sa_req PUT "$claims/rbac-claim/status" application/json "$body" || fail "deallocate (PUT status)"
body=$(edit_json 'o["metadata"].pop("finalizers")')
sa_req PUT "$claims/rbac-claim" application/json "$body" || fail "drop the finalizer (PUT)"
uid=$(python3 -c "import json; print(json.load(open('$tmp/resp'))['metadata']['uid'])")
sa_req DELETE "$claims/rbac-claim" application/json "{\"preconditions\":{\"uid\":\"$uid\"}}" \
  || fail "delete the claim (DELETE with a UID precondition)"
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
sa_req GET "/api/v1/namespaces/$WORK/pods/rbac-pod" application/json "" || fail "live GET of a pod"
sa_req PATCH "/api/v1/namespaces/$WORK/pods/rbac-pod/status?fieldManager=draco&force=true" \
  application/apply-patch+yaml \
  '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"rbac-pod","namespace":"'"$WORK"'"},"status":{"resourceClaimStatuses":[{"name":"dev","resourceClaimName":"some-claim"}]}}' \
  || fail "server-side apply of pods/status resourceClaimStatuses"
sa_req PATCH "/api/v1/namespaces/$WORK/pods/rbac-pod" application/json-patch+json \
  '[{"op":"test","path":"/spec/schedulingGates/0/name","value":"draco.dev/allocation"},{"op":"remove","path":"/spec/schedulingGates/0"}]' \
  || fail "remove the scheduling gate (JSON patch)"
pass "the ServiceAccount reads a pod live, applies pod.status.resourceClaimStatuses and removes the scheduling gate"

now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
sa_req POST "/api/v1/namespaces/$WORK/events" application/json '{"apiVersion":"v1","kind":"Event","metadata":{"name":"rbac-pod.core"},"involvedObject":{"kind":"Pod","name":"rbac-pod","namespace":"'"$WORK"'","apiVersion":"v1"},"reason":"AllocationFailed","message":"test","type":"Warning","source":{"component":"draco"},"count":1,"firstTimestamp":"'"$now"'","lastTimestamp":"'"$now"'"}' \
  || fail "create a core Event"
pass "the ServiceAccount creates core Events"

sa create -f - >/dev/null <<YAML || fail "create the Lease"
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: draco, namespace: $NS}
spec: {holderIdentity: rbac-test, leaseDurationSeconds: 15}
YAML
sa get lease -n "$NS" draco >/dev/null || fail "get the Lease"
# The leader records the claim lifecycle's owner in the Lease's annotations (a merge patch).
sa patch lease -n "$NS" draco --type=merge \
  -p '{"metadata":{"annotations":{"draco.dev/claim-lifecycle":"draco"}}}' >/dev/null ||
  fail "patch the Lease's annotations (the claim lifecycle record)"
lease=$(sa get lease -n "$NS" draco -o json | sed 's/"rbac-test"/"rbac-test-2"/')
sa replace -f - <<<"$lease" >/dev/null || fail "update the Lease"
k delete lease -n "$NS" draco >/dev/null
pass "the ServiceAccount creates, gets, updates and patches (annotations) its Lease"

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
  pass "draco run out-of-cluster with the chart's ServiceAccount token: leader and ready"
  # A real allocation as the ServiceAccount: template -> claim -> allocation -> gate removed -> bound.
  node=$(k get nodes -o jsonpath='{.items[0].metadata.name}')
  drv=rbac-sa.draco.dev
  k apply -f - >/dev/null <<YAML
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: $drv}
spec:
  selectors: [{cel: {expression: 'device.driver == "$drv"'}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: $node-$drv}
spec:
  driver: $drv
  nodeName: $node
  pool: {name: $node, generation: 1, resourceSliceCount: 1}
  devices: [{name: dev-0}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one, namespace: $WORK}
spec:
  spec:
    devices:
      requests: [{name: dev, exactly: {deviceClassName: $drv}}]
---
apiVersion: v1
kind: Pod
metadata: {name: rbac-ml, namespace: $WORK}
spec:
  schedulingGates: [{name: draco.dev/allocation}]
  resourceClaims: [{name: dev, resourceClaimTemplateName: one}]
  containers: [{name: c, image: registry.invalid/ml:1, resources: {claims: [{name: dev}]}}]
YAML
  eventually 60 "draco (as the ServiceAccount) allocates the pod's claim and kube-scheduler binds the pod" \
    bash -c "[[ \$(kubectl get pod -n $WORK rbac-ml -o jsonpath='{.spec.nodeName}') == $node ]]"
  claim=$(k get pod -n "$WORK" rbac-ml -o jsonpath='{.status.resourceClaimStatuses[0].resourceClaimName}')
  [[ $(k get resourceclaim -n "$WORK" "$claim" -o jsonpath='{.status.allocation.devices.results[0].device}') == dev-0 ]] \
    || fail "the generated claim is not allocated dev-0"
  k delete pod -n "$WORK" rbac-ml --grace-period=0 --force --wait=false >/dev/null 2>&1  # no kubelet
  eventually 60 "draco (as the ServiceAccount) deletes the generated claim of the deleted pod" \
    bash -c "! kubectl get resourceclaim -n $WORK $claim >/dev/null 2>&1"
  k delete deviceclass "$drv" >/dev/null; k delete resourceslice "$node-$drv" >/dev/null
  if grep -qiE 'forbidden|\b403\b' "$tmp/draco.log"; then
    fail "draco logged a 403 with the chart's RBAC: $(grep -iE 'forbidden|\b403\b' "$tmp/draco.log" | head -3)"
  fi
  if curl -fsS "http://127.0.0.1:$mp/metrics" | grep -E '^rest_client_requests_total\{[^}]*code="403"' | grep -qv ' 0$'; then
    fail "draco's metrics count 403 responses"
  fi
  pass "draco run with the chart's ServiceAccount token: allocation, gate removal, cleanup, no 403"
else
  fail "no draco binary with 'run' (build target draco or set DRACO_TEST_BINARY)"
fi
