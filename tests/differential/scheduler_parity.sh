#!/usr/bin/env bash
# Scheduler filter parity (issue #13): draco's feasibility_harness against kube-scheduler
# v1.37.2's own framework (tests/oracle/schedfilter) on generated cluster snapshots.
#
# Usage: tests/differential/scheduler_parity.sh [FEASIBILITY_HARNESS]
#   FEASIBILITY_HARNESS  draco's harness binary (else $DRACO_FEASIBILITY_HARNESS); it is run as
#                        `harness <scenarios.jsonl>` and prints the contract's output on stdout.
# Environment:
#   DRACO_SCHEDFILTER     oracle binary; built with tests/oracle/schedfilter/build.sh if unset
#   SCHEDFILTER_SEEDS     generator seeds (default "1301 1302")
#   SCHEDFILTER_N         scenarios per seed (default 2500; at least 5000 in all by default)
#   DRACO_PARITY_FINDINGS append mismatching scenarios (Markdown) to this file
#   DRACO_PARITY_KEEP     keep the work directory (scenarios and both outputs) and print it
# Exit: 0 all feasible sets identical, 1 mismatch, 77 skipped (no Go and no oracle), 2 error.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "${here}/../.." && pwd)"
harness="${1:-${DRACO_FEASIBILITY_HARNESS:-}}"
if [[ -z "${harness}" || ! -x "${harness}" ]]; then
  echo "scheduler_parity: feasibility harness not found (argument or DRACO_FEASIBILITY_HARNESS)" >&2
  exit 2
fi
seeds="${SCHEDFILTER_SEEDS:-1301 1302}"
per_seed="${SCHEDFILTER_N:-2500}"
work="$(mktemp -d "${TMPDIR:-/tmp}/sched-parity.XXXXXX")"
if [[ -n "${DRACO_PARITY_KEEP:-}" ]]; then
  echo "scheduler_parity: work directory ${work}"
else
  trap 'rm -rf "${work}"' EXIT
fi

oracle="${DRACO_SCHEDFILTER:-}"
if [[ -z "${oracle}" ]]; then
  if ! command -v go >/dev/null 2>&1; then
    echo "scheduler_parity: SKIP: no Go toolchain and DRACO_SCHEDFILTER unset" >&2
    exit 77
  fi
  oracle="$("${repo}/tests/oracle/schedfilter/build.sh" "${work}/schedfilter" | tail -n1)"
fi

scen="${work}/scenarios.jsonl"
: >"${scen}"
for seed in ${seeds}; do
  "${oracle}" gen --seed "${seed}" --n "${per_seed}" >>"${scen}"
done
total="$(grep -c . "${scen}")"
echo "scheduler_parity: ${total} scenarios (seeds ${seeds}, ${per_seed} each)"

"${oracle}" eval "${scen}" >"${work}/oracle.out"
"${harness}" "${scen}" >"${work}/draco.out"

args=(--scenarios "${scen}" --label "parity $(date -u +%FT%TZ) seeds ${seeds} n ${per_seed}")
if [[ -n "${DRACO_PARITY_FINDINGS:-}" ]]; then
  args+=(--findings "${DRACO_PARITY_FINDINGS}")
fi
status=0
"${oracle}" compare "${args[@]}" "${work}/oracle.out" "${work}/draco.out" || status=$?
exit "${status}"
