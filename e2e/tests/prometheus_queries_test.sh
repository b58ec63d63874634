#!/usr/bin/env bash
# The dashboard's queries and the alert rules against a real Prometheus (Debian's `prometheus`,
# scrape and rule interval 1 s, on 127.0.0.1 with its own temp dir) scraping a `draco run` on the
# control plane, after a small workload: a partitionable pool, a pod allocated a partition and a pod
# left pending. Through Prometheus's HTTP API:
#   1. every panel query of charts/draco/files/dashboards/draco.json parses and evaluates (Grafana
#      variables substituted: $job -> this scrape job, $__rate_interval/$__interval -> 1m/5s), and
#      each returns series (every panel has data after the workload);
#   2. every alert expression of charts/draco/files/prometheus-rules.yaml parses and evaluates as an
#      instant query and selects only metrics scraped from draco, and Prometheus, which loads the file as its rule_files, reports every rule
#      healthy after evaluating it; the alerts that cannot hold here (draco down, forbidden, a
#      device in two claims) are inactive.
# Assertions use curl and python3 on Prometheus's answers, never draco's client. DRACO_DASHBOARD and
# DRACO_PROM_RULES check other files (e.g. a broken copy, to see the test fail).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/draco_helpers.sh"
command -v python3 >/dev/null || { echo "SKIP: python3 missing" >&2; exit 77; }
PROMETHEUS=$(command -v prometheus || true)
[[ -n $PROMETHEUS ]] || { echo "SKIP: no prometheus binary (apt-get install prometheus)" >&2; exit 77; }
NS=draco-promq
DRV=promq.draco.dev
REPO=$E2E_ROOT/..
DASHBOARD=${DRACO_DASHBOARD:-$REPO/charts/draco/files/dashboards/draco.json}
RULES=${DRACO_PROM_RULES:-$REPO/charts/draco/files/prometheus-rules.yaml}
JOB=draco-metrics
PROM_PORT=$((20000 + RANDOM % 10000))
PROM=http://127.0.0.1:$PROM_PORT
ptmp=$(mktemp -d)
PROM_PID=""
cleanup() {
  [[ -n $PROM_PID ]] && { kill "$PROM_PID" 2>/dev/null; wait "$PROM_PID" 2>/dev/null; }
  cp "$ptmp/prometheus.log" "$DRACO_LOGS/prometheus-queries.log" 2>/dev/null || true
  cleanup_partitionable $NS $DRV promq
  rm -rf "$ptmp"
}
trap cleanup EXIT
on_fail() { tail -20 "$ptmp/prometheus.log"; tail -20 "$DRACO_LOGS/draco-promq.log"; }
fresh_ns $NS

# One pool on node-0: a GPU with 80Gi memory, offered whole or as two 40Gi partitions.
partitionable_pool $DRV promq | k apply -f - >/dev/null
start_draco promq --leader-elect=false
eventually 30 "draco is ready" draco_ready promq

# Prometheus scrapes draco every second and evaluates the alert rules every second.
cat >"$ptmp/prometheus.yml" <<YAML
global: {scrape_interval: 1s, scrape_timeout: 1s, evaluation_interval: 1s}
rule_files: ['$RULES']
scrape_configs:
- job_name: $JOB
  static_configs: [{targets: ['127.0.0.1:${DRACO_PORTS[promq]}']}]
YAML
"$PROMETHEUS" --config.file="$ptmp/prometheus.yml" --storage.tsdb.path="$ptmp/data" \
  --web.listen-address="127.0.0.1:$PROM_PORT" --log.level=warn >"$ptmp/prometheus.log" 2>&1 &
PROM_PID=$!
eventually 60 "Prometheus ($($PROMETHEUS --version 2>&1 | head -1 | awk '{print $3}')) is ready on 127.0.0.1:$PROM_PORT" \
  curl -sf "$PROM/-/ready"

# query EXPR: the /api/v1/query answer (JSON) for EXPR now.
query() { curl -s --get "$PROM/api/v1/query" --data-urlencode "query=$1"; }
# has_series EXPR: the query succeeds with at least one series.
has_series() {
  query "$1" | python3 -c 'import json, sys; d = json.load(sys.stdin); sys.exit(0 if d["status"] == "success" and d["data"]["result"] else 1)'
}
eventually 30 "Prometheus scrapes draco (up{job=\"$JOB\"} == 1)" has_series "up{job=\"$JOB\"} == 1"
sleep 2  # a baseline sample of every counter before the workload, so that rates see it
partition_workload $NS $DRV

eventually 30 "the partition's allocation is scraped" \
  has_series "draco_devices{job=\"$JOB\",driver=\"$DRV\",state=\"allocated\"} == 1"
eventually 30 "the pending pod is scraped (devices_unavailable)" \
  has_series "draco_pending_attempts_total{job=\"$JOB\",reason=\"devices_unavailable\"} > 0"
# Rates need two samples of each series in their window: wait for the allocation counter's rate.
eventually 30 "rates over the scraped counters have data" \
  has_series "rate(draco_allocation_attempts_total{job=\"$JOB\",result=\"success\"}[5m]) > 0"
sleep 2  # a rule evaluation round after the last of the above

python3 - "$PROM" "$DASHBOARD" "$RULES" "$JOB" <<'PY' || fail "a dashboard query or an alert expression failed against Prometheus"
import json, re, sys, urllib.parse, urllib.request

prom, dashboard, rules_file, job = sys.argv[1:5]

def query(expr):
    url = prom + "/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return json.load(r)
    except urllib.error.HTTPError as e:  # 400/422: bad expression or evaluation error
        return json.load(e)

def grafana(expr):
    """The expression as Grafana sends it for this job."""
    subs = {"job": job, "__rate_interval": "1m", "__interval": "5s", "__range": "5m"}
    expr = re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: subs.get(m.group(1) or m.group(2), m.group(0)), expr)
    left = re.findall(r"\$\{?\w+", expr)
    if left:
        raise SystemExit("unknown Grafana variable %s in %s" % (left, expr))
    return expr

panels = []
def walk(node, title):
    if isinstance(node, dict):
        title = node.get("title", title)
        if isinstance(node.get("expr"), str):
            panels.append((title, node["expr"]))
        for v in node.values():
            walk(v, title)
    elif isinstance(node, list):
        for v in node:
            walk(v, title)
walk(json.load(open(dashboard)), "")

bad = []
for title, expr in panels:
    q = grafana(expr)
    d = query(q)
    if d.get("status") != "success":
        bad.append("panel '%s': %s: %s" % (title, d.get("errorType"), d.get("error")))
    elif not d["data"]["result"]:
        bad.append("panel '%s' has no data after the workload: %s" % (title, q))
    else:
        print("ok  panel %-40s %d series" % ("'%s'" % title, len(d["data"]["result"])))

# Alert expressions, read from the rule file as Prometheus reads it (YAML block scalars).
text = open(rules_file).read()
alerts = re.findall(r"- alert: (\S+)\n(?:\s+#.*\n)*\s+expr: \|\n((?:\s{6}.*\n)+)", text)
names = re.findall(r"^\s*- alert:\s*(\S+)", text, re.M)
if len(alerts) != len(names) or not alerts:
    bad.append("read %d alert expressions for %d alerts in %s" % (len(alerts), len(names), rules_file))
# An alert on a misspelt metric evaluates fine and never fires: every metric an alert selects must
# be one Prometheus scraped from draco.
with urllib.request.urlopen(prom + "/api/v1/label/__name__/values", timeout=10) as r:
    scraped = set(json.load(r)["data"])

def metric_names(expr):
    e = re.sub(r'"(\\.|[^"\\])*"', '""', expr)
    e = re.sub(r"\{[^}]*\}|\[[^\]]*\]", " ", e)
    e = re.sub(r"\b(by|without|on|ignoring)\s*\([^)]*\)", " ", e)
    e = re.sub(r"(?<![\w.])\d+(\.\d+)?([eE][-+]?\d+)?", " ", e)
    return {m.group(0) for m in re.finditer(r"[a-zA-Z_:][a-zA-Z0-9_:]*", e)
            if not re.match(r"\s*\(", e[m.end():]) and m.group(0) not in ("and", "or", "unless", "bool")}

for name, body in alerts:
    expr = "\n".join(l[6:] for l in body.splitlines())
    d = query(expr)
    unknown = sorted(metric_names(expr) - scraped)
    if d.get("status") != "success":
        bad.append("alert %s: %s: %s" % (name, d.get("errorType"), d.get("error")))
    elif unknown:
        bad.append("alert %s selects metrics draco does not expose: %s" % (name, unknown))
    else:
        print("ok  alert %-40s evaluates (%d series now), metrics %s" % (
            name, len(d["data"]["result"]), ", ".join(sorted(metric_names(expr)))))

# The same file loaded as rule_files: every rule evaluated by Prometheus's rule engine, healthy.
with urllib.request.urlopen(prom + "/api/v1/rules?type=alert", timeout=10) as r:
    groups = json.load(r)["data"]["groups"]
loaded = {rule["name"]: rule for g in groups for rule in g["rules"]}
# These cannot hold here: draco is up, allowed what it does, and alone in allocating. (Pools and
# counters of other tests may legitimately make the capacity alerts pending.)
QUIET = {"DracoDown", "DracoForbidden", "DracoDeviceAllocatedTwice"}
for name in names:
    rule = loaded.get(name)
    if rule is None:
        bad.append("alert %s not loaded by Prometheus" % name)
    elif rule.get("health") != "ok" or rule.get("lastError"):
        bad.append("alert %s: health %s %s" % (name, rule.get("health"), rule.get("lastError", "")))
    elif rule.get("state") != "inactive" and name in QUIET:
        bad.append("alert %s is %s while draco runs with its RBAC" % (name, rule.get("state")))
    else:
        print("ok  rule  %-40s health ok, %s" % (name, rule.get("state")))
for b in bad:
    print("FAIL: " + b, file=sys.stderr)
print("%d panel queries, %d alert expressions, %d failures" % (len(panels), len(alerts), len(bad)))
sys.exit(1 if bad else 0)
PY
pass "every dashboard query returns data and every alert expression evaluates in Prometheus"
