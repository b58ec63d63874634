#!/usr/bin/env bash
# Foundation smoke test: the local control plane serves resource.k8s.io/v1, accepts DRA objects,
# kube-scheduler binds a plain pod to a fake node, and (upstream behaviour, no draco yet) allocates
# a standalone claim for a pod and binds it to the node that has the device.
source "$(dirname "$0")/lib.sh"

want=${DRACO_K8S_VERSION:-v1.37.2}
v=$(k version -o json | grep -A8 serverVersion | grep -m1 gitVersion | cut -d'"' -f4)
[[ $v == "$want" ]] || fail "server reports $v, want $want (the control plane's DRACO_K8S_VERSION)"
pass "server version $v"

# DeviceTaintRule is GA (resource.k8s.io/v1) from 1.37 on; earlier versions serve it in
# v1alpha3 (1.34, 1.35) or v1beta2 (1.36) only, which e2e/cluster/up.sh turns on.
minor=$(cut -d. -f2 <<<"$v")
dra=(deviceclasses resourceclaims resourceclaimtemplates resourceslices)
((minor >= 37)) && dra+=(devicetaintrules)
res=$(k get --raw /apis/resource.k8s.io/v1)
for r in "${dra[@]}"; do
  grep -q "\"name\":\"$r\"" <<<"$res" || fail "resource.k8s.io/v1 does not serve $r"
done
pass "resource.k8s.io/v1 serves ${dra[*]}"

# Read the whole list before matching: grep -q stops at the first match, and kubectl writing the
# rest into the closed pipe fails the pipeline (pipefail) once there are more than a few nodes.
ready=$(k get nodes -o jsonpath='{range .items[*]}{.metadata.name}={.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}')
grep -qx "node-0=True" <<<"$ready" || fail "node-0 missing or not Ready: $ready"
pass "fake node-0 is Ready"

trap 'k delete -f "$E2E_ROOT/samples/smoke.yaml" --grace-period=0 --force --wait=false >/dev/null 2>&1 || true' EXIT
k apply -f "$E2E_ROOT/samples/smoke.yaml" >/dev/null
pass "created DeviceClass, ResourceSlice, ResourceClaim and pods"

eventually 60 "kube-scheduler binds the plain pod" \
  bash -c "[[ -n \$(kubectl get pod smoke-plain -o jsonpath='{.spec.nodeName}') ]]"
eventually 60 "kube-scheduler allocates the claim and binds the DRA pod to node-0" \
  bash -c "[[ \$(kubectl get pod smoke-dra -o jsonpath='{.spec.nodeName}') == node-0 ]]"
dev=$(k get resourceclaim smoke-claim -o jsonpath='{.status.allocation.devices.results[0].device}')
[[ $dev == gpu-0 || $dev == gpu-1 ]] || fail "claim allocated device '$dev'"
pass "claim allocated $dev of the ResourceSlice"
