# Shared settings for the local control-plane scripts (sourced, not run).
# Everything listens on 127.0.0.1 only. Override ports/dirs through the environment.
D=${DRACO_E2E_DIR:-/tmp/draco-e2e}
ETCD_PORT=${DRACO_ETCD_PORT:-23790}
ETCD_PEER_PORT=${DRACO_ETCD_PEER_PORT:-23800}
API_PORT=${DRACO_API_PORT:-16443}
ETCD_DATA=${DRACO_ETCD_DATA:-/dev/shm/draco-e2e-etcd-$API_PORT}
# One gate string for all three components (upstream drops fields of disabled gates on write).
FEATURE_GATES=${DRACO_FEATURE_GATES:-DRAPrioritizedList=true,DRAPartitionableDevices=true,DRAConsumableCapacity=true,DRADeviceTaints=true,DRADeviceTaintRules=true,DRADeviceBindingConditions=true,DRAResourceClaimDeviceStatus=true,DRAAdminAccess=true}
# DRACO_EXTRA_FEATURE_GATES (A=true,...) are added to those, and DRACO_RUNTIME_CONFIG
# (group/version=true,...) to kube-apiserver's --runtime-config: e.g. MutatingAdmissionPolicy=true
# and admissionregistration.k8s.io/v1beta1=true serve the policy's beta API on 1.34 and 1.35.
[[ -n ${DRACO_EXTRA_FEATURE_GATES:-} ]] && FEATURE_GATES+=",$DRACO_EXTRA_FEATURE_GATES"
# Profile "workload-claims" (up.sh --workload-claims, or DRACO_E2E_WORKLOAD_CLAIMS=1): PodGroup
# claims (KEP-5729, beta and off by default in 1.37) on all three components: the Workload API
# (GenericWorkload, scheduling.k8s.io/v1beta1 served) and DRAWorkloadResourceClaims.
if [[ ${DRACO_E2E_WORKLOAD_CLAIMS:-} == 1 ]]; then
  FEATURE_GATES+=",GenericWorkload=true,DRAWorkloadResourceClaims=true"
fi

# supported_gates: $FEATURE_GATES without the gates this version's kube-apiserver does not list in
# --help (older versions refuse unknown gates; gates locked to their default are not listed and
# are on anyway). Needs $BIN.
supported_gates() {
  local help g out=()
  help=$("$BIN/kube-apiserver" --help 2>&1 | grep -oE '(kube:)?[A-Za-z0-9]+=true\|false' | sed 's/^kube://')
  IFS=, read -ra gs <<<"$FEATURE_GATES"
  for g in "${gs[@]}"; do
    grep -qx "${g%%=*}=true|false" <<<"$help" && out+=("$g")
  done
  (IFS=,; echo "${out[*]}")
}

log() { echo "[cluster] $*" >&2; }
# env_bin: the bin directory the running control plane was started from (its env file).
env_bin() { [[ -f $D/env ]] && sed -n 's/^export DRACO_BIN="\(.*\)"$/\1/p' "$D/env"; }
die() { echo "[cluster] ERROR: $*" >&2; exit 1; }

# start_bg NAME CMD...: runs CMD detached, logs to $D/logs/NAME.log, pid in $D/pids/NAME.pid.
start_bg() {
  local name=$1; shift
  mkdir -p "$D/logs" "$D/pids"
  setsid "$@" >"$D/logs/$name.log" 2>&1 < /dev/null &
  echo $! >"$D/pids/$name.pid"
}

# stop_bg NAME: TERM, wait up to 10 s, then KILL.
stop_bg() {
  local f="$D/pids/$1.pid" pid
  [[ -f $f ]] || return 0
  pid=$(cat "$f")
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$f"
}

# wait_for DESC SECONDS CMD...: polls CMD every 0.5 s.
wait_for() {
  local desc=$1 secs=$2; shift 2
  local end=$((SECONDS + secs))
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < end)) || return 1
    sleep 0.5
  done
  log "$desc ready"
}

# start_etcd: etcd on $ETCD_PORT with its data in $ETCD_DATA (kept, so that a restart resumes).
start_etcd() {
  start_bg etcd "$BIN/etcd" --name draco-e2e --data-dir "$ETCD_DATA" \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster "draco-e2e=http://127.0.0.1:$ETCD_PEER_PORT" \
    --unsafe-no-fsync --log-level=warn --quota-backend-bytes=4294967296
}

# start_apiserver: with DRACO_AUDIT_POLICY=FILE (an audit.k8s.io/v1 Policy), kube-apiserver also
# writes a JSON audit log to $D/logs/audit.log (blocking mode: an entry is on disk before the
# response is sent), for tests that check from the server's side when writes landed.
# runtime_config: API versions a version serves only when asked. Kubernetes 1.34 and 1.35 serve
# DeviceTaintRule in resource.k8s.io/v1alpha3 only (off by default), and their kube-scheduler with
# DRADeviceTaints (1.34) or DRADeviceTaintRules (1.35) on waits for that informer forever when it is
# off (no pod is ever scheduled). Kubernetes 1.36's kube-scheduler reads them from
# resource.k8s.io/v1beta2 (beta, off by default); 1.37 serves them in v1.
runtime_config() {
  local rc=${DRACO_RUNTIME_CONFIG:-}
  case ${DRACO_K8S_VERSION:-v1.37.2} in
    v1.34.* | v1.35.*) rc=resource.k8s.io/v1alpha3=true${rc:+,$rc} ;;
    v1.36.*) rc=resource.k8s.io/v1beta2=true${rc:+,$rc} ;;
  esac
  [[ ${DRACO_E2E_WORKLOAD_CLAIMS:-} == 1 ]] && rc=${rc:+$rc,}scheduling.k8s.io/v1beta1=true
  [[ -z $rc ]] || echo "--runtime-config=$rc"
}

start_apiserver() {
  local audit=()
  if [[ -n ${DRACO_AUDIT_POLICY:-} ]]; then
    [[ -f $DRACO_AUDIT_POLICY ]] || die "DRACO_AUDIT_POLICY: no file $DRACO_AUDIT_POLICY"
    audit=(--audit-policy-file="$DRACO_AUDIT_POLICY" --audit-log-path="$D/logs/audit.log"
      --audit-log-format=json --audit-log-mode=blocking --audit-log-maxsize=500)
  fi
  start_bg kube-apiserver "$BIN/kube-apiserver" \
    --etcd-servers="http://127.0.0.1:$ETCD_PORT" \
    --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="$API_PORT" \
    --cert-dir="$D/pki" --tls-cert-file="$D/pki/apiserver.crt" --tls-private-key-file="$D/pki/apiserver.key" \
    --client-ca-file="$D/pki/ca.crt" \
    --token-auth-file="$D/tokens.csv" \
    --authorization-mode=Node,RBAC \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --service-account-key-file="$D/sa.key" --service-account-signing-key-file="$D/sa.key" \
    --service-cluster-ip-range=10.0.0.0/24 \
    --disable-admission-plugins=TaintNodesByCondition --enable-aggregator-routing=true \
    --kubelet-preferred-address-types=InternalIP,Hostname \
    --kubelet-client-certificate="$D/pki/admin.crt" --kubelet-client-key="$D/pki/admin.key" \
    --endpoint-reconciler-type=none --allow-privileged=true \
    --feature-gates="$(supported_gates)" --profiling="${DRACO_APISERVER_PROFILING:-false}" --v=1 \
    $(runtime_config) \
    "${audit[@]}"
}

apiserver_ready() { curl -sf --cacert "$D/pki/ca.crt" "https://127.0.0.1:$API_PORT/readyz"; }

# start_kcm [--resourceclaim-controller]: kube-controller-manager with every controller but the
# resourceclaim controller (draco's job), node lifecycle and node taint eviction (fake nodes have
# no kubelet to keep them Ready); with --resourceclaim-controller also upstream's resourceclaim
# controller, as a cluster without draco (or a managed one) runs it. Needs $BIN.
# The mode is recorded in $D/kcm-resourceclaim (1: upstream's controller runs, 0: not), which
# up.sh compares with what it is asked for.
start_kcm() {
  local controllers='*,-resourceclaim-controller,-node-lifecycle-controller,-taint-eviction-controller'
  local on=0
  [[ ${1:-} == --resourceclaim-controller ]] && on=1 &&
    controllers='*,-node-lifecycle-controller,-taint-eviction-controller'
  echo "$on" >"$D/kcm-resourceclaim"
  start_bg kube-controller-manager "$BIN/kube-controller-manager" --kubeconfig="$D/kubeconfig" \
    --authentication-kubeconfig="$D/kubeconfig" --authorization-kubeconfig="$D/kubeconfig" \
    --leader-elect=false --bind-address=127.0.0.1 --secure-port=0 --controllers="$controllers" \
    --use-service-account-credentials=false --service-account-private-key-file="$D/sa.key" \
    --root-ca-file="$D/pki/ca.crt" --kube-api-qps=200 --kube-api-burst=400 \
    --feature-gates="$(supported_gates)" --v=1
}
