#!/usr/bin/env bash
# End-to-end throughput benchmark on the local control plane (e2e/cluster/up.sh), draco vs
# upstream in the same run:
#   1. fake Ready nodes bench-node-0..N-1, one node-local ResourceSlice of D devices each
#      (driver bench.draco.dev) and a DeviceClass;
#   2. the box's raw write ceiling: a plain ResourceClaim status-update loop (N writes, 32 clients);
#   3. upstream: a second kube-controller-manager running only resourceclaim-controller +
#      kube-scheduler allocating; PODS pods from a ResourceClaimTemplate, no gate;
#   4. draco: `draco run` (lifecycle + allocation), the same pods with the draco.dev/allocation gate.
#   5. with --lifecycle upstream|both, side draco_kcm: draco next to the resourceclaim
#      kube-controller-manager of step 3 (as on a managed control plane): upstream's controller
#      creates, records, releases and deletes the claims, draco (--claim-lifecycle auto, which
#      must detect it) gates and allocates.
# Per side also: claims seen for each pod before it was bound (exactly one per pod claim entry
# expected), ResourceClaim POSTs at the API server, claims 30 s after every pod finished,
# claims left once the pods were deleted (0 expected) and, for draco sides, devices in two claims
# at the end (draco's audit) and the claim lifecycle owner draco chose.
# In 3 and 4 the driver plays the kubelet: a bound pod succeeds at once, releasing its device, so
# 2000 pods flow through 200x8 = 1600 devices (claims are deallocated and deleted on the way).
# Reported per side: seconds until every pod was bound, pods/s, claim-allocation latency
# p50/p90/p99 (claim seen created -> seen allocated) and pod create->bound p50/p99; plus pods/s as
# a fraction of (write ceiling / writes per pod). Both controllers get the same client QPS.
#
# Steady-state mode (--rate R --duration S): instead of a burst, each side gets pods created at R
# pods/s for S seconds, each deleted (grace 0) once seen bound, so the cluster stays below
# saturation; reported per side: pod create->bound p50/p99 (and the gate removal for draco), with
# no write-ceiling step.
# Both modes also report per side: writes/pod at the API server, kube-apiserver CPU ms per pod,
# the side's own CPU (draco; upstream: its resourceclaim kube-controller-manager) and
# kube-scheduler's, in ms per pod, and peak RSS (VmHWM) of the side's own process plus
# kube-scheduler's RSS at the end of the side.
#
# Usage: tests/bench/throughput.sh [--pods 2000] [--nodes 200] [--devices 8] [--qps 5000]
#        [--workers 48] [--only draco|upstream] [--draco-flags "--http-threads 2 ..."]
#        [--rate 20 --duration 120]   (steady-state mode; --pods is then rate x duration)
#        [--run-timeout 15m]   (how long a side may take to bind its pods; raise it for 5,000 nodes)
#        [--order upstream-first|draco-first]   (which side runs first; alternate across runs)
#        [--lifecycle draco|upstream|both]   (draco side(s): draco owns the claim lifecycle
#         (default), next to upstream's resourceclaim controller (draco_kcm), or both)
# DRACO_CONTROLLER_BIN: an already built draco to run instead of building this tree's (e.g. an
# older commit's binary, for before/after comparisons with the same harness, driver and control
# plane). (DRACO_BIN is the control plane's binary directory, set by e2e/cluster/lib.sh.)
# Results: printed, and appended as JSON lines to ${DRACO_BENCH_OUT:-/tmp/draco-bench/results.jsonl}.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
source scripts/go-env.sh
PODS=2000 NODES=200 DEVICES=8 QPS=5000 WORKERS=48 ONLY="" DRACO_FLAGS="" RATE="" DURATION=120
RUN_TIMEOUT=15m ORDER=upstream-first LIFECYCLE=draco
while (($#)); do
  case $1 in
    --pods) PODS=$2; shift 2 ;;
    --nodes) NODES=$2; shift 2 ;;
    --devices) DEVICES=$2; shift 2 ;;
    --qps) QPS=$2; shift 2 ;;
    --workers) WORKERS=$2; shift 2 ;;
    --only) ONLY=$2; shift 2 ;;
    --draco-flags) DRACO_FLAGS=$2; shift 2 ;;
    --rate) RATE=$2; shift 2 ;;
    --duration) DURATION=$2; shift 2 ;;
    --run-timeout) RUN_TIMEOUT=$2; shift 2 ;;
    --order) ORDER=$2; shift 2 ;;
    --lifecycle) LIFECYCLE=$2; shift 2 ;;
    *) echo "unknown flag $1" >&2; exit 2 ;;
  esac
done
case $ORDER in upstream-first | draco-first) ;; *) echo "--order: upstream-first or draco-first" >&2; exit 2 ;; esac
case $LIFECYCLE in draco | upstream | both) ;; *) echo "--lifecycle: draco, upstream or both" >&2; exit 2 ;; esac
MODE=burst
if [[ -n $RATE ]]; then
  MODE=steady
  PODS=$(awk -v r="$RATE" -v d="$DURATION" 'BEGIN{printf "%d", r * d + 0.5}')
fi
source e2e/cluster/lib.sh
e2e/cluster/up.sh  # idempotent: a healthy cluster is reused, a dead one replaced
source "$D/env"
BUILD=${DRACO_BUILD_DIR:-$root/build}
OUT=${DRACO_BENCH_OUT:-/tmp/draco-bench/results.jsonl}
WORK=${DRACO_BENCH_WORK:-/tmp/draco-bench}
# draco's /metrics and /healthz ports (another benchmark may run beside this one).
METRICS_PORT=${DRACO_BENCH_METRICS_PORT:-18090}
HEALTH_PORT=$((METRICS_PORT + 1))
mkdir -p "$WORK" "$(dirname "$OUT")"
echo "== building draco and the benchmark driver" >&2
DRACO_EXE=${DRACO_CONTROLLER_BIN:-$BUILD/controller/draco}
if [[ -z ${DRACO_CONTROLLER_BIN:-} ]]; then
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build "$BUILD" --target draco -j"$(nproc)" >/dev/null
fi
[[ -x $DRACO_EXE ]] || { echo "no draco binary at $DRACO_EXE" >&2; exit 1; }
# A draco from before --claim-lifecycle (a "before" binary of an older commit) owns the claim
# lifecycle without being asked; it cannot run the draco_kcm side.
LIFECYCLE_FLAGS=()
draco_help=$("$DRACO_EXE" run --help 2>&1 || true)
[[ $draco_help == *--claim-lifecycle* ]] && LIFECYCLE_FLAGS=(--claim-lifecycle auto)
if [[ $LIFECYCLE != draco && ${#LIFECYCLE_FLAGS[@]} -eq 0 ]]; then
  echo "--lifecycle $LIFECYCLE needs a draco with --claim-lifecycle ($DRACO_EXE has none)" >&2
  exit 2
fi
(cd tests/bench/throughput && GOTOOLCHAIN=local go build -o "$WORK/throughput" .)
TP="$WORK/throughput"
RUN_ID=$(date -u +%Y%m%dT%H%M%SZ)
record() { echo "{\"run\":\"$RUN_ID\",\"mode\":\"$MODE\",\"order\":\"$ORDER\",\"side\":\"$1\",\"pods\":$PODS,\"nodes\":$NODES,\"devices\":$DEVICES,\"qps\":$QPS,\"result\":$2}" >>"$OUT"; }

kcm_pid="" draco_pid=""
cleanup_procs() {
  [[ -n $kcm_pid ]] && kill "$kcm_pid" 2>/dev/null || true
  [[ -n $draco_pid ]] && kill "$draco_pid" 2>/dev/null || true
}
trap cleanup_procs EXIT

echo "== setup: $NODES nodes x $DEVICES devices" >&2
"$TP" setup -nodes "$NODES" -devices "$DEVICES"

# Writes per pod lifecycle, as the pods/s-based ceiling% assumes (both sides): pod create, claim
# create, pod status apply, claim allocation, binding, pod Succeeded, claim unreserve+deallocate or
# finalizer removal, claim delete, plus one each side-specific (upstream: the scheduler's
# finalizer update before allocating; draco: the gate removal) = 10 with Events left out.
# Besides this, each side's writes are counted at the API server (apiserver_request_total,
# mutating verbs, Events and the scheduler's SchedulingGated condition included), and
# write_rate% = those writes per second / the ceiling.
WRITES_PER_POD=10
# api_writes: mutating requests the API server has served so far.
api_writes() {
  curl -s --cacert "$DRACO_CA" --cert "$DRACO_CLIENT_CERT" --key "$DRACO_CLIENT_KEY" \
    "$DRACO_APISERVER/metrics" |
    awk '/^apiserver_request_total\{/ && /verb="(POST|PUT|PATCH|DELETE|APPLY)"/ {s += $NF} END {printf "%d\n", s}'
}

# claim_creates: ResourceClaim POSTs the API server served so far.
claim_creates() {
  curl -s --cacert "$DRACO_CA" --cert "$DRACO_CLIENT_CERT" --key "$DRACO_CLIENT_KEY" \
    "$DRACO_APISERVER/metrics" |
    awk '/^apiserver_request_total\{/ && /resource="resourceclaims"/ && /verb="POST"/ && /subresource=""/ {s += $NF} END {printf "%d\n", s}'
}

# cpu_ticks PID: user+system clock ticks of a process (0 when it is gone).
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
# CPU seconds per component during one side: where the box's 2 cores went.
declare -A CPU_PIDS=()
cpu_snapshot() {
  local n; for n in "${!CPU_PIDS[@]}"; do echo "$n $(cpu_ticks "${CPU_PIDS[$n]}")"; done | sort
}
# cpu_report BEFORE AFTER [SECONDS]: per-process CPU seconds between two snapshots, and the total
# (out of SECONDS of wall time on all cores when given).
cpu_report() {
  local hz; hz=$(getconf CLK_TCK)
  join <(echo "$1") <(echo "$2") | awk -v hz="$hz" -v s="${3:-}" -v c="$(nproc)" \
    '{printf "%s%s=%.1fs", (NR>1?" ":""), $1, ($3-$2)/hz; tot += ($3-$2)/hz}
     END {printf " total=%.1fs", tot; if (s != "") printf " of %.1fs x %d cores", s, c; printf "\n"}'
}
for c in kube-apiserver etcd kube-scheduler kube-controller-manager; do
  [[ -f $D/pids/$c.pid ]] && CPU_PIDS[$c]=$(cat "$D/pids/$c.pid")
done
# cpu_seconds BEFORE AFTER [EXCLUDED_NAME]: CPU seconds of all measured processes but one.
cpu_seconds() {
  join <(echo "$1") <(echo "$2") | awk -v hz="$(getconf CLK_TCK)" -v x="${3:-}" \
    '$1!=x {t += ($3-$2)/hz} END {printf "%.2f", t}'
}
# cpu_of BEFORE AFTER NAME: CPU seconds of one process.
cpu_of() {
  join <(echo "$1") <(echo "$2") | awk -v hz="$(getconf CLK_TCK)" -v n="$3" \
    '$1==n {printf "%.2f", ($3-$2)/hz}'
}
# rss_kb PID FIELD: a process's VmRSS or VmHWM (peak) in kB (0 when it is gone).
rss_kb() { awk -v f="$2:" '$1==f {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
# ms_per_write SECONDS WRITES
ms_per_write() { awk -v t="$1" -v n="$2" 'BEGIN{printf "%.2f", 1000*t/n}'; }

# measure NAME CMD...: runs CMD with its stdout in $WORK/NAME.json and sets M_BEFORE and M_AFTER
# (CPU snapshots; with /usr/bin/time the command's own CPU is a "bench-driver" row, since it
# competes for the same cores) and M_WRITES (mutating requests the API server served meanwhile).
measure() {
  local name=$1; shift
  local w0 tf="$WORK/$name.time"
  rm -f "$tf"
  M_BEFORE=$(cpu_snapshot); w0=$(api_writes)
  if [[ -x /usr/bin/time ]]; then
    /usr/bin/time -f "%U %S" -o "$tf" "$@" >"$WORK/$name.json"
  else
    "$@" >"$WORK/$name.json"
  fi
  M_WRITES=$(($(api_writes) - w0))
  M_AFTER=$(cpu_snapshot)
  if [[ -s $tf ]]; then
    M_BEFORE=$(printf '%s\nbench-driver 0\n' "$M_BEFORE" | sort)
    M_AFTER=$( (echo "$M_AFTER"; awk -v hz="$(getconf CLK_TCK)" '{printf "bench-driver %d\n", ($1 + $2) * hz}' "$tf") | sort)
  fi
}

wps="" CEILING_APISERVER_MS=n/a
if [[ $MODE == burst ]]; then
echo "== raw write ceiling (ResourceClaim status updates)" >&2
measure ceiling "$TP" writes -ns bench-writes -n "$PODS" -rounds 3 -concurrency 32
ceiling=$(cat "$WORK/ceiling.json")
echo "$ceiling"
CEILING_APISERVER_MS=$(ms_per_write "$(cpu_of "$M_BEFORE" "$M_AFTER" kube-apiserver)" "$M_WRITES")
# CPU of the whole box (every measured process, the loop's client included) per ceiling write.
CEILING_CPU_MS=$(ms_per_write "$(cpu_seconds "$M_BEFORE" "$M_AFTER")" "$M_WRITES")
echo "== ceiling: CPU seconds by process: $(cpu_report "$M_BEFORE" "$M_AFTER"); kube-apiserver ${CEILING_APISERVER_MS} ms per write, all processes ${CEILING_CPU_MS} ms per write" >&2
record writes "$ceiling"
# The ceiling loop writes fake allocations (the same devices many times); wait until they are gone
# so that draco's double-allocation auditor only sees the benchmark's own claims.
kubectl wait --for=delete namespace/bench-writes --timeout=180s >/dev/null 2>&1 || true
wps=$(sed -n 's/.*"writes_per_second":\([0-9.]*\).*/\1/p' <<<"$ceiling")
fi

# side_costs NAME OWN_PID: JSON fields (no braces) with the side's cost per pod from M_BEFORE,
# M_AFTER and M_WRITES: kube-apiserver, own process (draco, or upstream's resourceclaim KCM) and
# kube-scheduler CPU ms per pod, own peak RSS and kube-scheduler's RSS now.
side_costs() {
  local own_key=$1 own_pid=$2 per_pod='BEGIN{printf "%.2f", 1000*s/p}'
  local api own sched
  api=$(cpu_of "$M_BEFORE" "$M_AFTER" kube-apiserver)
  own=$(cpu_of "$M_BEFORE" "$M_AFTER" "$own_key")
  sched=$(cpu_of "$M_BEFORE" "$M_AFTER" kube-scheduler)
  printf '"apiserver_cpu_seconds":%s,"apiserver_cpu_ms_per_pod":%s,' "${api:-0}" \
    "$(awk -v s="${api:-0}" -v p="$PODS" "$per_pod")"
  printf '"own_cpu_seconds":%s,"own_cpu_ms_per_pod":%s,' "${own:-0}" \
    "$(awk -v s="${own:-0}" -v p="$PODS" "$per_pod")"
  printf '"scheduler_cpu_seconds":%s,"scheduler_cpu_ms_per_pod":%s,' "${sched:-0}" \
    "$(awk -v s="${sched:-0}" -v p="$PODS" "$per_pod")"
  printf '"own_rss_peak_kb":%s,"scheduler_rss_kb":%s' "$(rss_kb "$own_pid" VmHWM)" \
    "$(rss_kb "${CPU_PIDS[kube-scheduler]:-0}" VmRSS)"
}

# rss_sampler OWN_PID OUT: every 10 s, appends "seconds own_rss_kb scheduler_rss_kb" to OUT.
rss_sampler() {
  local t0=$SECONDS
  while sleep 10; do
    echo "$((SECONDS - t0)) $(rss_kb "$1" VmRSS) $(rss_kb "${CPU_PIDS[kube-scheduler]:-0}" VmRSS)" >>"$2"
  done
}

# rss_growth OUT: JSON fields (no braces): own and kube-scheduler RSS at the first sample after
# 60 s (caches warm) and at the last sample, in kB (steady state: no growth expected).
rss_growth() {
  awk 'NR==1 || (!w && $1 >= 60) {o1=$2; s1=$3; if ($1 >= 60) w=1} {o2=$2; s2=$3}
       END {printf "\"own_rss_warm_kb\":%d,\"own_rss_end_kb\":%d,\"scheduler_rss_warm_kb\":%d,\"scheduler_rss_end_kb\":%d", o1, o2, s1, s2}' "$1"
}

side() {
  local name=$1 ns=bench-${1//_/-} gate=$2 own_key=$3 own_pid=$4 c0
  c0=$(claim_creates)
  echo "== $name: $PODS pods ($MODE)" >&2
  local r t0=$SECONDS sampler
  : >"$WORK/$name-rss.txt"
  rss_sampler "$own_pid" "$WORK/$name-rss.txt" &
  sampler=$!
  if [[ $MODE == steady ]]; then
    measure "$name" "$TP" steady -ns "$ns" -rate "$RATE" -duration "${DURATION}s" -gate="$gate" \
      -concurrency 32 -timeout "$RUN_TIMEOUT"
  else
    measure "$name" "$TP" run -ns "$ns" -pods "$PODS" -gate="$gate" -concurrency 32 \
      -timeout "$RUN_TIMEOUT"
  fi
  kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null || true
  # Every pod finished (Succeeded): claims still there after 30 s (upstream's controller
  # re-creates the generated claim of a finished pod that it deleted, as long as the pod exists:
  # pkg/controller/resourceclaim syncPod checks only deletionTimestamp). Then the pods go, as a
  # Job's TTL would delete them: every claim must follow (released and deleted by the lifecycle
  # owner, or by the garbage collector).
  sleep 30
  local finished left t=0 created
  created=$(($(claim_creates) - c0))
  finished=$(kubectl get resourceclaims -n "$ns" --no-headers 2>/dev/null | wc -l)
  kubectl delete pods -n "$ns" --all --wait=false >/dev/null 2>&1 || true
  while left=$(kubectl get resourceclaims -n "$ns" --no-headers 2>/dev/null | wc -l); ((left > 0 && t < 120)); do
    sleep 2; t=$((t + 2))
  done
  r=$(cat "$WORK/$name.json")
  r=$(sed "s/}\$/,\"claims_created\":$created,\"claims_with_pods_finished\":$finished,\"claims_left\":$left}/" <<<"$r")
  # Writes the API server served during this side, per pod and per second of the run.
  local secs; secs=$(sed -n 's/.*"seconds":\([0-9.e+-]*\).*/\1/p' <<<"$r")
  r=$(sed "s/}\$/,\"api_writes\":$M_WRITES,\"api_writes_per_pod\":$(awk -v w="$M_WRITES" -v p="$PODS" 'BEGIN{printf "%.2f", w/p}'),\"api_writes_per_second\":$(awk -v w="$M_WRITES" -v s="$secs" 'BEGIN{printf "%.1f", w/s}')}/" <<<"$r")
  r=$(sed "s/}\$/,$(side_costs "$own_key" "$own_pid")}/" <<<"$r")
  if [[ -s $WORK/$name-rss.txt ]]; then
    r=$(sed "s/}\$/,$(rss_growth "$WORK/$name-rss.txt")}/" <<<"$r")
  fi
  echo "$r"
  echo "== $name: CPU seconds by process: $(cpu_report "$M_BEFORE" "$M_AFTER" $((SECONDS - t0))); kube-apiserver $(ms_per_write "$(cpu_of "$M_BEFORE" "$M_AFTER" kube-apiserver)" "$M_WRITES") ms per write (ceiling loop: $CEILING_APISERVER_MS)" >&2
  if [[ $name == draco && -n $wps ]]; then
    # What the rest of the pipeline alone allows: if draco used no CPU at all, the box would still
    # spend this much per write on the API server, etcd, the scheduler, KCM and the driver.
    local rest_ms; rest_ms=$(ms_per_write "$(cpu_seconds "$M_BEFORE" "$M_AFTER" draco)" "$M_WRITES")
    echo "== draco: the rest of the pipeline uses $rest_ms ms of CPU per write; with draco at zero CPU and all $(nproc) cores busy it could serve at most $(awk -v c="$(nproc)" -v r="$rest_ms" -v w="$wps" 'BEGIN{printf "%.0f writes/s = %.0f%%", 1000*c/r, 100*1000*c/r/w}') of the write ceiling" >&2
  fi
  record "$name" "$r"
  echo "== $name: cleanup" >&2
  "$TP" cleanup -ns "$ns" -timeout 5m
  eval "${name}_result='$r'"
}

upstream_result="" draco_result=""
run_upstream() {
  start_resourceclaim_kcm
  side upstream false resourceclaim-kcm "$kcm_pid"
  stop_resourceclaim_kcm
}
# start_resourceclaim_kcm: a second kube-controller-manager with only upstream's resourceclaim
# controller (the local cluster's own runs without it).
start_resourceclaim_kcm() {
  "$DRACO_BIN/kube-controller-manager" --kubeconfig="$KUBECONFIG" \
    --authentication-kubeconfig="$KUBECONFIG" --authorization-kubeconfig="$KUBECONFIG" \
    --leader-elect=false --bind-address=127.0.0.1 --secure-port=0 \
    --controllers=resourceclaim-controller --use-service-account-credentials=false \
    --kube-api-qps="$QPS" --kube-api-burst=$((QPS * 2)) --feature-gates="$FEATURE_GATES" --v=1 \
    >"$WORK/kcm-resourceclaim.log" 2>&1 &
  kcm_pid=$!
  CPU_PIDS[resourceclaim-kcm]=$kcm_pid
  sleep 3
}
stop_resourceclaim_kcm() {
  kill "$kcm_pid"; wait "$kcm_pid" 2>/dev/null || true; kcm_pid=""; unset "CPU_PIDS[resourceclaim-kcm]"
}
run_draco_kcm() {
  start_resourceclaim_kcm
  run_draco draco_kcm upstream
  stop_resourceclaim_kcm
}
# run_draco [SIDE [OWNER]]: draco (--claim-lifecycle auto) until it has decided that OWNER (draco)
# owns the claim lifecycle, then the side's pods.
run_draco() {
  local name=${1:-draco} owner=${2:-draco}
  "$DRACO_EXE" run --kubeconfig "$KUBECONFIG" --leader-elect=false "${LIFECYCLE_FLAGS[@]}" \
    --kube-api-qps "$QPS" --kube-api-burst $((QPS * 2)) --workers "$WORKERS" \
    --metrics-bind-address 127.0.0.1:$METRICS_PORT --health-probe-bind-address 127.0.0.1:$HEALTH_PORT \
    $DRACO_FLAGS >"$WORK/$name.log" 2>&1 &
  draco_pid=$!
  CPU_PIDS[draco]=$draco_pid
  until curl -sf 127.0.0.1:$HEALTH_PORT/readyz >/dev/null; do sleep 0.5; done
  local t=0
  until ((${#LIFECYCLE_FLAGS[@]} == 0)) ||
    [[ $(curl -s 127.0.0.1:$METRICS_PORT/metrics) == *"draco_claim_lifecycle_owner{owner=\"$owner\"} 1"* ]]; do
    ((t++ < 120)) || { echo "draco did not decide that $owner owns the claim lifecycle in 60 s" >&2; exit 1; }
    sleep 0.5
  done
  side "$name" true draco "$draco_pid"
  curl -s 127.0.0.1:$METRICS_PORT/metrics >"$WORK/$name-metrics-full.txt" || true
  grep -E '^draco_(allocation_attempts_total|double_allocated_devices|double_allocation_repairs_total|reconcile_total|claim_lifecycle)' "$WORK/$name-metrics-full.txt" >"$WORK/$name-metrics.txt" || true
  local r=${name}_result doubles
  doubles=$(awk '$1=="draco_double_allocated_devices" {print $2+0}' "$WORK/$name-metrics-full.txt")
  eval "${name}_result='$(sed "s/}\$/,\"double_allocated_devices_end\":${doubles:-0},\"claim_lifecycle_owner\":\"$owner\"}/" <<<"${!r}")'"
  record "$name-summary" "${!r}"
  kill "$draco_pid"; wait "$draco_pid" 2>/dev/null || true; draco_pid=""
}
# The side that runs second finds the API server, etcd and kube-scheduler warmer and etcd's
# history longer; --order draco-first swaps the sides so that a series of runs can alternate.
upstream_result="" draco_result="" draco_kcm_result=""
draco_sides=draco
[[ $LIFECYCLE == upstream ]] && draco_sides=draco_kcm
[[ $LIFECYCLE == both ]] && draco_sides="draco draco_kcm"
for s in $( [[ $ORDER == draco-first ]] && echo $draco_sides upstream || echo upstream $draco_sides); do
  [[ -z $ONLY || $ONLY == "$s" || ($ONLY == draco && $s == draco_kcm) ]] && "run_$s"
done

field() { sed -n "s/.*\"$2\":\([0-9.e+-]*\).*/\1/p" <<<"$1"; }
echo
# cost_table: per-pod costs, both modes.
cost_table() {
  printf '%-9s %10s %13s %12s %13s %13s %14s\n' side writes/pod apiserver_ms own_cpu_ms sched_cpu_ms own_rss_MiB sched_rss_MiB
  local s r
  for s in upstream draco draco_kcm; do
    r=${s}_result; r=${!r}
    [[ -n $r ]] || continue
    printf '%-9s %10.2f %13.2f %12.2f %13.2f %13.0f %14.0f\n' "$s" "$(field "$r" api_writes_per_pod)" \
      "$(field "$r" apiserver_cpu_ms_per_pod)" "$(field "$r" own_cpu_ms_per_pod)" \
      "$(field "$r" scheduler_cpu_ms_per_pod)" "$(awk -v k="$(field "$r" own_rss_peak_kb)" 'BEGIN{print k/1024}')" \
      "$(awk -v k="$(field "$r" scheduler_rss_kb)" 'BEGIN{print k/1024}')"
  done
  echo "(own = draco, or upstream's resourceclaim kube-controller-manager; CPU per pod in ms; own RSS is the peak)"
  for side_name in upstream draco draco_kcm; do
    r=${side_name}_result
    [[ $MODE == steady && -n ${!r} && ${!r} == *own_rss_warm_kb* ]] || continue
    printf '%-9s RSS MiB after 60 s -> at the end: own %s -> %s, kube-scheduler %s -> %s\n' "$side_name" \
      "$(awk -v k="$(field "${!r}" own_rss_warm_kb)" 'BEGIN{printf "%.0f", k/1024}')" \
      "$(awk -v k="$(field "${!r}" own_rss_end_kb)" 'BEGIN{printf "%.0f", k/1024}')" \
      "$(awk -v k="$(field "${!r}" scheduler_rss_warm_kb)" 'BEGIN{printf "%.0f", k/1024}')" \
      "$(awk -v k="$(field "${!r}" scheduler_rss_end_kb)" 'BEGIN{printf "%.0f", k/1024}')"
  done
}
if [[ $MODE == steady ]]; then
  echo "== results: steady state, $RATE pods/s for ${DURATION}s ($PODS pods), $NODES nodes x $DEVICES devices, qps $QPS"
  printf '%-9s %7s %8s %10s %10s %10s %10s %13s\n' side bound pods/s bound_p50 bound_p90 bound_p99 bound_max ungated_p50
  for s in upstream draco draco_kcm; do
    r=${s}_result; r=${!r}
    [[ -n $r ]] || continue
    printf '%-9s %7d %8.1f %8.0fms %8.0fms %8.0fms %8.0fms %11.0fms\n' "$s" "$(field "$r" bound)" \
      "$(field "$r" pods_per_second)" "$(field "$r" pod_bound_ms_p50)" "$(field "$r" pod_bound_ms_p90)" \
      "$(field "$r" pod_bound_ms_p99)" "$(field "$r" pod_bound_ms_max)" "$(field "$r" gate_removed_ms_p50)"
  done
  cost_table
  exit 0
fi
echo "== results ($PODS pods, $NODES nodes x $DEVICES devices, qps $QPS; write ceiling $(printf %.0f "$wps") writes/s => $(awk -v w="$wps" -v k=$WRITES_PER_POD 'BEGIN{printf "%.1f", w/k}') pods/s at $WRITES_PER_POD writes/pod)"
printf '%-9s %8s %8s %9s %9s %9s %10s %10s %8s %9s %11s\n' side seconds pods/s alloc_p50 alloc_p90 alloc_p99 bound_p50 bound_p99 ceiling% writes/pod write_rate%
for s in upstream draco draco_kcm; do
  r=${s}_result; r=${!r}
  [[ -n $r ]] || continue
  pps=$(field "$r" pods_per_second)
  printf '%-9s %8.1f %8.1f %8.0fms %8.0fms %8.0fms %9.0fms %9.0fms %7.0f%% %9.2f %10.0f%%\n' "$s" \
    "$(field "$r" seconds)" "$pps" "$(field "$r" claim_alloc_ms_p50)" "$(field "$r" claim_alloc_ms_p90)" \
    "$(field "$r" claim_alloc_ms_p99)" "$(field "$r" pod_bound_ms_p50)" "$(field "$r" pod_bound_ms_p99)" \
    "$(awk -v p="$pps" -v w="$wps" -v k=$WRITES_PER_POD 'BEGIN{printf "%.0f", 100*p*k/w}')" \
    "$(field "$r" api_writes_per_pod)" \
    "$(awk -v a="$(field "$r" api_writes_per_second)" -v w="$wps" 'BEGIN{printf "%.0f", 100*a/w}')"
done
for s in upstream draco draco_kcm; do
  r=${s}_result; r=${!r}
  [[ -n $r ]] && echo "$s: devices allocated to two live claims at once (seen by the driver's watch): $(field "$r" api_double_allocations)"
done
cost_table
for s in upstream draco draco_kcm; do
  r=${s}_result; r=${!r}
  [[ -n $r ]] && echo "$s: claims seen before their pod was bound $(field "$r" claims_before_bound) for $PODS pod claim entries ($(field "$r" pods_with_two_claims) pods with two), claim creates at the API server $(field "$r" claims_created), claims 30 s after every pod finished $(field "$r" claims_with_pods_finished), claims left once the pods were deleted $(field "$r" claims_left)$( [[ $s != upstream ]] && echo ", devices in two claims at the end (draco's audit) $(field "$r" double_allocated_devices_end)")"
done
for s in draco draco_kcm; do
  [[ -f $WORK/$s-metrics.txt ]] && { echo "$s:"; grep -E 'double_allocated|allocation_attempts|claim_lifecycle_owner' "$WORK/$s-metrics.txt"; } || true
done
