#!/usr/bin/env python3
"""Writes tests/differential/cases.jsonl: hand-written allocator edge cases in the
`oracle allocate` scenario format. Expected outputs come from the oracle at test time.

Usage: tests/differential/make_cases.py > tests/differential/cases.jsonl
"""
import json

GPU = "gpu.example.com"
NODE = {"metadata": {"name": "node-0", "labels": {"zone": "a", "rack": "r0"}}}


def dev(name, attrs=None, cap=None, **kw):
    d = {"name": name, "attributes": {k: v for k, v in (attrs or {}).items()}}
    if cap:
        d["capacity"] = cap
    d.update(kw)
    return d


def a_int(v):
    return {"int": v}


def a_str(v):
    return {"string": v}


def slice_(name, devices, pool="node-0", gen=0, count=1, driver=GPU, placement=None, **kw):
    spec = {"driver": driver, "pool": {"name": pool, "generation": gen, "resourceSliceCount": count},
            "devices": devices}
    spec.update(placement or {"nodeName": "node-0"})
    spec.update(kw)
    return {"metadata": {"name": name}, "spec": spec}


def cls(name="gpu", selectors=None, config=None):
    spec = {"selectors": [{"cel": {"expression": e}} for e in (selectors or [f'device.driver == "{GPU}"'])]}
    if config:
        spec["config"] = [{"opaque": {"driver": GPU, "parameters": p}} for p in config]
    return {"metadata": {"name": name}, "spec": spec}


def exact(name, count=1, cls_name="gpu", **kw):
    e = {"deviceClassName": cls_name, "count": count}
    e.update(kw)
    return {"name": name, "exactly": e}


def claim(name, requests, constraints=None, config=None):
    d = {"requests": requests}
    if constraints:
        d["constraints"] = constraints
    if config:
        d["config"] = config
    return {"metadata": {"name": name, "namespace": "default", "uid": "uid-" + name},
            "spec": {"devices": d}}


def allocated(name, results):
    c = claim(name, [exact("r", 1, "gpu")])
    c["status"] = {"allocation": {"devices": {"results": results}}}
    return c


def res(device, pool="node-0", **kw):
    r = {"request": "r", "driver": GPU, "pool": pool, "device": device}
    r.update(kw)
    return r


cases = []


def case(cid, slices, claims, classes=None, alloc=None, rules=None, features=None, node=NODE):
    s = {"id": cid, "node": node, "classes": classes or [cls()], "slices": slices,
         "allocatedClaims": alloc or [], "claims": claims}
    if rules:
        s["deviceTaintRules"] = rules
    if features:
        s["features"] = features
    cases.append(s)


four = [dev(f"gpu-{i}", {"numa": a_int(i % 2), "model": a_str("a100" if i < 2 else "h100")})
        for i in range(4)]

case("count-exceeds-devices", [slice_("s0", four)], [claim("c", [exact("r", 5)])])
case("count-fits", [slice_("s0", four)], [claim("c", [exact("r", 4)])])
case("in-use-skipped", [slice_("s0", four)], [claim("c", [exact("r", 2)])],
     alloc=[allocated("a", [res("gpu-0"), res("gpu-2")])])
case("admin-access-ignores-allocations", [slice_("s0", four)],
     [claim("c", [exact("r", 4, adminAccess=True)])],
     alloc=[allocated("a", [res("gpu-0")])])
case("admin-access-then-normal-claim", [slice_("s0", four[:1])],
     [claim("c1", [exact("r", 1, adminAccess=True)]), claim("c2", [exact("r", 1)])])
case("match-attribute-across-requests", [slice_("s0", four)],
     [claim("c", [exact("a", 1), exact("b", 1)],
            constraints=[{"matchAttribute": f"{GPU}/model"}])],
     alloc=[allocated("x", [res("gpu-1")])])
case("match-attribute-unsatisfiable", [slice_("s0", four)],
     [claim("c", [exact("a", 3)], constraints=[{"matchAttribute": f"{GPU}/model"}])])
case("distinct-attribute-pairwise", [slice_("s0", [
    dev("d0", {"numa": a_int(1)}), dev("d1", {"numa": a_int(2)}), dev("d2", {"numa": a_int(1)}),
    dev("d3", {"numa": a_int(3)})])],
    [claim("c", [exact("r", 3)], constraints=[{"distinctAttribute": f"{GPU}/numa"}])])
case("first-available-fallback", [slice_("s0", four)],
     [claim("c", [{"name": "r", "firstAvailable": [
         {"name": "big", "deviceClassName": "gpu", "count": 8},
         {"name": "small", "deviceClassName": "gpu", "count": 2}]}],
         config=[{"requests": ["r/small"], "opaque": {"driver": GPU, "parameters": {"x": 1}}},
                 {"requests": ["r/big"], "opaque": {"driver": GPU, "parameters": {"y": 1}}}])],
     classes=[cls(config=[{"c": 1}])])
case("first-available-result-limit", [slice_("s0", [dev(f"g{i}") for i in range(40)])],
     [claim("c", [exact("a", 20), {"name": "r", "firstAvailable": [
         {"name": "huge", "deviceClassName": "gpu", "count": 13},
         {"name": "ok", "deviceClassName": "gpu", "count": 12}]}])])
case("too-many-devices", [slice_("s0", four)], [claim("c", [exact("a", 20), exact("b", 13)])])
case("all-mode", [slice_("s0", four)], [claim("c", [exact("r", 0, allocationMode="All")])])
case("all-mode-one-in-use", [slice_("s0", four)],
     [claim("c", [exact("r", 0, allocationMode="All")])], alloc=[allocated("a", [res("gpu-3")])])
case("all-mode-incomplete-pool", [slice_("s0", four, count=2)],
     [claim("c", [exact("r", 0, allocationMode="All")])])
case("exact-incomplete-pool", [slice_("s0", four, count=2)], [claim("c", [exact("r", 1)])])
case("obsolete-pool-ignored", [
    slice_("s0", four, gen=1),
    slice_("s1", [dev("x")], gen=2, count=2, placement={"nodeName": "node-9"})],
    [claim("c", [exact("r", 1)])])
case("older-generation-dropped", [slice_("s0", four[:1], gen=1), slice_("s-old", four[1:], gen=0)],
     [claim("c", [exact("r", 2)])])
case("invalid-pool-duplicate-names", [slice_("s0", four[:2], count=2), slice_("s1", four[1:3], count=2)],
     [claim("c", [exact("r", 1)])])
case("cel-runtime-error", [slice_("s0", four)],
     [claim("c", [exact("r", 1, selectors=[{"cel": {"expression": f'device.attributes["{GPU}"].missing == 1'}}])])])
case("cel-error-not-reached", [slice_("s0", [dev("ok", {"numa": a_int(0)}), dev("bad")])],
     [claim("c", [exact("r", 1, selectors=[{"cel": {"expression": f'device.attributes["{GPU}"].numa == 0'}}])])])
case("taint-blocks", [slice_("s0", [dev("t", taints=[{"key": "k", "value": "v", "effect": "NoSchedule"}]),
                                     dev("n", taints=[{"key": "k", "effect": "None"}])])],
     [claim("c", [exact("r", 2)])])
case("taint-tolerated", [slice_("s0", [dev("t", taints=[{"key": "k", "value": "v", "effect": "NoExecute"}])])],
     [claim("c", [exact("r", 1, tolerations=[{"key": "k", "operator": "Exists"}])])])
case("taint-rule", [slice_("s0", four[:2])], [claim("c", [exact("r", 2)])],
     rules=[{"metadata": {"name": "rule"}, "spec": {"deviceSelector": {"driver": GPU, "device": "gpu-1"},
                                                     "taint": {"key": "m", "value": "x", "effect": "NoSchedule"}}}])
case("partitionable-backtracking", [
    slice_("counters", [], count=2, sharedCounters=[{"name": "cs", "counters": dict(
        [(f"cpu{i}", {"value": "1"}) for i in range(1, 9)] + [("mem", {"value": "70Gi"})])}]),
    slice_("devs", [dev(f"device-{i}", consumesCounters=[{"counterSet": "cs", "counters": {
        f"cpu{i}": {"value": "1"}, "mem": {"value": "20Gi" if i == 1 else "10Gi"}}}]) for i in range(1, 9)],
        count=2)],
    [claim("c", [exact("r", 7)])])
case("partitionable-overcommitted-counter", [
    slice_("counters", [], count=2, sharedCounters=[{"name": "cs", "counters": {"a": {"value": "1"}, "b": {"value": "4"}}}]),
    slice_("devs", [dev("pa", consumesCounters=[{"counterSet": "cs", "counters": {"a": {"value": "1"}}}]),
                    dev("pa2", consumesCounters=[{"counterSet": "cs", "counters": {"a": {"value": "1"}}}]),
                    dev("pb", consumesCounters=[{"counterSet": "cs", "counters": {"b": {"value": "1"}}}])], count=2)],
    [claim("c", [exact("r", 1, selectors=[{"cel": {"expression": 'device.attributes["%s"].?x.orValue(0) == 0' % GPU}}])])],
    alloc=[allocated("a", [res("pa"), res("pa2")])])
multi_cap = {"memory": {"value": "8Gi", "requestPolicy": {"default": "1Gi", "validRange": {"min": "1Gi", "step": "1Gi", "max": "8Gi"}}}}
case("consumable-capacity-shares", [slice_("s0", [dev("m", cap=multi_cap, allowMultipleAllocations=True)])],
     [claim("c1", [exact("a", 1, capacity={"requests": {"memory": "1500Mi"}}), exact("b", 1)]),
      claim("c2", [exact("a", 1, capacity={"requests": {"memory": "5Gi"}})])])
case("consumable-capacity-exhausted", [slice_("s0", [dev("m", cap=multi_cap, allowMultipleAllocations=True)])],
     [claim("c1", [exact("a", 1, capacity={"requests": {"memory": "5Gi"}})])],
     alloc=[allocated("x", [res("m", shareID="00000000-0000-4000-9000-000000000001",
                                 consumedCapacity={"memory": "4Gi"})])])
case("consumable-valid-values", [slice_("s0", [dev("m", cap={"memory": {"value": "16Gi", "requestPolicy": {
    "default": "1Gi", "validValues": ["1Gi", "4Gi", "16Gi"]}}}, allowMultipleAllocations=True)])],
    [claim("c", [exact("a", 1, capacity={"requests": {"memory": "3Gi"}})])])
case("capacity-missing-name", [slice_("s0", [dev("m", cap={"mem": {"value": "1Gi"}})])],
     [claim("c", [exact("a", 1, capacity={"requests": {"memory": "1Gi"}})])])
case("binding-conditions-pool-last", [
    slice_("a", [dev("b0", bindingConditions=["ready"], bindingFailureConditions=["failed"], bindsToNode=True)], pool="aaa"),
    slice_("z", [dev("z0")], pool="zzz", placement={"allNodes": True})],
    [claim("c", [exact("r", 2)])])
case("node-selector-merge", [
    slice_("a", [dev("a0")], pool="p1", placement={"nodeSelector": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}}),
    slice_("b", [dev("b0")], pool="p2", placement={"nodeSelector": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "rack", "operator": "NotIn", "values": ["r1"]}], "matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-0"]}]}]}})],
    [claim("c", [exact("r", 2)])])
case("per-device-node-selection", [
    slice_("p", [dev("here", nodeName="node-0"), dev("there", nodeName="node-1"), dev("all", allNodes=True)],
           pool="pd", placement={"perDeviceNodeSelection": True})],
    [claim("c", [exact("r", 2)])])
case("config-class-dedupe", [slice_("s0", four)],
     [claim("c", [exact("a", 1), exact("b", 1)],
            config=[{"opaque": {"driver": GPU, "parameters": {"all": True}}},
                    {"requests": ["a", "b"], "opaque": {"driver": GPU, "parameters": {"ab": True}}},
                    {"requests": ["b"], "opaque": {"driver": GPU, "parameters": {"b": True}}}])],
     classes=[cls(config=[{"one": 1}, {"two": 2}])])
case("missing-class", [slice_("s0", four)], [claim("c", [exact("r", 1, cls_name="nope")])])
case("list-attributes-intersection-backtrack", [slice_("s0", [
    dev("d0", {"links": {"ints": [1, 2]}}), dev("d1", {"links": {"ints": [2, 3]}}),
    dev("d2", {"links": {"ints": [1]}}), dev("d3", {"links": {"ints": [1, 5]}})])],
    [claim("c", [exact("a", 1), exact("b", 1), exact("c", 1)],
           constraints=[{"matchAttribute": f"{GPU}/links"}])],
    features={"listTypeAttributes": True})
case("partitionable-off-skips-counter-slices", [
    slice_("counters", [], count=2, sharedCounters=[{"name": "cs", "counters": {"a": {"value": "1"}}}]),
    slice_("devs", [dev("pa", consumesCounters=[{"counterSet": "cs", "counters": {"a": {"value": "1"}}}])], count=2)],
    [claim("c", [exact("r", 1)])], features={"partitionableDevices": False})

for c in cases:
    print(json.dumps(c, separators=(",", ":")))
