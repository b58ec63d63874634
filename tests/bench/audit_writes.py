#!/usr/bin/env python3
"""Writes per pod by side and component, from a kube-apiserver audit log.

Start the control plane with an audit policy that logs mutating requests in the benchmark's
namespaces at level Request, e.g. (DRACO_AUDIT_POLICY for e2e/cluster/up.sh):

  apiVersion: audit.k8s.io/v1
  kind: Policy
  omitStages: ["RequestReceived"]
  rules:
  - level: Request
    verbs: ["create", "update", "patch", "delete", "deletecollection"]
    namespaces: ["bench-draco", "bench-upstream"]
  - level: None

then run tests/bench/throughput.sh and:  tests/bench/audit_writes.py $DRACO_E2E_DIR/logs/audit.log
Prints, per side (namespace bench-<side>), one row per (component, verb, resource[/subresource],
patch type): requests per pod, mean request body size in bytes, and the response codes seen.
"""
import collections
import json
import sys


def component(user_agent):
    ua = (user_agent or "?").split(" ")[0]
    return ua.split("/")[0]


def main(path):
    rows = collections.defaultdict(lambda: {"n": 0, "bytes": 0, "codes": collections.Counter()})
    pods = collections.defaultdict(set)
    with open(path) as f:
        for line in f:
            try:
                e = json.loads(line)
            except ValueError:
                continue
            if e.get("stage") != "ResponseComplete":
                continue
            ref = e.get("objectRef") or {}
            ns = ref.get("namespace", "")
            if not ns.startswith("bench-") or ns == "bench-writes":
                continue
            side = ns[len("bench-"):]
            res = ref.get("resource", "?") + ("/" + ref["subresource"] if ref.get("subresource") else "")
            if ref.get("resource") == "pods" and e.get("verb") == "create" and not ref.get("subresource"):
                pods[side].add(ref.get("name"))
            body = e.get("requestObject")
            size = len(json.dumps(body, separators=(",", ":"))) if body is not None else 0
            ptype = ""
            if e.get("verb") == "patch":
                ptype = (e.get("annotations") or {}).get("patch-type", "")
            key = (side, component(e.get("userAgent")), e.get("verb"), res, ptype)
            r = rows[key]
            r["n"] += 1
            r["bytes"] += size
            r["codes"][(e.get("responseStatus") or {}).get("code", 0)] += 1
    for side in sorted({k[0] for k in rows}):
        n = max(len(pods[side]), 1)
        total = sum(r["n"] for k, r in rows.items() if k[0] == side)
        print(f"== {side}: {len(pods[side])} pods, {total} writes = {total / n:.2f} per pod")
        print(f"{'component':<28} {'verb':<7} {'resource':<26} {'per pod':>8} {'bytes':>7}  codes")
        for k in sorted((k for k in rows if k[0] == side), key=lambda k: -rows[k]["n"]):
            r = rows[k]
            codes = " ".join(f"{c}x{m}" for c, m in sorted(r["codes"].items()))
            print(f"{k[1]:<28} {k[2]:<7} {k[3]:<26} {r['n'] / n:8.2f} {r['bytes'] / r['n']:7.0f}  {codes}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "/tmp/draco-e2e/logs/audit.log")
