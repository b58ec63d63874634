# Helpers for e2e test scripts (sourced). Assertions use kubectl from the built control plane,
# never draco's own client.
set -euo pipefail
E2E_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ENV_FILE=${DRACO_E2E_DIR:-/tmp/draco-e2e}/env
if [[ ! -f $ENV_FILE ]]; then
  echo "SKIP: no local control plane ($ENV_FILE missing); run e2e/cluster/up.sh" >&2
  exit 77
fi
source "$ENV_FILE"
k() { kubectl "$@"; }
pass() { echo "PASS: $*"; }
# fail MSG: reports and exits 1; a test that defines on_fail gets it called first (once), to print
# what a reader of CI's output needs to explain the failure (object states, log tails).
fail() {
  echo "FAIL: $*" >&2
  if [[ -z ${_E2E_FAILING:-} ]] && declare -F on_fail >/dev/null; then
    _E2E_FAILING=1
    echo "--- diagnostics ---" >&2
    on_fail >&2 2>&1 || true
    echo "--- end of diagnostics ---" >&2
  fi
  exit 1
}
# fresh_ns NAME [kubectl create namespace args...]: waits out a previous run's namespace deletion,
# then creates it (a test run again right after it failed finds its namespace still terminating).
fresh_ns() {
  kubectl wait --for=delete "namespace/$1" --timeout=120s >/dev/null 2>&1 || true
  kubectl create namespace "$@" >/dev/null
  wait_default_sa "$1"
}
# wait_default_sa NS...: waits until kube-controller-manager has created each namespace's default
# ServiceAccount. The ServiceAccount admission plugin (on, as in every real cluster: pods on the
# real nodes get their tokens from it) refuses a pod in a namespace without it, and only retries
# the lookup for about a second.
wait_default_sa() {
  local ns
  for ns in "$@"; do
    kubectl wait --for=create -n "$ns" serviceaccount/default --timeout=60s >/dev/null ||
      { echo "FAIL: namespace $ns got no default ServiceAccount in 60 s" >&2; exit 1; }
  done
}
# eventually SECONDS DESC CMD...: polls CMD until it succeeds.
eventually() {
  local secs=$1 desc=$2; shift 2
  local end=$((SECONDS + secs))
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < end)) || fail "timed out after ${secs}s waiting for: $desc"
    sleep 0.5
  done
  pass "$desc"
}
# cleanup_ns NS: deletes a namespace without waiting, first force-deleting its pods (no kubelet)
# and stripping the delete-protection finalizer from its claims (no resourceclaim-controller runs
# in the e2e cluster and draco may be stopped already, so they would keep the namespace
# Terminating and a rerun of the test could not create it again).
cleanup_ns() {
  local c
  k get namespace "$1" >/dev/null 2>&1 || return 0
  k delete pods --all -n "$1" --grace-period=0 --force --wait=false >/dev/null 2>&1 || true
  for c in $(k get resourceclaims -n "$1" -o name 2>/dev/null); do
    k patch -n "$1" "$c" --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null 2>&1 || true
  done
  k delete namespace "$1" --wait=false >/dev/null 2>&1 || true
}
