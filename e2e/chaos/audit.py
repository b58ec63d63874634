#!/usr/bin/env python3
"""Invariants and timings of a chaos phase, read from kube-apiserver's audit log (the server's
view, independent of draco). The audit policy (chaos.sh) logs every write to pods, Events and
Leases at Metadata level and every write to ResourceClaims with its response object.

  audit.py LOG --since T --until T --ns NS --deadline SECONDS [--fault-start T --fault-end T]
           [--leader ID]

Prints one JSON object:
  writes, lease_writes, throttled (draco requests answered 429): counts in [since, until];
  deadline_violations: draco writes that landed later than --deadline after the same replica's
    last successful Lease write received before them (client-go's renew deadline guarantee);
  claims_created, claim_owners, owners_with_several_claims: successful claim creates in NS;
  double_allocations: a device that a claim got while another claim still held it, replaying
    the claims' committed states in resourceVersion (etcd revision) order;
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
    ap.add_argument("log")
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
    creates = {}  # owner uid -> count
    for line in open(a.log):
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
        if r.get("resource") != "resourceclaims" or r.get("namespace") != a.ns or not 200 <= code < 300:
            continue
        obj = e.get("responseObject") or {}
        key = r.get("name", "")
        if obj.get("kind") != "ResourceClaim":
            continue  # a Status answer: the claim was removed at once (never allocated then)
        md = obj.get("metadata", {})
        rv = int(md.get("resourceVersion", "0"))
        if e["verb"] == "create":
            for o in md.get("ownerReferences", []):
                if o.get("kind") == "Pod":
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
    out["claim_owners"] = len(creates)
    several = [u for u, n in creates.items() if n > 1]
    out["owners_with_several_claims"] = len(several)
    bad |= bool(several)

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
