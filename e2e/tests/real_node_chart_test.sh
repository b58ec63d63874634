#!/usr/bin/env bash
# draco as its chart installs it, on a real node (e2e/cluster/up.sh --real-nodes 1; needs root):
#  1. the image is built from the repository's Dockerfile (images/draco-image.sh: buildah on a
#     debootstrap base, the host-built binary through the Dockerfile's prebuilt stage) and loaded
#     into the node's containerd under the chart's default name (draco:<appVersion>);
#  2. `helm install` with default values runs draco as a Deployment on the real node: Ready
#     (probes), holding its Lease (leader election), its admission gate gating new pods (RBAC for
#     all of it is the chart's own), and pods go through it to Running with their devices;
#  3. `helm upgrade` to a new image tag rolls draco over while pods keep coming: no pod lost, no
#     device in two claims at any sampled moment, the new pod leads;
#  4. `helm uninstall`: a pod still gated stays gated (nobody removes the gate: the guide's
#     "draco is down or uninstalled while pods are gated"), and with kube-controller-manager's
#     resourceclaim controller turned back on (the guide's uninstall step) new pods are
#     schedulable and run, and the guide's one-liner releases the gated pod, which then runs too.
# For the test the real node is the only schedulable one: the fake nodes are cordoned and the
# real node's test taint lifted (both restored at the end).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/draco_helpers.sh"
source "$(dirname "$0")/real_node_lib.sh"
source "$(dirname "$0")/chart_lib.sh"
find_helm || fail "no helm binary in DRACO_BIN"
((EUID == 0)) || { echo "SKIP: building and loading the image needs root" >&2; exit 77; }
REL=draco
NS=draco-system
WL=draco-real-chart
CLS=real-chart.draco.dev
VERSION=$(sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\} *$/\1/p' "$CHART_DIR/Chart.yaml")
fakes=$(k get nodes -l '!draco-e2e/real-node' -o name)
on_fail() {
  real_node_on_fail $WL
  k get pods -n $NS -o wide
  k describe pods -n $NS | tail -n 30
  for p in $(k get pods -n $NS -o name); do k logs -n $NS "$p" --tail=15; done
}
cleanup() {
  helm uninstall $REL -n $NS --wait --timeout 60s >/dev/null 2>&1 || true
  k delete clusterrolebinding $NS-metrics-reader --ignore-not-found >/dev/null 2>&1 || true
  "$CLUSTER/restart-kcm.sh" >/dev/null 2>&1 || true
  cleanup_ns $WL
  drop_ns $NS
  k delete deviceclass $CLS --ignore-not-found >/dev/null 2>&1 || true
  for n in $fakes; do k uncordon "${n#node/}" >/dev/null 2>&1 || true; done
  k taint node "$REAL_NODE" draco-e2e/real-node=true:NoSchedule --overwrite >/dev/null 2>&1 || true
}
trap cleanup EXIT

# --- 1. the image -------------------------------------------------------------------------------
bin=${DRACO_BUILD_DIR:-$E2E_ROOT/../build}/controller/draco
for tag in "$VERSION" "$VERSION-rollover"; do
  # The version label differs, so the two tags are two images (two image IDs on the node).
  archive=$(DRACO_VERSION=$tag "$E2E_ROOT/cluster/images/draco-image.sh" --tag "$tag" --binary "$bin" 2>"$DRACO_LOGS/draco-image-$tag.log" | tail -n1) ||
    fail "building the image failed: $(tail -n 5 "$DRACO_LOGS/draco-image-$tag.log")"
  "$CLUSTER/load-image.sh" "$archive" >/dev/null 2>&1 || fail "could not load $archive"
done
pass "built draco:$VERSION and draco:$VERSION-rollover from the Dockerfile and loaded them into $REAL_NODE"

for n in $fakes; do k cordon "${n#node/}" >/dev/null; done
k taint node "$REAL_NODE" draco-e2e/real-node- >/dev/null 2>&1 || true
pass "only $REAL_NODE is schedulable"

# --- 2. helm install with default values --------------------------------------------------------
fresh_ns $WL
real_class $CLS
real_template $WL one $CLS | k apply -f - >/dev/null
helm install $REL "$CHART_DIR" -n $NS --create-namespace --wait --timeout 180s >/dev/null ||
  fail "helm install with default values did not become ready"
pod=$(k get pods -n $NS -l app.kubernetes.io/name=draco -o jsonpath='{.items[0].metadata.name}')
[[ $(k get pod -n $NS "$pod" -o jsonpath='{.spec.nodeName}') == "$REAL_NODE" ]] || fail "$pod is not on $REAL_NODE"
[[ $(k get pod -n $NS "$pod" -o jsonpath='{.status.containerStatuses[0].image}') == *"draco:$VERSION" ]] ||
  fail "$pod runs $(k get pod -n $NS "$pod" -o jsonpath='{.status.containerStatuses[0].image}')"
pass "helm install: $pod runs the image on $REAL_NODE and is Ready"
holder() { k get lease -n $NS -o jsonpath='{range .items[*]}{.spec.holderIdentity}{"\n"}{end}' | grep -v '^$' | head -n1; }
leads() { [[ $(holder) == "$1"* ]]; }
eventually 60 "$pod holds draco's Lease" leads "$pod"
# metrics.secure (the default): the pod serves /metrics over HTTPS, to nobody without a token,
# not to a ServiceAccount without the permission, and to it once bound to <fullname>-metrics-reader
# (denials are cached for 30 s).
murl=https://$(k get pod -n $NS "$pod" -o jsonpath='{.status.podIP}'):8080/metrics
token=$(k create token default -n $NS --duration=10m)
mcode() { curl -sk -o /dev/null -w '%{http_code}' --max-time 10 "$@" "$murl" || true; }
[[ $(mcode) == 401 ]] || fail "/metrics without a token: $(mcode), want 401"
[[ $(mcode -H "Authorization: Bearer $token") == 403 ]] || fail "/metrics, unbound ServiceAccount: want 403"
k create clusterrolebinding $NS-metrics-reader --clusterrole=$REL-metrics-reader \
  --serviceaccount=$NS:default >/dev/null
eventually 45 "metrics.secure: 401 without a token, 403 unbound, 200 bound to $REL-metrics-reader" \
  bash -c "curl -sfk --max-time 10 -H 'Authorization: Bearer $token' '$murl' | grep -q '^# TYPE draco_'"
old_image_id=$(k get pod -n $NS "$pod" -o jsonpath='{.status.containerStatuses[0].imageID}')

# A pod stream: NAME-1..N, one device each, each exits after ARG seconds (restartPolicy Never). No
# gate in the manifests: the chart's admission gate adds it.
stream_pod() {
  {
    cat <<YAML
---
apiVersion: v1
kind: Pod
metadata: {name: $1, namespace: $WL}
spec:
  terminationGracePeriodSeconds: 2
  restartPolicy: Never
  resourceClaims: [{name: gpu, resourceClaimTemplateName: one}]
  containers:
YAML
    real_container main gpu -- "[\"$2\"]"
  } | k apply -f - >/dev/null
}
gated() { [[ $(k get pod -n $WL "$1" -o jsonpath='{.spec.schedulingGates[*].name}') == *draco.dev/allocation* ]]; }
stream_pod first 1
k get pod -n $WL first -o jsonpath='{.metadata.annotations}' >/dev/null
eventually 90 "a pod goes through the installed draco to completion" succeeded $WL first
[[ $(kubectl logs -n $WL first | grep -c '^dra-device: ') == 1 ]] || fail "first saw no device"
pass "first saw its device"
stream_pod probe 30
gated probe || [[ -n $(k get pod -n $WL probe -o jsonpath='{.spec.nodeName}') ]] || fail "probe neither gated nor bound"
[[ $(k get pod -n $WL probe -o jsonpath='{.metadata.managedFields[*].manager}') == *draco* ]] ||
  fail "draco never wrote probe (the chart's gate did not route it through draco)"
pass "the chart's admission gate routes new pods through draco"
k delete pod -n $WL probe --wait=false >/dev/null

# --- 3. helm upgrade to a new image tag while pods keep coming ----------------------------------
dups=$DRACO_LOGS/real-chart-dups.txt
: >"$dups"
( while true; do
    k get resourceclaims -A -o jsonpath='{range .items[*]}{range .status.allocation.devices.results[*]}{.driver}/{.pool}/{.device}{"\n"}{end}{end}' 2>/dev/null |
      sort | uniq -d >>"$dups"
    sleep 0.5
  done ) &
sampler=$!
( for i in $(seq 1 12); do stream_pod "roll-$i" 3; sleep 1; done ) &
feeder=$!
sleep 2
helm upgrade $REL "$CHART_DIR" -n $NS --reuse-values --set image.tag="$VERSION-rollover" --wait --timeout 180s >/dev/null ||
  fail "helm upgrade did not become ready"
wait $feeder
one_draco() { [[ $(k get pods -n $NS -l app.kubernetes.io/name=draco -o name | grep -c .) == 1 ]]; }
eventually 60 "the old draco pod is gone" one_draco
new=$(k get pods -n $NS -l app.kubernetes.io/name=draco -o jsonpath='{.items[0].metadata.name}')
[[ $new != "$pod" ]] || fail "the upgrade left $pod in place"
[[ $(k get pod -n $NS "$new" -o jsonpath='{.spec.containers[0].image}') == "draco:$VERSION-rollover" ]] ||
  fail "$new has image $(k get pod -n $NS "$new" -o jsonpath='{.spec.containers[0].image}')"
[[ $(k get pod -n $NS "$new" -o jsonpath='{.status.containerStatuses[0].imageID}') != "$old_image_id" ]] ||
  fail "$new runs the old image $old_image_id"
eventually 60 "the new draco ($new) holds the Lease" leads "$new"
for i in $(seq 1 12); do eventually 120 "roll-$i (created during the upgrade) completes" succeeded $WL "roll-$i"; done
kill $sampler 2>/dev/null || true
wait $sampler 2>/dev/null || true
[[ ! -s $dups ]] || fail "devices in two claims during the upgrade: $(sort -u "$dups" | tr '\n' ' ')"
pass "no device was in two claims at any sampled moment of the upgrade"
for i in $(seq 1 12); do
  [[ $(kubectl logs -n $WL "roll-$i" | grep -c '^dra-device: ') == 1 ]] || fail "roll-$i saw no device"
done
pass "all 12 pods created during the rollover ran with their device"
kubelet_accepted_all

# --- 4. helm uninstall -------------------------------------------------------------------------
real_template $WL all $CLS gpus All | k apply -f - >/dev/null
{
  real_pod $WL blocker Never | grep -v -e schedulingGates -e nodeSelector -e tolerations
  echo "  resourceClaims: [{name: gpus, resourceClaimTemplateName: all}]"
  echo "  containers:"
  real_container main gpus -- '["20"]'
} | k apply -f - >/dev/null
eventually 90 "blocker holds every device of $REAL_NODE" running $WL blocker
stream_pod stranded 2
eventually 30 "stranded waits in draco's gate (no device free)" gated stranded
helm uninstall $REL -n $NS --wait --timeout 120s >/dev/null || fail "helm uninstall failed"
pass "helm uninstall"
"$CLUSTER/restart-kcm.sh" --resourceclaim-controller >/dev/null 2>&1 || fail "could not restart kube-controller-manager"
pass "kube-controller-manager runs its resourceclaim controller again (the guide's uninstall step)"
eventually 90 "blocker completes" succeeded $WL blocker
sleep 10
gated stranded || fail "stranded lost its gate without draco"
[[ $(phase $WL stranded) == Pending ]] || fail "stranded is $(phase $WL stranded)"
pass "a pod gated at uninstall stays gated: nobody but draco removes the gate"
stream_pod after 2
gated after && fail "a pod created after the uninstall was gated"
eventually 120 "a pod created after the uninstall is scheduled by kube-scheduler alone and runs" succeeded $WL after
k patch pod -n $WL stranded --type=json -p '[{"op":"remove","path":"/spec/schedulingGates/0"}]' >/dev/null
eventually 120 "released with the guide's patch, stranded runs" succeeded $WL stranded
no_double_allocation
kubelet_accepted_all
