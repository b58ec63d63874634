#!/usr/bin/env bash
# Leader election checked from the API server's side: kube-apiserver is restarted with an audit
# policy that logs every write (create/update/patch/delete) of pods, claims, Events and Leases
# with its server-side timestamps; draco puts its replica identity into its User-Agent.
#  1. SIGTERM handover under load: the leader stops writing and releases the Lease; the
#     standby's first write lands <= 3 s after the signal, and after every write of the old leader;
#     the logs show it in order: the old leader's fence closed, its Lease released, the standby
#     leads.
#  2. A kube-apiserver restart shorter than the renew deadline does not cost leadership.
#  3. A leader that can still write but can no longer renew (its Lease permission is revoked)
#     commits no write later than the renew deadline after its last successful renewal; the
#     standby takes over; the old leader stays up as a candidate and leads again later.
# All along: no replica's write lands later than the renew deadline after its last successful
# Lease write, every pod is bound with one claim, no device is allocated twice.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/draco_helpers.sh"
NS=draco-handover
DRV=handover.draco.dev
CLUSTER=$E2E_ROOT/cluster
AUDIT=$DRACO_E2E_DIR/logs/audit.log
HANDOVER_MAX=${DRACO_E2E_HANDOVER_MAX:-3.0}
PODS=${DRACO_E2E_HANDOVER_PODS:-80}  # per batch; two fake nodes hold 110 pods each
LEASE=30 DEADLINE=20 RETRY=2  # seconds; the deadline exceeds a kube-apiserver restart here
tmp=$(mktemp -d)
restore() {
  stop_all_draco
  k delete clusterrole,clusterrolebinding draco-handover-sa --ignore-not-found >/dev/null 2>&1 || true
  cleanup_ns $NS  # no draco runs any more: it strips the claims' finalizers
  delete_driver $DRV node-0 node-1
  # Leave kube-apiserver as it was found: without the audit log.
  DRACO_AUDIT_POLICY= "$CLUSTER/restart-apiserver.sh" >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap restore EXIT

cat >"$tmp/audit-policy.yaml" <<'YAML'
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived, ResponseStarted]
rules:
- level: Metadata
  verbs: [create, update, patch, delete]
  resources:
  - {group: "", resources: [pods, pods/status, pods/binding, events]}
  - {group: resource.k8s.io, resources: [resourceclaims, resourceclaims/status]}
  - {group: coordination.k8s.io, resources: [leases]}
- level: None
YAML
DRACO_AUDIT_POLICY=$tmp/audit-policy.yaml "$CLUSTER/restart-apiserver.sh" >/dev/null
eventually 60 "kube-apiserver writes an audit log" test -f "$AUDIT"
T0=$(date +%s.%N)

k wait --for=delete namespace/$NS --timeout=120s >/dev/null 2>&1 || true
fresh_ns $NS
make_driver $NS $DRV 100 node-0 node-1  # a ResourceSlice holds at most 128 devices
template $NS one-dev $DRV | k apply -f - >/dev/null

# Replica B's kubeconfig is a ServiceAccount's whose Lease permission can be revoked on its own.
k create serviceaccount -n $NS draco >/dev/null
k apply -f - >/dev/null <<YAML
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: draco-handover-sa}
rules:
- apiGroups: ["", resource.k8s.io, draco.dev, events.k8s.io, storage.k8s.io]
  resources: ["*"]
  verbs: ["*"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: draco-handover-sa}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: draco-handover-sa}
subjects: [{kind: ServiceAccount, name: draco, namespace: $NS}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: lease, namespace: $NS}
rules:
- apiGroups: [coordination.k8s.io]
  resources: [leases]
  verbs: ["*"]
YAML
grant_lease() { k create rolebinding lease -n $NS --role=lease --serviceaccount=$NS:draco >/dev/null; }
grant_lease
cat >"$tmp/sa.kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster: {server: "$DRACO_APISERVER", certificate-authority: "$DRACO_CA"}
users:
- name: sa
  user: {token: "$(k create token draco -n $NS --duration=1h)"}
contexts:
- name: sa
  context: {cluster: e2e, user: sa}
current-context: sa
KC

LE=(--leader-elect=true --leader-elect-namespace $NS --leader-elect-lease-duration ${LEASE}s
  --leader-elect-renew-deadline ${DEADLINE}s --leader-elect-retry-period ${RETRY}s --workers 16)
leads() { [[ $(draco_metric "$1" 'leader_election_master_status{name="draco"}') == 1 ]]; }
identity() { sed -n 's/.* leader election: lease [^ ]* as \([^ ]*\) .*/\1/p' "$DRACO_LOGS/draco-$1.log" | tail -1; }
holder() { k get lease -n $NS draco -o jsonpath='{.spec.holderIdentity}'; }
# A fresh log per replica name.
start_replica() { : >"$DRACO_LOGS/draco-$1.log"; start_draco "$@"; }
# audit_rows: successful draco writes since T0, one per line, ordered by completion:
#   received completed identity lease|write verb resource/subresource name
audit_rows() {
  python3 - "$AUDIT" "$T0" <<'PY'
import datetime, json, sys
path, t0 = sys.argv[1], float(sys.argv[2])
def ts(s):
    return datetime.datetime.strptime(s, "%Y-%m-%dT%H:%M:%S.%fZ").replace(
        tzinfo=datetime.timezone.utc).timestamp()
rows = []
for line in open(path):
    try:
        e = json.loads(line)
    except ValueError:
        continue
    ua = e.get("userAgent", "")
    code = e.get("responseStatus", {}).get("code", 0)
    if e.get("stage") != "ResponseComplete" or not ua.startswith("draco/") or not 200 <= code < 300:
        continue
    done = ts(e["stageTimestamp"])
    if done < t0:
        continue
    r = e.get("objectRef", {})
    ident = ua.rsplit("/", 1)[-1]  # draco/VERSION (OS/ARCH) kubernetes/REVISION/IDENTITY
    kind = "lease" if r.get("resource") == "leases" else "write"
    rows.append((done, "%.6f\t%.6f\t%s\t%s\t%s\t%s/%s\t%s" % (
        ts(e["requestReceivedTimestamp"]), done, ident, kind, e["verb"], r.get("resource", ""),
        r.get("subresource", ""), r.get("name", ""))))
for _, row in sorted(rows):
    print(row)
PY
}
# log_time REPLICA TEXT: when REPLICA first logged a line containing TEXT (epoch seconds).
log_time() {
  local line
  line=$(grep -m1 -F -- "$2" "$DRACO_LOGS/draco-$1.log") || return 1
  date -u -d "${line%% *}" +%s.%N
}
# first_write_after ID T / last_write ID / first_lease_after ID T / last_lease_before ID T
first_write_after() { audit_rows | awk -F'\t' -v id="$1" -v t="$2" '!f && $3==id && $4=="write" && $2>=t {print $2; f=1}'; }
last_write() { audit_rows | awk -F'\t' -v id="$1" '$3==id && $4=="write" {t=$2} END {print t}'; }
first_lease_after() { audit_rows | awk -F'\t' -v id="$1" -v t="$2" '!f && $3==id && $4=="lease" && $1>=t {print $1; f=1}'; }
last_lease() { audit_rows | awk -F'\t' -v id="$1" '$3==id && $4=="lease" {t=$1} END {print t}'; }
# no_write_after_deadline: every write lands within the renew deadline of the same replica's
# last successful Lease write received before it.
no_write_after_deadline() {
  local bad
  bad=$(audit_rows | awk -F'\t' -v d="$DEADLINE" '
    $4=="lease" {renewed[$3]=$1; next}
    !($3 in renewed) || $2 > renewed[$3] + d {print; n++}
    END {exit n > 0}') || fail "writes later than the renew deadline after the last renewal:
$(head -5 <<<"$bad")"
  pass "no write landed later than ${DEADLINE}s after its replica's last Lease renewal ($(audit_rows | grep -c write) writes)"
}
pods_batch() { { for i in $(seq "$2" "$3"); do gated_pod $NS "$1-$i" one-dev; done; } | k apply -f - >/dev/null; }
bound_count() { k get pods -n $NS -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep -c . || true; }
all_bound() { [[ $(bound_count) -eq $(k get pods -n $NS --no-headers | wc -l) ]]; }

# --- 1. SIGTERM handover under load ------------------------------------------------------------
start_replica a "${LE[@]}"
eventually 60 "replica a leads" leads a
start_replica b --kubeconfig "$tmp/sa.kubeconfig" "${LE[@]}"
eventually 60 "replica b is a ready standby" draco_ready b
leads b && fail "two leaders"
id_a=$(identity a) id_b=$(identity b)
[[ -n $id_a && -n $id_b ]] || fail "no identities in the logs"
pods_batch h 1 "$PODS" &
apply_pid=$!
eventually 60 "the leader is busy (20 claims created)" \
  bash -c "[[ \$(kubectl get resourceclaims -n $NS --no-headers 2>/dev/null | wc -l) -ge 20 ]]"
t_sig=$(date +%s.%N)
stop_draco a TERM
eventually 30 "replica b leads" leads b
wait $apply_pid
sleep 2
first_b=$(first_write_after "$id_b" "$t_sig")
[[ -n $first_b ]] || fail "no write of b after the SIGTERM"
handover=$(awk -v a="$t_sig" -v b="$first_b" 'BEGIN {printf "%.2f", b - a}')
awk -v h="$handover" -v m="$HANDOVER_MAX" 'BEGIN {exit !(h <= m)}' ||
  fail "SIGTERM handover took ${handover}s to the standby's first write (max ${HANDOVER_MAX}s)"
pass "SIGTERM handover under load: b's first write landed ${handover}s after the signal"
last_a=$(last_write "$id_a")
acq_b=$(first_lease_after "$id_b" "$t_sig")
awk -v a="$last_a" -v b="$acq_b" 'BEGIN {exit !(a < b)}' ||
  fail "a wrote at $last_a, after b acquired the Lease at $acq_b"
pass "every write of a landed before b acquired the Lease ($(awk -v a="$last_a" -v b="$acq_b" 'BEGIN {printf "%.2f", b - a}')s earlier)"
grep -q "stopped" "$DRACO_LOGS/draco-a.log" || fail "a did not stop cleanly"
# The same handover in the two logs, in order: a closes its write fence, a releases the Lease,
# then b becomes leader (both replicas log on this host's clock).
t_fence=$(log_time a "write fence closed: no more writes under Lease $NS/draco as $id_a") ||
  fail "a did not log its write fence closing (with the Lease and its identity)"
t_release=$(log_time a "released Lease $NS/draco as $id_a") ||
  fail "a did not log releasing the Lease (with its identity)"
t_leader=$(log_time b "became leader") || fail "b did not log becoming leader"
awk -v f="$t_fence" -v r="$t_release" -v l="$t_leader" 'BEGIN {exit !(f <= r && r <= l)}' ||
  fail "log order: fence closed $t_fence, Lease released $t_release, b leads $t_leader"
pass "logs: a's fence closed, then a released the Lease ($(awk -v f="$t_fence" -v r="$t_release" 'BEGIN {printf "%.3f", r - f}')s later), then b became leader ($(awk -v r="$t_release" -v l="$t_leader" 'BEGIN {printf "%.3f", l - r}')s later)"
eventually 180 "all $PODS pods bound" all_bound

# --- 2. kube-apiserver restart shorter than the renew deadline -----------------------------------
transitions=$(k get lease -n $NS draco -o jsonpath='{.spec.leaseTransitions}')
t_down=$(date +%s.%N)
DRACO_AUDIT_POLICY=$tmp/audit-policy.yaml "$CLUSTER/restart-apiserver.sh" >/dev/null
restart_s=$(awk -v a="$t_down" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}')
if awk -v r="$restart_s" -v d="$DEADLINE" 'BEGIN {exit !(r < d - 2 * 2)}'; then
  sleep $((RETRY * 2))
  leads b || fail "b lost leadership over a ${restart_s}s API-server restart"
  [[ $(holder) == "$id_b" ]] || fail "Lease holder changed over the restart: $(holder)"
  [[ $(k get lease -n $NS draco -o jsonpath='{.spec.leaseTransitions}') == "$transitions" ]] ||
    fail "lease transitions changed over the restart"
  if grep -q "leadership lost" "$DRACO_LOGS/draco-b.log"; then fail "b logged a lost term"; fi
  pass "b kept leadership over a ${restart_s}s kube-apiserver restart (renew deadline ${DEADLINE}s)"
else
  echo "NOTE: the restart took ${restart_s}s, too close to the ${DEADLINE}s deadline to assert" >&2
fi

# --- 3. A leader that cannot renew stops writing by the deadline; it stays a candidate ----------
start_replica c "${LE[@]}"
eventually 60 "replica c is a ready standby" draco_ready c
id_c=$(identity c)
# Load for b: the first batch goes (claims to clean up) and a new batch comes.
k delete pods -n $NS $(k get pods -n $NS -o name | grep '/h-' | sed 's|.*/||') --grace-period=0 \
  --force --wait=false >/dev/null 2>&1
pods_batch r 1 "$PODS" &
apply_pid=$!
eventually 60 "b is busy with the new batch" \
  bash -c "[[ \$(kubectl get pods -n $NS -o name | grep -c /r-) -ge 20 && \$(kubectl get resourceclaims -n $NS --no-headers | wc -l) -ge 10 ]]"
k delete rolebinding lease -n $NS >/dev/null
t_revoke=$(date +%s.%N)
pass "revoked b's Lease permission while it leads"
# Keep b busy past its deadline: more pods arrive while it may no longer renew.
wait $apply_pid
pods_batch late 1 20
eventually $((LEASE + 30)) "c takes over after b's term ended" leads c
kill -0 "${DRACO_PIDS[b]}" 2>/dev/null || fail "b exited after losing leadership"
grep -q "campaigning again" "$DRACO_LOGS/draco-b.log" || fail "b did not log that it campaigns again"
pass "b lost leadership and stays up as a candidate"
pods_batch new 1 5  # work for c (b may have finished the rest before its deadline)
eventually 120 "all pods bound under c" all_bound
sleep 2
first_c=$(first_write_after "$id_c" "$t_revoke")
# b's last successful renewal (the revocation takes effect a moment after t_revoke).
renewed_b=$(audit_rows | awk -F'\t' -v id="$id_b" -v t="$first_c" '$3==id && $4=="lease" && $1 < t {r=$1} END {print r}')
last_b=$(last_write "$id_b")
[[ -n $renewed_b && -n $last_b && -n $first_c ]] || fail "audit log lacks b's renewal/writes or c's writes"
margin=$(awk -v r="$renewed_b" -v w="$last_b" -v d="$DEADLINE" 'BEGIN {printf "%.2f", r + d - w}')
awk -v m="$margin" 'BEGIN {exit !(m >= 0)}' ||
  fail "b's last write landed $(awk -v m="$margin" 'BEGIN {print -m}')s after its renew deadline"
pass "b's last write landed ${margin}s before its renew deadline (last renewal + ${DEADLINE}s)"
awk -v a="$last_b" -v b="$first_c" 'BEGIN {exit !(a < b)}' || fail "b and c wrote at the same time"
pass "c's first write came $(awk -v a="$last_b" -v b="$first_c" 'BEGIN {printf "%.2f", b - a}')s after b's last"

# b campaigns again: with its permission back and c gone, it leads and allocates again.
grant_lease
t_sig=$(date +%s.%N)
stop_draco c TERM
eventually 30 "b leads again" leads b
pods_batch again 1 5
eventually 120 "b allocates again" all_bound
first_b=$(first_write_after "$id_b" "$t_sig")
pass "b leads again; its first write landed $(awk -v a="$t_sig" -v b="$first_b" 'BEGIN {printf "%.2f", b - a}')s after c's SIGTERM"

no_write_after_deadline
owners=$(k get resourceclaims -n $NS -o jsonpath='{range .items[*]}{.metadata.ownerReferences[0].uid}{"\n"}{end}')
total=$(grep -c . <<<"$owners")
unique=$(sort -u <<<"$owners" | grep -c .)
pods=$(k get pods -n $NS --no-headers | wc -l)
[[ $total -eq $pods && $unique -eq $pods ]] || fail "claims: $total for $unique owners, want $pods each once"
pass "exactly one claim per pod ($total claims)"
no_double_allocation
