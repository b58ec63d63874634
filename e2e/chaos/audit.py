#!/usr/bin/env python3
"""Invariants and timings of a chaos phase, read from kube-apiserver's audit log (the server's
view, independent of draco). The audit policy (chaos.sh) logs every write to pods, Events and
Leases at Metadata level and every write to ResourceClaims with its response object.

  audit.py LOG... --since T --until T --ns NS --deadline SECONDS [--fault-start T --fault-end T]
           [--leader ID]

Prints one JSON object:
  writes, lease_writes, throttled (draco requests answered 429): counts in [since, until];
  deadline_violations: draco writes that landed later than --deadline after the same replica's
    last successful Lease write received before them (client-go's renew deadline guarantee);
  claims_created: successful claim creates in NS; claim_owners: pods that own a claim there;
    owners_with_several_claims: pods seen owning more than one claim (in any answer);
  double_allocations: a device that a claim got while another claim still held it, replaying
    the claims' committed states in resourceVersion (etcd revision) order (a delete whose
    answer was lost counts as done by the 404 of a later attempt);
  unusable_bindings: pod bindings (pods/binding, logged at Request level) for which a claim the
    pod owns was not, in its last state committed before the binding request, allocated on the
    binding's node (node-local pools are named after their node): a pod that can never run there;
  bindings_before_reservation: bindings whose claims were allocated there but not yet reserved
    for the pod (the kubelet refuses the claim until someone reserves it; the load's "kubelet"
    waits for that and counts it);
  first_write_after_end / first_write_other_after_start: seconds from the fault's end to the
    first successful draco write of any replica, and from its start to the first write of a
    replica other than --leader.
Exit status 1 when an invariant is broken.
"""
import argparse
import datetime
import json
import sys


def ts(s):
    return datetime.datetime.strptime(s, "%Y-%m-%dT%H:%M:%S.%fZ").replace(
        tzinfo=datetime.timezone.utc).timestamp()


def identity(ua):
    return ua[ua.find("(") + 1:ua.rfind(")")] if "(" in ua else ua


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("log", nargs="+", help="audit log files, oldest first (rotated ones too)")
    ap.add_argument("--since", type=float, required=True)
    ap.add_argument("--until", type=float, required=True)
    ap.add_argument("--ns", required=True)
    ap.add_argument("--deadline", type=float, required=True)
    ap.add_argument("--fault-start", type=float)
    ap.add_argument("--fault-end", type=float)
    ap.add_argument("--leader", default="")
    a = ap.parse_args()

    draco = []  # (received, completed, identity, kind, code)
    claims = []  # (resourceVersion, completed, key, object or None for removed)
    creates = {}  # owner uid -> successful creates
    names = {}  # owner uid -> names of the claims seen owned by it (any answer)
    unsure_delete, gone_by = {}, {}  # claim -> time of a delete without answer / of a later 404
    last_ok = {}  # claim -> time of its last successful write
    bindings = []  # (received, pod name, node)
    for line in (line for path in a.log for line in open(path)):
        try:
            e = json.loads(line)
        except ValueError:
            continue
        if e.get("stage") != "ResponseComplete":
            continue
        done = ts(e["stageTimestamp"])
        if done > a.until:
            continue
        ua = e.get("userAgent", "")
        code = e.get("responseStatus", {}).get("code", 0)
        r = e.get("objectRef", {})
        kind = "lease" if r.get("resource") == "leases" else "write"
        # Lease writes from before the window count: a replica's term may have begun earlier.
        if ua.startswith("draco/") and (done >= a.since or kind == "lease"):
            draco.append((ts(e["requestReceivedTimestamp"]), done, identity(ua), kind, code))
        if done < a.since:
            continue
        if (r.get("resource") == "pods" and r.get("subresource") == "binding"
                and r.get("namespace") == a.ns and 200 <= code < 300):
            target = (e.get("requestObject") or {}).get("target") or {}
            bindings.append((ts(e["requestReceivedTimestamp"]), r.get("name", ""),
                             target.get("name", "")))
            continue
        if r.get("resource") != "resourceclaims" or r.get("namespace") != a.ns:
            continue
        key = r.get("name", "")
        if e["verb"] == "delete" and not 200 <= code < 300 and code != 404:
            # The answer was lost (the client went away, a timeout): the claim may be gone.
            unsure_delete.setdefault(key, done)
            continue
        if code == 404 and key in unsure_delete:
            gone_by.setdefault(key, done)  # a later attempt proves it was gone by now
            continue
        if not 200 <= code < 300:
            continue
        last_ok[key] = max(last_ok.get(key, 0), done)
        obj = e.get("responseObject") or {}
        if obj.get("kind") != "ResourceClaim":
            continue  # a Status answer: the claim was removed at once (never allocated then)
        md = obj.get("metadata", {})
        rv = int(md.get("resourceVersion", "0"))
        for o in md.get("ownerReferences", []):
            if o.get("kind") == "Pod":
                names.setdefault(o["uid"], set()).add(md.get("name"))
                if e["verb"] == "create":
                    creates[o["uid"]] = creates.get(o["uid"], 0) + 1
        # Removed: deleted without finalizers (the answer is the last state), or the last
        # finalizer of a deleted claim went.
        gone = not md.get("finalizers") and (e["verb"] == "delete" or md.get("deletionTimestamp"))
        claims.append((rv, done, key, None if gone else obj))

    inside = [d for d in draco if d[1] >= a.since]
    out = {"writes": sum(1 for d in inside if d[3] == "write" and 200 <= d[4] < 300),
           "lease_writes": sum(1 for d in inside if d[3] == "lease" and 200 <= d[4] < 300),
           "throttled": sum(1 for d in inside if d[4] == 429)}
    bad = False

    # No write later than the renew deadline after the replica's last renewal.
    renewed, viol = {}, []
    for rec, done, ident, kind, code in sorted(draco, key=lambda d: d[1]):
        if not 200 <= code < 300:
            continue
        if kind == "lease":
            renewed[ident] = max(renewed.get(ident, 0), rec)
        elif ident not in renewed or done > renewed[ident] + a.deadline:
            viol.append({"identity": ident, "completed": done,
                         "after_renewal": round(done - renewed.get(ident, 0), 3)})
    out["deadline_violations"] = viol[:10]
    out["deadline_violation_count"] = len(viol)
    bad |= bool(viol)

    out["claims_created"] = sum(creates.values())
    out["claim_owners"] = len(names)
    several = {u: sorted(n) for u, n in names.items() if len(n) > 1}
    out["owners_with_several_claims"] = len(several)
    out["several_claims"] = dict(list(several.items())[:5])
    bad |= bool(several)

    # A delete whose answer was lost: a later 404 proves it done by then; with no later write
    # the claim is gone and only that delete removed it, a moment after the server gave up on
    # the answer (counted 1 s later). The claim is gone after every state committed before.
    for key, t in unsure_delete.items():
        if key not in gone_by and last_ok.get(key, 0) < t:
            gone_by[key] = t + 1.0
    by_time = sorted((done, rv) for rv, done, _, _ in claims)
    for key, t in gone_by.items():
        before = [rv for done, rv in by_time if done <= t]
        claims.append(((before[-1] if before else 0) + 0.5, t, key, None))
    out["deletes_without_answer"] = len(unsure_delete)

    # Replay the committed claim states in etcd revision order.
    holder, held, doubles = {}, {}, []
    for rv, _, key, obj in sorted(claims, key=lambda c: c[0]):
        devs = set()
        if obj is not None:
            alloc = (obj.get("status") or {}).get("allocation") or {}
            for res in (alloc.get("devices") or {}).get("results") or []:
                devs.add("%s/%s/%s" % (res.get("driver"), res.get("pool"), res.get("device")))
        old = held.get(key, set())
        for d in old - devs:
            if holder.get(d) == key:
                del holder[d]
        for d in devs - old:
            if d in holder and holder[d] != key:
                doubles.append({"device": d, "holder": holder[d], "claim": key, "rv": rv})
            holder[d] = key
        held[key] = devs
    out["double_allocations"] = doubles[:10]
    out["double_allocation_count"] = len(doubles)
    out["claim_states_replayed"] = len(claims)
    bad |= bool(doubles)

    # Every binding found the pod's claims usable on its node.
    owned = {}  # pod name -> claim keys it owns
    states = {}  # claim key -> [(completed, object)] in completion order
    for rv, done, key, obj in sorted(claims, key=lambda c: c[1]):
        states.setdefault(key, []).append((done, obj))
        for o in ((obj or {}).get("metadata") or {}).get("ownerReferences", []):
            if o.get("kind") == "Pod":
                owned.setdefault(o.get("name"), set()).add(key)
    unusable, early = [], []
    for received, pod, node in bindings:
        for key in sorted(owned.get(pod, ())):
            before = [o for done, o in states.get(key, []) if done <= received]
            obj = before[-1] if before else None
            st = (obj or {}).get("status") or {}
            results = ((st.get("allocation") or {}).get("devices") or {}).get("results") or []
            reserved = [x.get("name") for x in st.get("reservedFor") or []]
            why = ("not allocated" if not results else
                   "allocated on another node" if any(x.get("pool") != node for x in results) else
                   "" if pod in reserved else None)
            if why is None:
                early.append({"pod": pod, "node": node, "claim": key})
            elif why:
                unusable.append({"pod": pod, "node": node, "claim": key, "why": why})
    out["bindings"] = len(bindings)
    out["unusable_bindings"] = unusable[:10]
    out["unusable_binding_count"] = len(unusable)
    # Bound before the claim was reserved for the pod: the kubelet refuses the claim until it is
    # (the load's "kubelet" waits and counts these: kubelet_waited in its JSON).
    out["bindings_before_reservation"] = early[:5]
    out["binding_before_reservation_count"] = len(early)
    bad |= bool(unusable)

    ok_writes = sorted(d[1] for d in draco if d[3] == "write" and 200 <= d[4] < 300)
    if a.fault_end is not None:
        after = [t for t in ok_writes if t >= a.fault_end]
        out["first_write_after_end"] = round(after[0] - a.fault_end, 2) if after else None
    if a.fault_start is not None and a.leader:
        other = sorted(d[1] for d in draco if d[3] == "write" and 200 <= d[4] < 300
                       and d[2] != a.leader and d[1] >= a.fault_start)
        out["first_write_other_after_start"] = round(other[0] - a.fault_start, 2) if other else None
        mine = [d[1] for d in draco if d[3] == "write" and 200 <= d[4] < 300 and d[2] == a.leader
                and d[1] >= a.fault_start]
        out["leader_writes_after_start"] = len(mine)
        out["leader_last_write_after_start"] = round(max(mine) - a.fault_start, 2) if mine else None
    print(json.dumps(out))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
