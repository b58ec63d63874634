#!/usr/bin/env bash
# Chaos run: two draco replicas with leader election under a pod load, one fault per phase, each
# phase ending with the invariants checked from the API server's side (audit log) and kubectl:
#   latency    the leader's connections to the API server get --latency-ms per chunk, both ways,
#              for --fault-seconds (a TCP proxy, e2e/chaos/proxy, sits between each replica and
#              kube-apiserver)
#   resets     the leader's connections are reset every 3 s for --fault-seconds
#   partition  the leader's proxy drops everything for --partition seconds: the leader must stop
#              writing by its renew deadline and the standby take over
#   etcd       etcd restarts (down --etcd-down seconds)
#   apiserver  kube-apiserver restarts twice, 5 s apart
#   apf        API priority and fairness: a FlowSchema sends draco's ServiceAccount to a priority
#              level of --apf-shares nominal shares (1: about 3 seats of the default 600), no
#              borrowing and limitResponse Reject (429 + Retry-After) for --throttle seconds, then
#              both are removed
#   rolling    a rolling update of the pair: start a new replica, SIGTERM an old one, twice
# Load (e2e/chaos/load): --pods gated one-device pods at --rate pods/s on --nodes fake nodes x
# --devices devices (tests/bench/throughput's setup); the driver plays the kubelet, so pods
# succeed at once and devices recycle. The fault starts once the load runs (--fault-after s).
# Invariants per phase: every pod bound; one claim per pod (claim creates in the audit log); no
# device given to a claim while another held it (claim states replayed in etcd revision order from
# the audit log's response objects); nothing leaked (no claim still allocated once every pod
# succeeded); no draco write later than the renew deadline after its replica's last Lease write;
# every pod binding found its pod's claims allocated on that node and reserved for the pod (the
# claims' states committed before the binding request, from the audit log; what a kubelet needs).
# Recovery per fault: fault end -> first successful draco write (audit log), -> allocations back
# at half the pre-fault rate (the driver's watch), and for leader faults the standby's first write.
#
# Usage: e2e/chaos/chaos.sh [--phases latency,resets,partition,etcd,apiserver,apf,rolling] [--pods 2000]
#          [--nodes 200] [--devices 8] [--rate 20] [--fault-after 20] [--fault-seconds 30]
#          [--latency-ms 300] [--partition 30] [--etcd-down 0] [--throttle 60] [--apf-shares 1]
#          [--out DIR]
# Control plane: e2e/cluster/up.sh with the environment's DRACO_E2E_DIR / DRACO_API_PORT /
# DRACO_ETCD_PORT / DRACO_ETCD_PEER_PORT (started when not running; kube-apiserver is restarted
# with the chaos audit policy). Extra ports: DRACO_CHAOS_PORT (default 21444) .. +5 for the two
# proxies and their control addresses, +4 .. +15 for the replicas' metrics and probes.
# Exit status: 0 when every phase kept every invariant. Results: $OUT/results.md.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PHASES=latency,resets,partition,etcd,apiserver,apf,rolling PODS=2000 NODES=200 DEVICES=8 RATE=20
FAULT_AFTER=20 FAULT_S=30 LATENCY_MS=300 PARTITION=30 ETCD_DOWN=0 THROTTLE=60 APF_SHARES=1 OUT=""
while (($#)); do
  case $1 in
    --phases) PHASES=$2; shift 2 ;;
    --pods) PODS=$2; shift 2 ;;
    --nodes) NODES=$2; shift 2 ;;
    --devices) DEVICES=$2; shift 2 ;;
    --rate) RATE=$2; shift 2 ;;
    --fault-after) FAULT_AFTER=$2; shift 2 ;;
    --fault-seconds) FAULT_S=$2; shift 2 ;;
    --latency-ms) LATENCY_MS=$2; shift 2 ;;
    --partition) PARTITION=$2; shift 2 ;;
    --etcd-down) ETCD_DOWN=$2; shift 2 ;;
    --throttle) THROTTLE=$2; shift 2 ;;
    --apf-shares) APF_SHARES=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    *) echo "unknown flag $1" >&2; exit 2 ;;
  esac
done
source "$ROOT/e2e/cluster/lib.sh"
CLUSTER=$ROOT/e2e/cluster
"$CLUSTER/up.sh" >/dev/null
source "$D/env"
WORK=${OUT:-$D/chaos}
mkdir -p "$WORK"
source "$ROOT/e2e/chaos/lib.sh"
source "$ROOT/e2e/chaos/faults.sh"
LEASE=15 DEADLINE=10 RETRY=2 # draco's defaults
SYS_NS=chaos-system
AUDIT=$D/logs/audit.log
P0=${DRACO_CHAOS_PORT:-21444}

# --- the audit log ------------------------------------------------------------------------------
cat >"$D/chaos-audit-policy.yaml" <<'YAML'
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived, ResponseStarted]
rules:
- level: RequestResponse
  verbs: [create, update, patch, delete]
  resources:
  - {group: resource.k8s.io, resources: [resourceclaims, resourceclaims/status]}
- level: Request
  verbs: [create]
  resources:
  - {group: "", resources: [pods/binding]}
- level: Metadata
  verbs: [create, update, patch, delete]
  resources:
  - {group: "", resources: [pods, pods/status, events]}
  - {group: events.k8s.io, resources: [events]}
  - {group: coordination.k8s.io, resources: [leases]}
- level: None
YAML
if ! pgrep -f -- "--audit-policy-file=$D/chaos-audit-policy.yaml" >/dev/null; then
  log "restarting kube-apiserver with the chaos audit policy"
  DRACO_AUDIT_POLICY=$D/chaos-audit-policy.yaml "$CLUSTER/restart-apiserver.sh" >/dev/null
fi
DRACO_AUDIT_POLICY=$D/chaos-audit-policy.yaml # restart-etcd.sh does not touch kube-apiserver

declare -A PIDS=() PORTS=() KCONF=() CTL=()
proxy_pids=()
cleanup() {
  local n
  for n in "${!PIDS[@]}"; do kill -KILL "${PIDS[$n]}" 2>/dev/null || true; done
  for n in "${proxy_pids[@]}"; do kill "$n" 2>/dev/null || true; done
  kubectl delete flowschema,prioritylevelconfiguration chaos-draco-throttle --ignore-not-found >/dev/null 2>&1 || true
  wait 2>/dev/null || true
}
trap cleanup EXIT

log "building"
build_tools
log "setup: $NODES nodes x $DEVICES devices"
"$WORK/bin/throughput" setup -nodes "$NODES" -devices "$DEVICES"
# Two proxies: replica slot a and slot b each reach kube-apiserver through its own.
api=127.0.0.1:${DRACO_APISERVER##*:}
for i in 0 1; do
  "$WORK/bin/proxy" -listen "127.0.0.1:$((P0 + i))" -target "$api" -control "127.0.0.1:$((P0 + 2 + i))" \
    >"$WORK/proxy-$i.log" 2>&1 &
  proxy_pids+=($!)
done
sa_kubeconfig $SYS_NS draco "$WORK/a.kubeconfig" "https://127.0.0.1:$P0"
sa_kubeconfig $SYS_NS draco "$WORK/b.kubeconfig" "https://127.0.0.1:$((P0 + 1))"
sa_kubeconfig $SYS_NS draco "$WORK/direct.kubeconfig"
KCONF=([a]=$WORK/a.kubeconfig [b]=$WORK/b.kubeconfig [c]=$WORK/direct.kubeconfig [d]=$WORK/direct.kubeconfig)
PORTS=([a]=$((P0 + 4)) [b]=$((P0 + 10)) [c]=$((P0 + 12)) [d]=$((P0 + 14)))
CTL=([a]=$((P0 + 2)) [b]=$((P0 + 3)))

# start_replica NAME PHASE
start_replica() {
  local n=$1 port=${PORTS[$1]}
  "$DRACO" run --kubeconfig "${KCONF[$n]}" --leader-elect=true --leader-elect-namespace $SYS_NS \
    --leader-elect-lease-duration ${LEASE}s --leader-elect-renew-deadline ${DEADLINE}s \
    --leader-elect-retry-period ${RETRY}s --metrics-bind-address "127.0.0.1:$port" \
    --health-probe-bind-address "127.0.0.1:$((port + 1))" --kube-api-qps 200 --kube-api-burst 400 \
    --workers 16 >"$WORK/$2-$n.log" 2>&1 &
  PIDS[$n]=$!
}
stop_replica() {
  local pid=${PIDS[$1]:-}
  [[ -n $pid ]] || return 0
  kill -"${2:-TERM}" "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  unset "PIDS[$1]"
}
leads() { [[ $(curl -s "127.0.0.1:${PORTS[$1]}/metrics" | awk '$1=="leader_election_master_status{name=\"draco\"}" {print $2}') == 1 ]]; }
ready() { curl -sf "127.0.0.1:$((${PORTS[$1]} + 1))/readyz" >/dev/null; }
identity() { sed -n 's/.* leader election: lease [^ ]* as \([^ ]*\) .*/\1/p' "$WORK/$2-$1.log" | tail -1; }
leader() { local n; for n in "${!PIDS[@]}"; do leads "$n" && { echo "$n"; return 0; }; done; return 1; }
# until_true SECONDS CMD...
until_true() {
  local end=$((SECONDS + $1)); shift
  until "$@" >/dev/null 2>&1; do ((SECONDS < end)) || return 1; sleep 0.5; done
}
allocations() { wc -l <"$1" 2>/dev/null || echo 0; }

RESULTS=$WORK/results.md
failed=0
{
  echo "| phase | fault window | leader before -> after | standby's first write after fault start | first draco write after fault end | allocations at half rate after fault end | draco 429s | invariants |"
  echo "|---|---|---|---|---|---|---|---|"
} >"$RESULTS"

# rate_back TIMELINE START END: seconds after END until allocations run at half the rate of the 15 s
# before START (5 s windows).
rate_back() {
  python3 - "$1" "$2" "$3" <<'PY'
import sys
ts = sorted(float(l) for l in open(sys.argv[1]) if l.strip())
start, end = float(sys.argv[2]), float(sys.argv[3])
pre = sum(1 for t in ts if start - 15 <= t < start) / 15.0
if pre == 0:
    print("n/a (no allocations before the fault)"); sys.exit()
t = end
while t < (ts[-1] if ts else end):
    if sum(1 for x in ts if t <= x < t + 5) >= 0.5 * pre * 5:
        print("%.1f s" % (t - end)); sys.exit()
    t += 0.5
print("never")
PY
}

run_phase() {
  local phase=$1 ns=chaos-$1 t0 t1 load_pid tl=$WORK/$1.timeline
  log "=== phase $phase"
  kubectl delete namespace "$ns" --wait=true --timeout=180s >/dev/null 2>&1 || true
  rm -f "$tl"
  start_replica a "$phase"
  until_true 60 leads a || die "$phase: replica a does not lead"
  start_replica b "$phase"
  until_true 60 ready b || die "$phase: replica b not ready"
  t0=$(date +%s.%N)
  "$WORK/bin/load" -ns "$ns" -pods "$PODS" -rate "$RATE" -concurrency 16 -timeline "$tl" -timeout 30m \
    >"$WORK/$phase.load.json" 2>"$WORK/$phase.load.log" &
  load_pid=$!
  sleep "$FAULT_AFTER"
  [[ $(allocations "$tl") -gt 0 ]] || log "$phase: no allocation yet after ${FAULT_AFTER}s"
  LEADER=$(leader) || die "$phase: no leader"
  LEADER_ID=$(identity "$LEADER" "$phase")
  FAULT_START="" FAULT_END="" NOTE=""
  "fault_$phase"
  log "$phase: fault ${FAULT_START} .. ${FAULT_END}; waiting for the load"
  wait "$load_pid" || { log "$phase: the load did not finish: $WORK/$phase.load.log"; failed=1; }
  local after; after=$(leader || echo none)
  # --- invariants seen by kubectl
  local inv="" pods bound
  pods=$(kubectl get pods -n "$ns" --no-headers 2>/dev/null | wc -l)
  bound=$(kubectl get pods -n "$ns" -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep -c . || true)
  [[ $pods -eq $PODS && $bound -eq $PODS ]] || inv+="bound $bound/$pods of $PODS; "
  # Nothing leaked: every pod succeeded, so no claim may stay allocated.
  if ! until_true 120 bash -c "[[ \$(kubectl get resourceclaims -n $ns -o json | jq '[.items[] | select(.status.allocation != null)] | length') == 0 ]]"; then
    inv+="$(kubectl get resourceclaims -n "$ns" -o json | jq '[.items[] | select(.status.allocation != null)] | length') claims still allocated; "
  fi
  t1=$(date +%s.%N)
  sleep 1 # the audit log is written before the response: nothing of [t0, t1] is missing
  # kube-apiserver rotates the log at 500 MB: the rotated files (named by time) come first.
  local AUDIT_LOGS=("$D"/logs/audit-*.log "$AUDIT")
  [[ -e ${AUDIT_LOGS[0]} ]] || AUDIT_LOGS=("$AUDIT")
  local a rc=0
  a=$(python3 "$ROOT/e2e/chaos/audit.py" "${AUDIT_LOGS[@]}" --since "$t0" --until "$t1" --ns "$ns" \
    --deadline $DEADLINE --fault-start "$FAULT_START" --fault-end "$FAULT_END" --leader "$LEADER_ID") || rc=$?
  echo "$a" >"$WORK/$phase.audit.json"
  ((rc == 0)) || inv+="audit: $(jq -c '{deadline_violation_count, owners_with_several_claims, double_allocation_count, double_allocations, unusable_binding_count, unusable_bindings}' <<<"$a"); "
  # The load's "kubelet" starts a pod only once its claims are usable (allocated on its node,
  # reserved for it); pods it had to hold back are counted (a repair after the binding).
  local waited; waited=$(tail -n 1 "$WORK/$phase.load.json" | jq -r '.kubelet_waited // 0' 2>/dev/null || echo "?")
  log "$phase: bound before their claims were reserved: $(jq .binding_before_reservation_count <<<"$a"); the kubelet waited for $waited pod(s)"
  local owners; owners=$(jq .claim_owners <<<"$a")
  [[ $owners -eq $PODS ]] || inv+="claims created for $owners pods of $PODS; "
  log "$phase: audit $a"
  [[ -z $inv ]] || failed=1
  local fw other rb
  fw=$(jq -r '.first_write_after_end // "none"' <<<"$a")
  other=$(jq -r '.first_write_other_after_start // "-"' <<<"$a")
  rb=$(rate_back "$tl" "$FAULT_START" "$FAULT_END")
  printf '| %s | %.1f s%s | %s -> %s | %s | %s | %s | %s | %s |\n' "$phase" \
    "$(awk -v a="$FAULT_START" -v b="$FAULT_END" 'BEGIN {print b - a}')" "${NOTE:+ ($NOTE)}" \
    "$LEADER" "$after" "$([[ $other == - || $other == null ]] && echo - || echo "$other s")" \
    "$([[ $fw == none ]] && echo none || echo "$fw s")" "$rb" "$(jq .throttled <<<"$a")" \
    "${inv:-ok ($(jq .writes <<<"$a") writes, $(jq .claim_states_replayed <<<"$a") claim states, $owners claims)}" >>"$RESULTS"
  tail -1 "$RESULTS" >&2
  # --- clean up: the pods go, draco (still running) deletes their claims, then the replicas stop.
  kubectl delete pods --all -n "$ns" --grace-period=0 --force --wait=false >/dev/null 2>&1 || true
  until_true 180 bash -c "[[ \$(kubectl get resourceclaims -n $ns --no-headers 2>/dev/null | wc -l) -eq 0 ]]" ||
    log "$phase: claims left after the pods went"
  local n; for n in "${!PIDS[@]}"; do stop_replica "$n"; done
  kubectl delete namespace "$ns" --wait=false >/dev/null 2>&1 || true
}

IFS=, read -ra phases <<<"$PHASES"
for p in "${phases[@]}"; do
  declare -F "fault_$p" >/dev/null || die "unknown phase $p"
done
for p in "${phases[@]}"; do run_phase "$p"; done
echo
echo "chaos: $PODS pods per phase at $RATE pods/s on $NODES nodes x $DEVICES devices; lease ${LEASE}s, renew deadline ${DEADLINE}s, retry ${RETRY}s"
cat "$RESULTS"
exit $failed
