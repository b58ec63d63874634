#!/usr/bin/env bash
# Metrics and dashboard agree (#17): a real draco on the control plane, with a counter-based
# (partitionable) pool, an allocated pod and a pod that stays pending, serves /metrics; every metric
# name used by every query of the shipped Grafana dashboard and every metric the platform guide
# mentions (PromQL blocks and `metric{labels}` spans of the guide) is one draco exposes. Histogram
# _bucket/_sum/_count count as their base name; `up` is Prometheus's own series. The per-pool
# capacity series carry the values of the objects created here.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/draco_helpers.sh"
command -v python3 >/dev/null || { echo "SKIP: python3 missing" >&2; exit 77; }
NS=draco-metrics
DRV=metrics.draco.dev
REPO=$E2E_ROOT/..
DASHBOARD=$REPO/charts/draco/files/dashboards/draco.json
GUIDE=$REPO/docs/platform-guide.md
scrape() { curl -s "127.0.0.1:${DRACO_PORTS[metrics]:-0}/metrics"; }
cleanup() {
  scrape >"$DRACO_LOGS/metrics-scrape.txt" 2>/dev/null || true
  cleanup_partitionable $NS $DRV metrics
}
trap cleanup EXIT
fresh_ns $NS

# One pool on node-0: a GPU with 80Gi memory, offered whole or as two 40Gi partitions.
partitionable_pool $DRV metrics | k apply -f - >/dev/null
start_draco metrics --leader-elect=false
eventually 30 "draco is ready" draco_ready metrics
# The partition holds half of gpu-0's memory: the whole GPU cannot be allocated now.
partition_workload $NS $DRV
pending_devices() {
  [[ $(scrape | awk '$1=="draco_pending_attempts_total{reason=\"devices_unavailable\"}" {print $2}') != 0 ]]
}
eventually 30 "the pod wanting the whole GPU is counted pending (devices_unavailable)" pending_devices
# series LABELS: the value of draco's series with exactly these labels for this test's pool.
series() { scrape | awk -v want="$1{driver=\"$DRV\",pool=\"node-0\"$2}" '$1==want {print $2}'; }
used_40gi() { [[ $(series draco_counter_used ',counter_set="gpu-0",counter="memory"') == 42949672960 ]]; }
eventually 30 "draco_counter_used shows the partition's 40Gi of gpu-0 memory" used_40gi
[[ $(series draco_counter_capacity ',counter_set="gpu-0",counter="memory"') == 85899345920 ]] \
  || fail "draco_counter_capacity for gpu-0 memory is not 80Gi: $(scrape | grep "^draco_counter_capacity.*$DRV")"
pass "draco_counter_capacity shows gpu-0's 80Gi"
[[ $(series draco_devices ',state="allocated"') == 1 && $(series draco_devices ',state="free"') == 2 ]] \
  || fail "draco_devices for the pool is not 1 allocated, 2 free: $(scrape | grep "^draco_devices.*$DRV")"
pass "draco_devices shows 1 allocated and 2 free devices in the pool"

scrape >"$DRACO_LOGS/metrics-scrape.txt"
python3 - "$DRACO_LOGS/metrics-scrape.txt" "$DASHBOARD" "$GUIDE" <<'PY' || fail "dashboard or guide query a metric draco does not expose"
import json, re, sys

scrape, dashboard, guide = sys.argv[1:4]
exposed = set()
for line in open(scrape):
    m = re.match(r"# TYPE (\S+) ", line) or re.match(r"([a-zA-Z_:][a-zA-Z0-9_:]*)[{ ]", line)
    if m:
        exposed.add(m.group(1))
SYNTHETIC = {"up"}  # added by Prometheus itself on every scrape
KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "and", "or",
            "unless", "offset", "bool", "inf", "nan"}

def metric_names(expr):
    """Metric names a PromQL expression selects."""
    e = re.sub(r'"(\\.|[^"\\])*"', '""', expr)          # string literals
    e = re.sub(r"\{[^}]*\}", " ", e)                       # label matchers
    e = re.sub(r"\[[^\]]*\]", " ", e)                      # range selectors
    e = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", e)
    e = re.sub(r"(?<![\w.])\d+(\.\d+)?([eE][-+]?\d+)?", " ", e)  # numbers
    names = set()
    for m in re.finditer(r"[a-zA-Z_:][a-zA-Z0-9_:]*", e):
        if re.match(r"\s*\(", e[m.end():]) or m.group(0).lower() in KEYWORDS:
            continue  # a function or aggregation, or a keyword
        names.add(m.group(0))
    return names

def known(name):
    if name in exposed or name in SYNTHETIC:
        return True
    base = re.sub(r"_(bucket|sum|count)$", "", name)
    return base != name and base in exposed

queries = []  # (where, expr)
def walk(node, title):
    if isinstance(node, dict):
        title = node.get("title", title)
        if isinstance(node.get("expr"), str):
            queries.append(("dashboard panel '%s'" % title, node["expr"]))
        for v in node.values():
            walk(v, title)
    elif isinstance(node, list):
        for v in node:
            walk(v, title)
walk(json.load(open(dashboard)), "")
text = open(guide).read()
for block in re.findall(r"```promql\n(.*?)```", text, re.S):
    for line in block.splitlines():
        if line.strip() and not line.strip().startswith("#"):
            queries.append(("platform guide PromQL", line))
# Inline mentions: `name`, `name{labels}` or `name{...}` with a metric-like prefix.
PREFIX = r"(draco|workqueue|rest_client|leader_election|process|go)_"
for span in re.findall(r"`([^`\n]+)`", re.sub(r"```.*?```", "", text, flags=re.S)):
    if re.fullmatch(PREFIX + r"[a-z0-9_:]*(\{[^}]*\})?", span):
        queries.append(("platform guide mention", span))

missing, checked = [], 0
for where, expr in queries:
    for name in sorted(metric_names(expr)):
        checked += 1
        if not known(name):
            missing.append("%s: %s (in %s)" % (where, name, expr.strip()))
if not queries or checked == 0:
    print("no queries found in the dashboard or guide", file=sys.stderr)
    sys.exit(1)
for m in missing:
    print("not exposed by draco: " + m, file=sys.stderr)
print("%d queries, %d metric references, %d missing" % (len(queries), checked, len(missing)))
sys.exit(1 if missing else 0)
PY
pass "every metric of the dashboard and the platform guide is exposed by draco"
