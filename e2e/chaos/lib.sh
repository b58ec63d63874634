# Shared pieces of e2e/chaos/chaos.sh and soak.sh (sourced, not run).
# Needs: $ROOT (the repository), $WORK (a scratch directory); the control plane's env sourced.
BUILD=${DRACO_BUILD_DIR:-$ROOT/build}
DRACO=$BUILD/controller/draco
log() { echo "[$(date -u +%H:%M:%S)] $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# build_tools: draco (when a build directory is configured), the load driver, the throughput
# benchmark's driver (its `setup` makes the nodes, ResourceSlices and DeviceClass) and the proxy.
build_tools() {
  source "$ROOT/scripts/go-env.sh"
  if [[ -f $BUILD/build.ninja ]]; then
    nice cmake --build "$BUILD" --target draco -j2 >/dev/null || die "draco does not build"
  fi
  [[ -x $DRACO ]] || die "$DRACO not built (cmake --build build --target draco)"
  mkdir -p "$WORK/bin"
  (cd "$ROOT/e2e/chaos" && GOTOOLCHAIN=local go build -o "$WORK/bin/" ./load ./proxy) ||
    die "the chaos Go tools do not build"
  (cd "$ROOT/tests/bench/throughput" && GOTOOLCHAIN=local go build -o "$WORK/bin/throughput" .) ||
    die "the throughput driver does not build"
}

# proc_sample PID: "rss_kb fds threads" of a live process.
proc_sample() {
  local rss thr fds
  rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$1/status")
  thr=$(awk '/^Threads:/ {print $2}' "/proc/$1/status")
  fds=$(find "/proc/$1/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)
  echo "$rss $fds $thr"
}

# sa_kubeconfig NS SA FILE [SERVER]: a kubeconfig for a ServiceAccount that may do what draco
# does (cluster-wide on the DRA, core and storage groups; Leases in NS). Not system:masters, so
# API priority and fairness applies to it (the exempt FlowSchema covers system:masters).
sa_kubeconfig() {
  local ns=$1 sa=$2 file=$3 server=${4:-$DRACO_APISERVER}
  kubectl get namespace "$ns" >/dev/null 2>&1 || kubectl create namespace "$ns" >/dev/null
  # The ServiceAccount admission plugin refuses pods until the default ServiceAccount exists.
  kubectl wait --for=create -n "$ns" serviceaccount/default --timeout=60s >/dev/null
  kubectl get serviceaccount -n "$ns" "$sa" >/dev/null 2>&1 || kubectl create serviceaccount -n "$ns" "$sa" >/dev/null
  kubectl apply -f - >/dev/null <<YAML
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: $sa-$ns}
rules:
- apiGroups: ["", resource.k8s.io, draco.dev, events.k8s.io, storage.k8s.io, coordination.k8s.io]
  resources: ["*"]
  verbs: ["*"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: $sa-$ns}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: $sa-$ns}
subjects: [{kind: ServiceAccount, name: $sa, namespace: $ns}]
YAML
  cat >"$file" <<KC
apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster: {server: "$server", certificate-authority: "$DRACO_CA"}
users:
- name: sa
  user: {token: "$(kubectl create token "$sa" -n "$ns" --duration=4h)"}
contexts:
- name: sa
  context: {cluster: e2e, user: sa}
current-context: sa
KC
}
