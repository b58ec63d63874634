#!/usr/bin/env bash
# Instructions per allocator iteration, two alloc_bench binaries side by side (callgrind's count of
# executed instructions, which timing noise on a shared or virtual machine does not move; this box
# has no hardware counters for perf). For each scenario line, each binary runs under
# `valgrind --tool=callgrind` with -iters 1 and with -iters K; (Ir(K) - Ir(1)) / (K - 1) is the
# cost of one iteration of all four columns (cold, shared, update, allocate; a fill-up line: one
# fill-up), without decoding the input, which differs between versions.
# Usage: tests/bench/alloc_instructions.sh BEFORE_ALLOC_BENCH AFTER_ALLOC_BENCH SCENARIOS.jsonl [K]
#   SCENARIOS.jsonl: `oracle gen-perf -scenario all` lines (S1-S5).
set -euo pipefail
[[ $# -ge 3 ]] || { sed -n 2,9p "$0" >&2; exit 2; }
before=$1 after=$2 scenarios=$3 K=${4:-3}
command -v valgrind >/dev/null || { echo "valgrind is not installed" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ir() {  # ir BINARY LINEFILE ITERS -> executed instructions
  valgrind --tool=callgrind --callgrind-out-file="$work/cg.out" "$1" -iters "$3" <"$2" \
    2>&1 >/dev/null | sed -n 's/.*refs: *//p' | tr -d ,
}
printf '%-12s %16s %16s %8s\n' scenario before after change
n=0
while IFS= read -r line; do
  [[ -n $line ]] || continue
  n=$((n + 1))
  id=$(sed -n 's/^{"id":"\([^"]*\)".*/\1/p' <<<"$line")
  printf '%s\n' "$line" >"$work/line.jsonl"
  per=()
  for bin in "$before" "$after"; do
    one=$(ir "$bin" "$work/line.jsonl" 1)
    many=$(ir "$bin" "$work/line.jsonl" "$K")
    per+=($(((many - one) / (K - 1))))
  done
  awk -v id="${id:-line$n}" -v b="${per[0]}" -v a="${per[1]}" \
    'BEGIN {printf "%-12s %16d %16d %+7.1f%%\n", id, b, a, 100 * (a - b) / b}'
done <"$scenarios"
