# The faults of e2e/chaos/chaos.sh, one function per phase (sourced). Each runs while the load
# does and sets FAULT_START and FAULT_END (Unix seconds) and optionally NOTE. They see chaos.sh's
# LEADER (the replica slot that leads when the fault starts), CTL (proxy control ports by slot)
# and start_replica/stop_replica/leader/ready.

now() { date +%s.%N; }
# proxy_cmd SLOT COMMAND: one order to the slot's proxy.
proxy_cmd() { curl -sf "127.0.0.1:${CTL[$1]}/$2" >/dev/null || die "proxy $1: $2 failed"; }
leader_proxy() {
  [[ -n ${CTL[$LEADER]:-} ]] || die "the leader ($LEADER) has no proxy"
  echo "$LEADER"
}

fault_latency() {
  local slot; slot=$(leader_proxy)
  FAULT_START=$(now)
  proxy_cmd "$slot" "latency?ms=$LATENCY_MS"
  sleep "$FAULT_S"
  proxy_cmd "$slot" "latency?ms=0"
  FAULT_END=$(now)
  NOTE="${LATENCY_MS} ms per chunk on $slot"
}

fault_resets() {
  local slot end n=0; slot=$(leader_proxy)
  FAULT_START=$(now)
  end=$((SECONDS + FAULT_S))
  while ((SECONDS < end)); do
    proxy_cmd "$slot" reset
    n=$((n + 1))
    sleep 3
  done
  FAULT_END=$(now)
  NOTE="$n resets of $slot's connections"
}

# The leader is cut off: it must stop writing by its renew deadline (nothing it sends during the
# partition arrives anyway: the proxy drops it), and the standby must take over after the lease
# expires. After the partition the old leader stays up as a candidate.
fault_partition() {
  local slot; slot=$(leader_proxy)
  FAULT_START=$(now)
  proxy_cmd "$slot" partition
  sleep "$PARTITION"
  proxy_cmd "$slot" heal
  FAULT_END=$(now)
  local other; other=$(leader || echo none)
  [[ $other != "$slot" ]] || log "partition: $slot still reports leading after the partition"
  grep -q "leadership lost" "$WORK/partition-$slot.log" ||
    log "partition: $slot did not log that it lost leadership"
  kill -0 "${PIDS[$slot]}" 2>/dev/null || log "partition: $slot exited"
  NOTE="$slot cut off"
}

fault_etcd() {
  FAULT_START=$(now)
  "$CLUSTER/restart-etcd.sh" --down "$ETCD_DOWN" >/dev/null
  # kube-apiserver is ready again when its etcd check passes.
  until_true 120 apiserver_ready || die "kube-apiserver not ready after the etcd restart"
  FAULT_END=$(now)
  NOTE="etcd down ${ETCD_DOWN}s"
}

# Two kube-apiserver restarts a few seconds apart while the load runs: every watch (draco's and
# kube-scheduler's) re-lists, and kube-scheduler's claim cache lags behind draco's writes for a
# while (issue #21: pods bound while their claim, allocated on that node, was not reserved).
fault_apiserver() {
  FAULT_START=$(now)
  # With the chaos audit policy, or the invariants after the restart would have no log to read.
  DRACO_AUDIT_POLICY=$DRACO_AUDIT_POLICY "$CLUSTER/restart-apiserver.sh" >/dev/null
  sleep 5
  DRACO_AUDIT_POLICY=$DRACO_AUDIT_POLICY "$CLUSTER/restart-apiserver.sh" >/dev/null
  FAULT_END=$(now)
  NOTE="kube-apiserver restarted twice"
}

fault_apf() {
  FAULT_START=$(now)
  kubectl apply -f - >/dev/null <<YAML
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: PriorityLevelConfiguration
metadata: {name: chaos-draco-throttle}
spec:
  type: Limited
  limited:
    nominalConcurrencyShares: $APF_SHARES
    lendablePercent: 0
    borrowingLimitPercent: 0
    limitResponse: {type: Reject}
---
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: FlowSchema
metadata: {name: chaos-draco-throttle}
spec:
  priorityLevelConfiguration: {name: chaos-draco-throttle}
  matchingPrecedence: 50
  distinguisherMethod: {type: ByUser}
  rules:
  - subjects:
    - kind: ServiceAccount
      serviceAccount: {name: draco, namespace: $SYS_NS}
    resourceRules:
    - {verbs: ["*"], apiGroups: ["*"], resources: ["*"], clusterScope: true, namespaces: ["*"]}
    nonResourceRules:
    - {verbs: ["*"], nonResourceURLs: ["*"]}
YAML
  sleep "$THROTTLE"
  kubectl delete flowschema,prioritylevelconfiguration chaos-draco-throttle >/dev/null
  FAULT_END=$(now)
  NOTE="draco's ServiceAccount in a Reject level of $APF_SHARES share(s), no borrowing"
}

# A Deployment-like rolling update with maxSurge 1: a new replica starts (and becomes a ready
# standby) before each old one gets SIGTERM. The old leader goes first. The fault window is the
# first SIGTERM to the second; each handover is logged.
fault_rolling() {
  local olds=("$LEADER") n new t
  for n in a b; do [[ $n == "$LEADER" ]] || olds+=("$n"); done
  local news=(c d) i
  NOTE=""
  for i in 0 1; do
    new=${news[$i]}
    start_replica "$new" rolling
    until_true 60 ready "$new" || die "rolling: $new not ready"
    local was_leader=no
    leads "${olds[$i]}" && was_leader=yes
    t=$(now)
    ((i == 0)) && FAULT_START=$t
    local old_id; old_id=$(identity "${olds[$i]}" rolling)
    stop_replica "${olds[$i]}" TERM
    until_true 60 leader || die "rolling: no leader after stopping ${olds[$i]}"
    # The next leader's first write after the signal, from the audit log.
    sleep 5
    local h
    local logs=("$D"/logs/audit-*.log "$AUDIT")
    [[ -e ${logs[0]} ]] || logs=("$AUDIT")
    h=$(python3 "$ROOT/e2e/chaos/audit.py" "${logs[@]}" --since "$t" --until "$(now)" --ns "chaos-rolling" \
      --deadline "$DEADLINE" --fault-start "$t" --leader "$old_id" | jq -r '.first_write_other_after_start // "none"' || true)
    NOTE+="${NOTE:+; }SIGTERM ${olds[$i]} (leading: $was_leader) -> $(leader) leads, its first write +${h}s"
  done
  FAULT_END=$(now)
}
