#!/usr/bin/env bash
# Soak: draco (leader election on, one replica) under a steady pod rate for a long time, with its
# resident memory, open file descriptors and threads sampled from /proc into a CSV; judged "no
# growth after warm-up". The load driver (e2e/chaos/load) creates gated one-device pods at
# --rate pods/s on --nodes fake nodes x --devices devices, plays the kubelet (a bound pod
# succeeds at once) and deletes every succeeded pod, so the number of live objects stays level:
# any growth is draco's own. At the end no claim may be left, neither in the API server nor in
# draco's cache (its draco_resource_claims gauge).
#
# Usage: e2e/chaos/soak.sh [--duration 60m] [--rate 4] [--nodes 50] [--devices 8]
#                          [--warmup 10m] [--interval 30] [--rss-slack 3] [--fd-slack 2] [--out DIR]
#        e2e/chaos/soak.sh --judge FILE.csv [--warmup 10m]     (judge an existing CSV)
# Control plane: e2e/cluster/up.sh with the DRACO_E2E_DIR / DRACO_API_PORT / DRACO_ETCD_PORT /
# DRACO_ETCD_PEER_PORT of the environment (started when not running). draco's metrics and probe
# ports: $DRACO_SOAK_PORT and the next one (default 21451).
#
# Judgement, over the samples after warm-up: "start" is the median of the first quarter of them,
# "end" the median of the last quarter. It fails when end RSS > start RSS x (1 + --rss-slack %,
# default 3: with draco's two malloc arenas the RSS of a 16-minute soak moved 0.3 %; with glibc's
# default per-thread arenas it crept up 7 % and in a 1-hour soak 9 %), or end fds or
# threads > start + their slack (--fd-slack, default 2: the HTTP connection pool opens and closes
# connections with the load, 28..38 fds in a 1-hour run, while a leak grows without bound;
# --thread-slack, default 0). Exit 0 = no growth.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DURATION=60m RATE=4 NODES=50 DEVICES=8 WARMUP=10m INTERVAL=30 OUT="" JUDGE="" FD_SLACK=2 THREAD_SLACK=0 RSS_SLACK=3
while (($#)); do
  case $1 in
    --duration) DURATION=$2; shift 2 ;;
    --rate) RATE=$2; shift 2 ;;
    --nodes) NODES=$2; shift 2 ;;
    --devices) DEVICES=$2; shift 2 ;;
    --warmup) WARMUP=$2; shift 2 ;;
    --interval) INTERVAL=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --judge) JUDGE=$2; shift 2 ;;
    --fd-slack) FD_SLACK=$2; shift 2 ;;
    --rss-slack) RSS_SLACK=$2; shift 2 ;;
    --thread-slack) THREAD_SLACK=$2; shift 2 ;;
    *) echo "unknown flag $1" >&2; exit 2 ;;
  esac
done
# seconds 60m|90s|1h|120 -> seconds
seconds() {
  local v=$1
  case $v in
    *h) echo $((${v%h} * 3600)) ;;
    *m) echo $((${v%m} * 60)) ;;
    *s) echo "${v%s}" ;;
    *) echo "$v" ;;
  esac
}

# judge CSV WARMUP_SECONDS: prints the figures, returns 1 on growth.
judge() {
  python3 - "$1" "$2" "$FD_SLACK" "$THREAD_SLACK" "$RSS_SLACK" <<'PY'
import csv, statistics, sys
path, warm, fd_slack, thr_slack = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
rss_slack = float(sys.argv[5])
rows = [r for r in csv.DictReader(open(path)) if float(r["elapsed_s"]) >= warm]
if len(rows) < 8:
    print(f"judge: only {len(rows)} samples after the {warm:.0f}s warm-up; need 8")
    sys.exit(2)
q = max(1, len(rows) // 4)
first, last = rows[:q], rows[-q:]
med = lambda rs, k: statistics.median(float(r[k]) for r in rs)
ok = True
print(f"samples after warm-up: {len(rows)} ({rows[0]['elapsed_s']}s..{rows[-1]['elapsed_s']}s); "
      f"start = median of the first {q}, end = median of the last {q}")
for key, limit, unit in (("rss_kb", None, "KiB"), ("fds", fd_slack, ""), ("threads", thr_slack, "")):
    s, e = med(first, key), med(last, key)
    lo = min(float(r[key]) for r in rows)
    hi = max(float(r[key]) for r in rows)
    if limit is None:
        bad = e > s * (1 + rss_slack / 100)
        rule = f"end <= start x {1 + rss_slack / 100:.2f}"
    else:
        bad = e > s + limit
        rule = f"end <= start + {limit}"
    ok &= not bad
    print(f"{key:8s} start {s:10.0f} end {e:10.0f} ({(e - s) / s * 100 if s else 0:+.1f}%) "
          f"min {lo:.0f} max {hi:.0f} {unit:4s} {'FAIL' if bad else 'ok'} ({rule})")
sys.exit(0 if ok else 1)
PY
}

if [[ -n $JUDGE ]]; then
  judge "$JUDGE" "$(seconds "$WARMUP")"
  exit
fi

source "$ROOT/e2e/cluster/lib.sh"
"$ROOT/e2e/cluster/up.sh" >/dev/null
source "$D/env"
WORK=${OUT:-$D/soak}
mkdir -p "$WORK"
source "$ROOT/e2e/chaos/lib.sh"
DUR_S=$(seconds "$DURATION") WARM_S=$(seconds "$WARMUP")
((WARM_S < DUR_S)) || die "--warmup must be shorter than --duration"
PORT=${DRACO_SOAK_PORT:-21451}
NS=draco-soak
CSV=$WORK/soak.csv

draco_pid="" load_pid=""
cleanup() {
  [[ -n $load_pid ]] && kill "$load_pid" 2>/dev/null || true
  [[ -n $draco_pid ]] && kill "$draco_pid" 2>/dev/null || true
  wait 2>/dev/null || true
}
trap cleanup EXIT

log "building"
build_tools
log "setup: $NODES nodes x $DEVICES devices"
"$WORK/bin/throughput" setup -nodes "$NODES" -devices "$DEVICES"
sa_kubeconfig $NS draco "$WORK/draco.kubeconfig"
"$DRACO" run --kubeconfig "$WORK/draco.kubeconfig" --leader-elect=true --leader-elect-namespace $NS \
  --metrics-bind-address "127.0.0.1:$PORT" --health-probe-bind-address "127.0.0.1:$((PORT + 1))" \
  --kube-api-qps 200 --kube-api-burst 400 --workers 16 >"$WORK/draco.log" 2>&1 &
draco_pid=$!
for _ in $(seq 120); do curl -sf "127.0.0.1:$((PORT + 1))/readyz" >/dev/null && break; sleep 0.5; done
curl -sf "127.0.0.1:$((PORT + 1))/readyz" >/dev/null || die "draco not ready: $WORK/draco.log"
log "draco pid $draco_pid; load: $RATE pods/s for $DURATION; samples every ${INTERVAL}s in $CSV"

"$WORK/bin/load" -ns $NS -pods 0 -rate "$RATE" -duration "${DUR_S}s" -delete-done -concurrency 8 \
  -timeline "$WORK/allocations.txt" -timeout "$((DUR_S + 600))s" >"$WORK/load.json" 2>"$WORK/load.log" &
load_pid=$!
echo "unix_time,elapsed_s,rss_kb,fds,threads,allocations" >"$CSV"
t0=$SECONDS
while kill -0 "$load_pid" 2>/dev/null && ((SECONDS - t0 <= DUR_S)); do
  kill -0 "$draco_pid" 2>/dev/null || die "draco exited during the soak: $WORK/draco.log"
  read -r rss fds thr < <(proc_sample "$draco_pid")
  echo "$(date +%s),$((SECONDS - t0)),$rss,$fds,$thr,$({ wc -l <"$WORK/allocations.txt"; } 2>/dev/null || echo 0)" >>"$CSV"
  sleep "$INTERVAL"
done
log "load stops creating; waiting for it to finish"
wait "$load_pid" || die "the load driver failed: $WORK/load.log"
load_pid=""
cat "$WORK/load.json"

# Nothing leaked: every pod was deleted after it succeeded, so its claim must go too.
end=$((SECONDS + 180))
until [[ $(kubectl get resourceclaims -n $NS --no-headers 2>/dev/null | wc -l) -eq 0 ]]; do
  ((SECONDS < end)) || die "claims left 180 s after the last pod: $(kubectl get resourceclaims -n $NS --no-headers | head -5)"
  sleep 2
done
log "no claim left in $NS"
kill -0 "$draco_pid" 2>/dev/null || die "draco exited"
# ... nor in draco's cache (a claim it kept after its deletion would hold its devices forever).
cached() { curl -s "127.0.0.1:$PORT/metrics" | awk '$1 ~ /^draco_resource_claims\{/ {s += $2} END {print s + 0}'; }
end=$((SECONDS + 60))
until [[ $(cached) -eq 0 ]]; do
  ((SECONDS < end)) || { judge "$CSV" "$WARM_S" || true; die "draco's cache still holds $(cached) claims that the API server no longer has"; }
  sleep 2
done
log "draco's cache holds no claim either"
dbl=$(curl -s "127.0.0.1:$PORT/metrics" | awk '$1 ~ /^draco_double_allocated_devices/ {s += $2} END {print s + 0}')
log "draco's own double-allocation gauge: $dbl"
judge "$CSV" "$WARM_S"
