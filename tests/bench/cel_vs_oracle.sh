#!/usr/bin/env bash
# Side-by-side CEL selector benchmark: draco (celenv_bench) vs upstream cel-go (oracle bench-cel,
# GOMAXPROCS=1) on the S3c selectors (`oracle gen-perf -scenario S3c`), in one run.
#
# Usage: tests/bench/cel_vs_oracle.sh [BUILD_DIR]   (default: build; needs DRACO_BUILD_BENCHMARKS)
# Env:   DRACO_ORACLE (oracle binary; default <BUILD_DIR>/oracle/oracle, built if missing),
#        ITERS (oracle iterations per line, default 2000).
# Prints per-expression medians (ns) of evaluation and compile time and the ratios oracle/draco.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${1:-${repo}/build}"
case "${build}" in /*) ;; *) build="${PWD}/${build}" ;; esac
oracle="${DRACO_ORACLE:-${build}/oracle/oracle}"
[[ -x "${oracle}" ]] || "${repo}/tests/oracle/build.sh" "${oracle}" >&2
bench="${build}/controller/celenv/celenv_bench"
[[ -x "${bench}" ]] || { echo "missing ${bench}: build target celenv_bench" >&2; exit 2; }
tmp="$(mktemp -d)"
trap 'rm -rf "${tmp}"' EXIT
"${oracle}" gen-perf -scenario S3c > "${tmp}/s3c.jsonl"
GOMAXPROCS=1 "${oracle}" bench-cel -iters "${ITERS:-2000}" < "${tmp}/s3c.jsonl" > "${tmp}/oracle.jsonl"
DRACO_CEL_BENCH_INPUT="${tmp}/s3c.jsonl" "${bench}" --benchmark_format=json \
  --benchmark_min_time=0.05s > "${tmp}/draco.json" 2> "${tmp}/draco.err"
python3 - "${tmp}/s3c.jsonl" "${tmp}/oracle.jsonl" "${tmp}/draco.json" <<'PY'
import json, re, statistics, sys
inputs = {json.loads(l)["id"]: json.loads(l)["expr"] for l in open(sys.argv[1]) if l.strip()}
oracle = {}
for l in open(sys.argv[2]):
    o = json.loads(l)
    if "id" in o:
        oracle[o["id"]] = o
draco = {}
for b in json.load(open(sys.argv[3]))["benchmarks"]:
    kind, _, bid = b["name"].partition("/")
    ns = b["real_time"] * {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}[b["time_unit"]]
    draco.setdefault(bid, {})[kind] = ns
groups = {}
for bid, expr in inputs.items():
    g = re.sub(r"-instance-\d+$", "", bid)
    groups.setdefault(g, {"expr": expr, "ids": []})["ids"].append(bid)
print("%-10s %12s %12s %8s   %12s %12s %8s   %s" % ("expr", "cel-go eval", "draco eval", "ratio",
      "cel-go comp", "draco comp", "ratio", "expression"))
all_o, all_d = [], []
for g, v in groups.items():
    oe = statistics.median(oracle[i]["evalNs"] for i in v["ids"])
    de = statistics.median(draco[i]["BM_Eval"] for i in v["ids"])
    oc = statistics.median(oracle[i]["compileNs"] for i in v["ids"])
    dc = statistics.median(draco[i]["BM_Compile"] for i in v["ids"])
    all_o += [oracle[i]["evalNs"] for i in v["ids"]]
    all_d += [draco[i]["BM_Eval"] for i in v["ids"]]
    print("%-10s %12.0f %12.1f %7.1fx   %12.0f %12.0f %7.1fx   %s" % (g, oe, de, oe / de, oc, dc,
          oc / dc, v["expr"]))
mo, md = statistics.median(all_o), statistics.median(all_d)
print("overall median eval: cel-go %.0f ns, draco %.1f ns, ratio %.1fx" % (mo, md, mo / md))
PY
