#!/usr/bin/env bash
# k8sclient (C++) versus client-go (Go) against the same local control plane, in one run.
#
#   tests/bench/k8sclient_vs_clientgo.sh [N]      (N objects/events, default 10000)
#
# Env: BUILD_DIR (C++ build dir, default build), RUNS (repetitions, default 3, medians reported),
#      KEEP=1 keeps the seeded objects, DRACO_E2E_DIR (default /tmp/draco-e2e).
# Work measured, identically for both clients:
#   list:  an informer lists (paged) and caches the N objects labelled draco-bench=k8sclient
#          until synced. client-go runs with WatchListClient disabled so both really LIST.
#   watch: one watch with sendInitialEvents=true streams N events, each decoded.
# Both read protobuf (client-go's clientsets prefer it for built-in kinds; draco with its generated
# schema, transcoding to JSON text); ENCODING=json makes draco read JSON.
# Objects are ResourceSlices when resource.k8s.io/v1 is served, else ConfigMaps. Each run is a
# fresh process; it reports wall seconds, CPU seconds and peak RSS (VmHWM). Ratios are
# draco / client-go (below 1 means the C++ client used less).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
source "$root/scripts/go-env.sh"
N=${1:-10000}
RUNS=${RUNS:-3}
BUILD_DIR=${BUILD_DIR:-$root/build}
E2E=${DRACO_E2E_DIR:-/tmp/draco-e2e}
[[ -f $E2E/env ]] || { echo "no control plane: $E2E/env missing (run e2e/cluster/up.sh)" >&2; exit 1; }
# shellcheck disable=SC1091
source "$E2E/env"

cmake --build "$BUILD_DIR" --target k8sclient_bench -j2 >/dev/null
cxx=$BUILD_DIR/k8sclient/bench/k8sclient_bench
gobin=$(mktemp -d)/clientgo-bench
(cd "$root/tests/clientgo-bench" && GOTOOLCHAIN=local go build -o "$gobin" .)

if kubectl get --raw /apis/resource.k8s.io/v1 2>/dev/null | grep -q '"resourceslices"'; then
  resource=resourceslices
  ns_args=()
else
  resource=configmaps
  kubectl create namespace draco-bench >/dev/null 2>&1 || true
  ns_args=(--namespace draco-bench)
fi
have=$(kubectl get "$resource" "${ns_args[@]/--namespace/-n}" -l draco-bench=k8sclient -o name 2>/dev/null | wc -l)
if (( have < N )); then
  echo "seeding $N $resource ..." >&2
  "$cxx" seed --resource "$resource" "${ns_args[@]}" --count "$N" --threads 16
fi
cleanup() {
  if [[ ${KEEP:-0} != 1 ]]; then
    "$cxx" cleanup --resource "$resource" "${ns_args[@]}" >&2 || true
  fi
}
trap cleanup EXIT

# draco reads built-in kinds in protobuf (as client-go's clientsets do by default): the schema
# text embedded in controller/run/proto_schema.cc. ENCODING=json measures its JSON path instead.
schema=$(mktemp)
sed -n '/R"schema(/,/)schema"/p' "$root/controller/run/proto_schema.cc" | sed '1d;$d' >"$schema"
proto_args=(--protobuf-schema "$schema")
[[ ${ENCODING:-protobuf} == json ]] && proto_args=()
results=$(mktemp)
for ((r = 1; r <= RUNS; r++)); do
  for op in list watch; do
    "$cxx" "$op" --resource "$resource" "${ns_args[@]}" --expect "$N" "${proto_args[@]}" >>"$results"
    KUBE_FEATURE_WatchListClient=false "$gobin" -mode "$op" -resource "$resource" \
      "${ns_args[@]/--namespace/-namespace}" -expect "$N" >>"$results"
  done
done

python3 - "$results" "$resource" "$N" "$RUNS" <<'PY'
import json, statistics, sys
path, resource, n, runs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
rows = [json.loads(l) for l in open(path) if l.strip().startswith("{")]
def med(client, op, field):
    v = [r[field] for r in rows if r["client"] == client and r["op"] == op]
    return statistics.median(v) if v else float("nan")
print(f"k8sclient vs client-go: {n} {resource}, median of {runs} runs (fresh process each)")
print(f"{'op':6} {'metric':12} {'draco':>10} {'client-go':>10} {'ratio':>7}")
for op in ("list", "watch"):
    for field, label in (("seconds", "wall s"), ("cpu_seconds", "cpu s"), ("peak_rss_mb", "peak RSS MB")):
        d, g = med("draco", op, field), med("client-go", op, field)
        print(f"{op:6} {label:12} {d:10.3f} {g:10.3f} {d / g if g else float('nan'):7.2f}")
PY
