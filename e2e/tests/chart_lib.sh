# Helpers for the chart_*, rbac_* and admission_* tests (sourced after lib.sh, or alone with
# CHART_LIB_NO_CLUSTER=1 for tests that need only helm).
CHART_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../charts/draco" && pwd)
REPO_ROOT=$(cd "$CHART_DIR/../.." && pwd)

# find_helm: puts a helm binary on PATH (the control plane's DRACO_BIN, else the build cache).
find_helm() {
  command -v helm >/dev/null 2>&1 && return 0
  local d
  for d in ${DRACO_BIN:-} "$HOME"/.cache/draco/bin-*; do
    if [[ -x $d/helm ]]; then PATH=$d:$PATH; return 0; fi
  done
  return 1
}

# render_kube_version: the API server's version (e.g. 1.34.4) when a cluster is reachable and
# CHART_LIB_NO_CLUSTER is unset, else 1.37.2; cached in RENDER_KUBE_VERSION.
render_kube_version() {
  if [[ -z ${RENDER_KUBE_VERSION:-} ]]; then
    RENDER_KUBE_VERSION=1.37.2
    if [[ -z ${CHART_LIB_NO_CLUSTER:-} ]]; then
      local v
      v=$(kubectl get --raw /version 2>/dev/null | grep -o '"gitVersion": *"v[^"]*"' | cut -d'"' -f4) || true
      [[ -n $v ]] && RENDER_KUBE_VERSION=${v#v}
    fi
  fi
  echo "$RENDER_KUBE_VERSION"
}

# render [helm template args...]: the chart rendered as release "draco" for the cluster's
# Kubernetes version (render_kube_version).
render() { helm template draco "$CHART_DIR" --kube-version "$(render_kube_version)" "$@"; }

# gate_mode: what admission.mode=auto installs on this cluster: "policy" when the API server serves
# a MutatingAdmissionPolicy API, else "webhook".
gate_mode() {
  local served
  served=$(kubectl api-resources --api-group=admissionregistration.k8s.io -o name 2>/dev/null) || true
  if grep -q '^mutatingadmissionpolicies\.' <<<"$served"; then
    echo policy
  else
    echo webhook
  fi
}

# start_local_webhook NS SA PORT LOG [draco run flags...]: runs `draco run` on this host as the
# ServiceAccount NS/SA, serving the admission webhook on https://127.0.0.1:PORT/mutate for a release
# named SA installed with admission.webhook.url pointing there (the chart's own pods never run in
# the e2e cluster, which has no kubelet). Sets WEBHOOK_PID and WEBHOOK_READYZ (host:port of
# /readyz). Needs find_draco first.
start_local_webhook() {
  local ns=$1 sa=$2 port=$3 log=$4 mport=$((20000 + RANDOM % 10000))
  shift 4
  sa_kubeconfig "$ns" "$sa" "$log.kubeconfig"
  "$DRACO" run --kubeconfig "$log.kubeconfig" \
    --metrics-bind-address "127.0.0.1:$mport" --health-probe-bind-address "127.0.0.1:$((mport + 1))" \
    --webhook-bind-address "127.0.0.1:$port" --webhook-cert-secret "$ns/$sa-webhook-tls" \
    --webhook-config-name "$sa-scheduling-gate" --webhook-cert-hosts "127.0.0.1" -v 1 "$@" \
    >"$log" 2>&1 &
  WEBHOOK_PID=$!
  WEBHOOK_READYZ=127.0.0.1:$((mport + 1))
}

# split_docs FILE DIR: writes each YAML document of FILE to DIR/NNN.yaml.
split_docs() {
  mkdir -p "$2"
  awk -v dir="$2" 'BEGIN {n = 0; f = sprintf("%s/%03d.yaml", dir, n)}
    /^---/ {n++; f = sprintf("%s/%03d.yaml", dir, n); next}
    {print > f}' "$1"
  # Drop documents that hold only comments or nothing.
  local f
  for f in "$2"/*.yaml; do grep -qE '^[a-zA-Z]' "$f" || rm -f "$f"; done
}

# doc_of_kind DIR KIND [NAME]: the path of the first document of that kind (and name).
doc_of_kind() {
  local f
  for f in "$1"/*.yaml; do
    grep -qx "kind: $2" "$f" || continue
    [[ -z ${3:-} ]] || grep -qx "  name: $3" "$f" || continue
    echo "$f"; return 0
  done
  return 1
}

# The API calls draco run makes, one per line: VERB GROUP RESOURCE SUBRESOURCE NAMESPACE NAME
# ("-" for empty; NAMESPACE "*" means the lease namespace, "-" cluster-wide or all namespaces).
# lifecycle.md 6.2 and the controller facts; charts/draco/templates/rbac.yaml must grant exactly
# these.
required_actions() {
  cat <<'ACTIONS'
list resource.k8s.io resourceclaims - - -
watch resource.k8s.io resourceclaims - - -
create resource.k8s.io resourceclaims - team-a -
update resource.k8s.io resourceclaims - team-a -
delete resource.k8s.io resourceclaims - team-a -
update resource.k8s.io resourceclaims status team-a -
update resource.k8s.io resourceclaims binding - -
list resource.k8s.io resourceclaimtemplates - - -
watch resource.k8s.io resourceclaimtemplates - - -
list resource.k8s.io deviceclasses - - -
watch resource.k8s.io deviceclasses - - -
list resource.k8s.io resourceslices - - -
watch resource.k8s.io resourceslices - - -
list resource.k8s.io devicetaintrules - - -
watch resource.k8s.io devicetaintrules - - -
list - pods - - -
watch - pods - - -
get - pods - team-a -
patch - pods - team-a -
patch - pods status team-a -
list - nodes - - -
watch - nodes - - -
list - persistentvolumes - - -
watch - persistentvolumes - - -
list - persistentvolumeclaims - - -
watch - persistentvolumeclaims - - -
list - namespaces - - -
watch - namespaces - - -
list storage.k8s.io storageclasses - - -
watch storage.k8s.io storageclasses - - -
list storage.k8s.io csinodes - - -
watch storage.k8s.io csinodes - - -
create - events - team-a -
patch - events - team-a -
get scheduling.k8s.io podgroups - team-a -
list scheduling.k8s.io podgroups - - -
watch scheduling.k8s.io podgroups - - -
list draco.dev allocationpolicies - - -
watch draco.dev allocationpolicies - - -
create coordination.k8s.io leases - * -
get coordination.k8s.io leases - * draco
update coordination.k8s.io leases - * draco
watch coordination.k8s.io leases - * draco
patch coordination.k8s.io leases - * draco
create - pods - * -
delete - pods - * -
create resource.k8s.io resourceclaimtemplates - * -
create authentication.k8s.io tokenreviews - - -
create authorization.k8s.io subjectaccessreviews - - -
ACTIONS
}

# Calls draco never makes; the chart's RBAC must deny every one.
forbidden_actions() {
  cat <<'ACTIONS'
get resource.k8s.io resourceclaims - team-a -
patch resource.k8s.io resourceclaims - team-a -
patch resource.k8s.io resourceclaims status team-a -
patch resource.k8s.io resourceclaims binding - -
get resource.k8s.io deviceclasses - - -
get resource.k8s.io resourceslices - - -
create - pods - team-a -
update - pods - team-a -
delete - pods - team-a -
get - nodes - - -
get - persistentvolumeclaims - team-a -
get storage.k8s.io storageclasses - - -
create events.k8s.io events - team-a -
get draco.dev allocationpolicies - - -
update - pods status team-a -
update - pods ephemeralcontainers team-a -
create - pods eviction team-a -
get - secrets - team-a -
list - secrets - - -
list - configmaps - - -
update - nodes - - -
patch - nodes status - -
create resource.k8s.io resourceslices - - -
delete resource.k8s.io resourceslices - - -
update resource.k8s.io deviceclasses - - -
create resource.k8s.io resourceclaimtemplates - team-a -
delete resource.k8s.io resourceclaims status team-a -
create draco.dev allocationpolicies - - -
update draco.dev allocationpolicies - - -
update - events - team-a -
delete events.k8s.io events - team-a -
get coordination.k8s.io leases - * kube-controller-manager
update coordination.k8s.io leases - * other-lease
delete coordination.k8s.io leases - * draco
list coordination.k8s.io leases - * -
create coordination.k8s.io leases - kube-system -
create rbac.authorization.k8s.io clusterroles - - -
escalate rbac.authorization.k8s.io clusterroles - - -
bind rbac.authorization.k8s.io clusterroles - - -
impersonate - serviceaccounts - team-a -
create - serviceaccounts token team-a -
create admissionregistration.k8s.io mutatingadmissionpolicies - - -
ACTIONS
}

# can_batch USER LEASE_NS < actions: one SubjectAccessReview per action line, created in a single
# kubectl call; prints "yes|no ACTION" per line. USER is a service account username.
can_batch() {
  local user=$1 lease_ns=$2 ns_of_sa items="" line verb group res sub ns name
  ns_of_sa=$(cut -d: -f3 <<<"$user")
  while read -r verb group res sub ns name; do
    [[ -n $verb ]] || continue
    [[ $group == - ]] && group=""
    [[ $sub == - ]] && sub=""
    [[ $ns == "*" ]] && ns=$lease_ns
    [[ $ns == - ]] && ns=""
    [[ $name == - ]] && name=""
    items+="{\"apiVersion\":\"authorization.k8s.io/v1\",\"kind\":\"SubjectAccessReview\",\"spec\":{\"user\":\"$user\",\"groups\":[\"system:serviceaccounts\",\"system:serviceaccounts:$ns_of_sa\",\"system:authenticated\"],\"resourceAttributes\":{\"verb\":\"$verb\",\"group\":\"$group\",\"resource\":\"$res\",\"subresource\":\"$sub\",\"namespace\":\"$ns\",\"name\":\"$name\"}}},"
    lines+=("$verb $group $res $sub $ns $name")
  done
  local out
  out=$(kubectl create -o jsonpath='{.status.allowed}{"\n"}' -f - \
    <<<"{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[${items%,}]}")
  paste -d' ' <(sed 's/^true$/yes/; s/^$/no/; s/^false$/no/' <<<"$out") <(printf '%s\n' "${lines[@]}")
  lines=()
}
lines=()

# find_draco: sets DRACO to a draco executable that has the `run` subcommand: $DRACO_TEST_BINARY,
# else the `draco` target of $DRACO_BUILD_DIR (built if needed). Returns 1 when there is none yet.
find_draco() {
  DRACO=${DRACO_TEST_BINARY:-}
  if [[ -z $DRACO ]]; then
    local bdir=${DRACO_BUILD_DIR:-}
    [[ -n $bdir && -f $bdir/build.ninja ]] || return 1
    # (not `| grep -q`: under pipefail, ninja's SIGPIPE would fail the pipeline)
    local targets
    targets=$(ninja -C "$bdir" -t targets all 2>/dev/null) || return 1
    grep -q '^draco:' <<<"$targets" || return 1
    cmake --build "$bdir" --target draco -j2 >/dev/null 2>&1 || return 1
    DRACO=$(find "$bdir" -path '*/CMakeFiles' -prune -o -type f -name draco -perm -u+x -print | head -n 1)
  fi
  [[ -n $DRACO && -x $DRACO ]] || return 1
  "$DRACO" run --help >/dev/null 2>&1
}

# sa_kubeconfig NS SA FILE: a kubeconfig that authenticates as the ServiceAccount with a bound token.
sa_kubeconfig() {
  local token
  token=$(kubectl create token "$2" -n "$1" --duration=1h)
  cat >"$3" <<KC
apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster: {server: "$DRACO_APISERVER", certificate-authority: "$DRACO_CA"}
users:
- name: sa
  user: {token: "$token"}
contexts:
- name: sa
  context: {cluster: e2e, user: sa}
current-context: sa
KC
}

# drop_ns NS...: cleanup_ns (lib.sh) for each namespace.
drop_ns() {
  local ns
  for ns in "$@"; do cleanup_ns "$ns"; done
}

# render_test_init: the start of every test that renders the chart without a cluster: renders for
# Kubernetes 1.37.2 unless RENDER_KUBE_VERSION says otherwise, defines pass and fail, skips (77)
# without helm, and gives a scratch directory $tmp removed on exit.
render_test_init() {
  RENDER_KUBE_VERSION=${RENDER_KUBE_VERSION:-1.37.2}
  pass() { echo "PASS: $*"; }
  fail() { echo "FAIL: $*" >&2; exit 1; }
  find_helm || { echo "SKIP: no helm binary (e2e/cluster/build.sh builds it)" >&2; exit 77; }
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
}
