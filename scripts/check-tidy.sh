#!/usr/bin/env bash
# Static analysis (issue #16; not yet run by scripts/test.sh, see README "Development"): clang-tidy with the repository's .clang-tidy (the house
# style's list of checks, ../shared/reference/aesthetics.md) over every production C++ source and
# the project headers it includes (HeaderFilterRegex), using the build's compile_commands.json.
# Any warning fails the check, named with file:line and the check; readability-function-size
# enforces the 120-line function limit. Test, fuzz and benchmark sources are not analysed: gtest
# and benchmark macros trip ownership and naming checks by design.
# Usage: scripts/check-tidy.sh BUILD_DIR [FILE...]   (FILE...: only these sources)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
shift || true
[[ -f $BUILD/compile_commands.json ]] || { echo "tidy: no $BUILD/compile_commands.json" >&2; exit 1; }
if (($#)); then
  sources=("$@")
else
  mapfile -t sources < <(git ls-files 'base/*.cc' 'controller/*.cc' 'k8sclient/*.cc' |
    grep -v -E '_(test|fuzz|bench)\.cc$|/testing/|testing_')
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
# One file per clang-tidy process keeps the parallelism even; --quiet drops the suppressed counts.
# -Wno-ambiguous-reversed-operator: clang (not GCC) warns, as an error under -Werror, that C++20
# finds RapidJSON's member-iterator `!=` ambiguous with its reversed form; the defect is in
# RapidJSON's header (non-const operator templates), not in our comparisons of its iterators.
printf '%s\n' "${sources[@]}" | xargs -P"${DRACO_JOBS:-$(nproc)}" -n1 clang-tidy -p "$BUILD" \
  --quiet --extra-arg=-Wno-ambiguous-reversed-operator >"$out" 2>/dev/null || true
warnings=$(grep -E '(warning|error): .*\[[a-z0-9.,-]+\]$' "$out" | sed "s|^$PWD/||" | sort -u || true)
if [[ -n $warnings ]]; then
  echo "$warnings" >&2
  echo "tidy: $(wc -l <<<"$warnings") finding(s) in ${#sources[@]} sources; by check:" >&2
  grep -o '\[[a-z0-9.,-]*\]$' <<<"$warnings" | sort | uniq -c | sort -rn >&2
  exit 1
fi
echo "tidy: ${#sources[@]} sources clean (.clang-tidy checks, functions <= 120 lines)"
