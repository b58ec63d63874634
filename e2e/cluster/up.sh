#!/usr/bin/env bash
# Starts a real Kubernetes control plane (v1.37.2, or $DRACO_K8S_VERSION: v1.34.4, v1.35.4, v1.36.3)
# on 127.0.0.1: etcd, kube-apiserver (TLS with a generated CA, token + client-certificate auth,
# RBAC, service-account keys and tokens, resource.k8s.io/v1 and the DRA gates), kube-scheduler and
# kube-controller-manager (resourceclaim-controller, node lifecycle and node taint eviction
# disabled; device taint eviction on), plus fake Ready Nodes (API objects, no kubelet), and with
# --real-nodes N real ones beside them (node-up.sh: kubelet, containerd, upstream's DRA test driver).
#
# Usage: e2e/cluster/up.sh [--nodes N] [--real-nodes N] [--workload-claims]
#                          [--resourceclaim-controller]
#   (default 2 fake nodes node-0 .. node-N-1, no real node)
# --resourceclaim-controller: kube-controller-manager runs upstream's resourceclaim controller too,
# as every managed control plane does (draco's claim lifecycle is then upstream's, issue #23); a
# running cluster in the other mode gets its kube-controller-manager restarted.
# --workload-claims (or DRACO_E2E_WORKLOAD_CLAIMS=1): the "workload-claims" profile (lib.sh): the
# Workload API and DRAWorkloadResourceClaims on kube-apiserver, kube-scheduler and KCM.
# Writes $DRACO_E2E_DIR (default /tmp/draco-e2e)/kubeconfig and .../env (source it). Idempotent:
# a healthy running cluster is left alone. Stop with e2e/cluster/down.sh.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
NODES=2
REAL_NODES=0
KCM_FLAGS=()
while (($#)); do
  case $1 in
    --nodes) NODES=$2; shift 2 ;;
    --real-nodes) REAL_NODES=$2; shift 2 ;;
    --workload-claims) export DRACO_E2E_WORKLOAD_CLAIMS=1; shift ;;
    --resourceclaim-controller) KCM_FLAGS=(--resourceclaim-controller); shift ;;
    *) die "unknown flag $1 (usage: up.sh [--nodes N] [--real-nodes N] [--workload-claims] [--resourceclaim-controller])" ;;
  esac
done
source "$here/lib.sh"  # again: the profile changes the gates
source "$here/node-lib.sh"
# A real node's host prerequisites are checked before anything starts: a miss starts nothing.
((REAL_NODES == 0)) || real_node_prereqs || exit 3

# create_nodes: applies fake Ready nodes node-0 .. node-$((NODES-1)) (no kubelet; status set on create).
create_nodes() {
  local now i
  now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  for i in $(seq 0 $((NODES - 1))); do
    cat <<NODE
apiVersion: v1
kind: Node
metadata:
  name: node-$i
  labels: {kubernetes.io/hostname: node-$i, kubernetes.io/os: linux, kubernetes.io/arch: amd64}
status:
  capacity: {cpu: "16", memory: 64Gi, pods: "110"}
  allocatable: {cpu: "16", memory: 64Gi, pods: "110"}
  conditions:
  - {type: Ready, status: "True", reason: KubeletReady, message: "fake node", lastHeartbeatTime: "$now", lastTransitionTime: "$now"}
---
NODE
  done | "$BIN/kubectl" --kubeconfig "$D/kubeconfig" apply -f - >/dev/null
}

running=$([[ -f $D/env ]] && sed -n 's/^export DRACO_K8S_VERSION="\(.*\)"$/\1/p' "$D/env" || true)
running_profile=$([[ -f $D/env ]] && sed -n 's/^export DRACO_E2E_WORKLOAD_CLAIMS="\(.*\)"$/\1/p' "$D/env" || true)
if [[ -f $D/env ]] && [[ ${running:-v1.37.2} == "${DRACO_K8S_VERSION:-v1.37.2}" ]] &&
   [[ ${running_profile:-0} == "${DRACO_E2E_WORKLOAD_CLAIMS:-0}" ]] &&
   apiserver_ready >/dev/null 2>&1; then
  BIN=$(env_bin)
  if [[ $(cat "$D/kcm-resourceclaim" 2>/dev/null || echo 0) != $((${#KCM_FLAGS[@]} > 0)) ]]; then
    "$here/restart-kcm.sh" "${KCM_FLAGS[@]}"
  fi
  create_nodes
  ((REAL_NODES == 0)) || "$here/node-up.sh" "$REAL_NODES"
  log "already running ($D/env); ensured $NODES nodes and $REAL_NODES real nodes"
  exit 0
fi
BIN=$("$here/build.sh" | tail -n1)
[[ -x $BIN/kube-apiserver ]] || die "build.sh did not produce binaries in $BIN"
"$here/down.sh" >/dev/null 2>&1 || true
mkdir -p "$D/pki" "$D/logs" "$D/pids"
chmod 700 "$D"

# --- certificates and keys ------------------------------------------------------------------
pki=$D/pki
openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=draco-e2e-ca" \
  -keyout "$pki/ca.key" -out "$pki/ca.crt" 2>/dev/null
cat >"$pki/serving.ext" <<EXT
subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,IP:10.0.0.1
extendedKeyUsage=serverAuth
EXT
openssl req -newkey rsa:2048 -nodes -subj "/CN=kube-apiserver" -keyout "$pki/apiserver.key" \
  -out "$pki/apiserver.csr" 2>/dev/null
openssl x509 -req -in "$pki/apiserver.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial \
  -days 3650 -extfile "$pki/serving.ext" -out "$pki/apiserver.crt" 2>/dev/null
echo "extendedKeyUsage=clientAuth" >"$pki/client.ext"
openssl req -newkey rsa:2048 -nodes -subj "/O=system:masters/CN=admin-cert" -keyout "$pki/admin.key" \
  -out "$pki/admin.csr" 2>/dev/null
openssl x509 -req -in "$pki/admin.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial \
  -days 3650 -extfile "$pki/client.ext" -out "$pki/admin.crt" 2>/dev/null
openssl genrsa -out "$D/sa.key" 2048 2>/dev/null
TOKEN=$(openssl rand -hex 16)
echo "$TOKEN,admin,uid-admin,system:masters" >"$D/tokens.csv"

# --- kubeconfig -----------------------------------------------------------------------------
ca_data=$(base64 -w0 <"$pki/ca.crt")
cat >"$D/kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters:
- name: draco-e2e
  cluster: {server: "https://127.0.0.1:$API_PORT", certificate-authority-data: "$ca_data"}
users:
- name: admin-token
  user: {token: "$TOKEN"}
- name: admin-cert
  user: {client-certificate: "$pki/admin.crt", client-key: "$pki/admin.key"}
contexts:
- name: draco-e2e
  context: {cluster: draco-e2e, user: admin-token}
- name: draco-e2e-cert
  context: {cluster: draco-e2e, user: admin-cert}
current-context: draco-e2e
KC
chmod 600 "$D/kubeconfig"

# --- etcd -----------------------------------------------------------------------------------
rm -rf "$ETCD_DATA"
start_etcd
wait_for etcd 60 curl -sf "http://127.0.0.1:$ETCD_PORT/health" || die "etcd did not start: $D/logs/etcd.log"

# --- kube-apiserver -------------------------------------------------------------------------
start_apiserver
wait_for kube-apiserver 180 apiserver_ready || die "kube-apiserver not ready: $D/logs/kube-apiserver.log"
K=("$BIN/kubectl" --kubeconfig "$D/kubeconfig")
wait_for "default namespace" 60 "${K[@]}" get namespace default

# --- kube-scheduler and kube-controller-manager --------------------------------------------
gates=$(supported_gates)
cat >"$D/scheduler.yaml" <<SC
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection: {kubeconfig: "$D/kubeconfig", qps: 200, burst: 400}
leaderElection: {leaderElect: false}
profiles:
- schedulerName: default-scheduler
# A constraint draco cannot see (issue #13, safety net e2e): pods with this schedulerName may not
# use nodes labelled draco-e2e/strict-excluded (NodeAffinity addedAffinity). The profile also has
# no DynamicResources PostFilter, like a scheduler that does not take back claims that block a
# pod: draco's safety net has to (the default profile keeps it and recovers by itself).
- schedulerName: draco-e2e-strict
  plugins:
    postFilter:
      disabled: [{name: DynamicResources}]
  pluginConfig:
  - name: NodeAffinity
    args:
      addedAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          nodeSelectorTerms:
          - matchExpressions: [{key: draco-e2e/strict-excluded, operator: DoesNotExist}]
SC
start_bg kube-scheduler "$BIN/kube-scheduler" --config="$D/scheduler.yaml" \
  --authentication-kubeconfig="$D/kubeconfig" --authorization-kubeconfig="$D/kubeconfig" \
  --bind-address=127.0.0.1 --secure-port=0 --feature-gates="$gates" --v=1
start_kcm "${KCM_FLAGS[@]}"

create_nodes

for c in kube-scheduler kube-controller-manager; do
  kill -0 "$(cat "$D/pids/$c.pid")" 2>/dev/null || die "$c exited: $D/logs/$c.log"
done
cat >"$D/env" <<ENV
export DRACO_E2E_DIR="$D"
export KUBECONFIG="$D/kubeconfig"
export DRACO_APISERVER="https://127.0.0.1:$API_PORT"
export DRACO_TOKEN="$TOKEN"
export DRACO_CA="$pki/ca.crt"
export DRACO_CLIENT_CERT="$pki/admin.crt"
export DRACO_CLIENT_KEY="$pki/admin.key"
export DRACO_BIN="$BIN"
export DRACO_K8S_VERSION="${DRACO_K8S_VERSION:-v1.37.2}"
export DRACO_E2E_WORKLOAD_CLAIMS="${DRACO_E2E_WORKLOAD_CLAIMS:-0}"
export PATH="$BIN:\$PATH"
ENV
((REAL_NODES == 0)) || "$here/node-up.sh" "$REAL_NODES"
log "control plane up: $("${K[@]}" version -o json | grep -m1 gitVersion | tr -d ' ,') with $NODES nodes and $REAL_NODES real nodes; source $D/env"
