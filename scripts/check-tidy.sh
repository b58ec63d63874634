#!/usr/bin/env bash
# Static analysis, run by scripts/test.sh (issue #16): clang-tidy with the repository's .clang-tidy
# (the house style's list of checks, clang-analyzer included)
# over every production C++ source and the project headers it includes (HeaderFilterRegex), using
# the build's compile_commands.json. Any warning fails the check, named with file:line and the
# check; readability-function-size enforces the 120-line function limit. Test, fuzz and benchmark
# sources are not analysed: gtest and benchmark macros trip ownership and naming checks by design.
#
# clang-tidy costs 20-40 CPU seconds per source here, so clean results are remembered under
# $DRACO_TIDY_CACHE (default ~/.cache/draco/tidy; empty: no cache), keyed by everything the result
# depends on (scripts/tidy-keys.py: tool version, .clang-tidy, compile command, and the content of
# the source and every file it includes). Only sources whose key has no clean result are analysed;
# findings are never cached. The build must be up to date (the keys read ninja's dependency record).
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
# -Wno-ambiguous-reversed-operator: clang (not GCC) warns, as an error under -Werror, that C++20
# finds RapidJSON's member-iterator `!=` ambiguous with its reversed form; the defect is in
# RapidJSON's header (non-const operator templates), not in our comparisons of its iterators.
EXTRA=--extra-arg=-Wno-ambiguous-reversed-operator
CACHE=${DRACO_TIDY_CACHE-$HOME/.cache/draco/tidy}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

pattern='(warning|error): .*\[[a-z0-9.,-]+\]$'
todo=()
declare -A key_of=()
if [[ -n $CACHE ]]; then
  mkdir -p "$CACHE"
  while read -r key src; do
    if [[ $key != none && -f $CACHE/$key ]]; then continue; fi
    key_of[$src]=$key
    todo+=("$src")
  done < <(scripts/tidy-keys.py "$BUILD" "$EXTRA" "${sources[@]}")
else
  todo=("${sources[@]}")
fi
echo "tidy: ${#sources[@]} sources, $((${#sources[@]} - ${#todo[@]})) clean in the cache," \
  "${#todo[@]} to analyse"

# One source per clang-tidy process keeps the parallelism even; --quiet drops the suppressed
# counts. Each source's output goes to its own file, so a clean one can be remembered.
if ((${#todo[@]})); then
  # A clean result is remembered as soon as it is known, so an interrupted run keeps its work.
  for i in "${!todo[@]}"; do
    printf '%s\0%s\0%s\0' "${todo[$i]}" "$work/$i.out" "${key_of[${todo[$i]}]:-none}"
  done | xargs -0 -n3 -P"${DRACO_JOBS:-$(nproc)}" sh -c '
      # $0 build, $1 cache, $2 extra argument, $3 finding pattern; $4 source, $5 output, $6 key
      # GCC-only warning flags of the build (-Wno-restrict, cmake/Warnings.cmake) are unknown to
      # clang: not a finding.
      clang-tidy -p "$0" --quiet "$2" --extra-arg=-Wno-unknown-warning-option "$4" >"$5" \
        2>"$5.err"; rc=$?; echo $rc >"$5.rc"
      if [ -n "$1" ] && [ "$6" != none ] && [ $rc = 0 ] && ! grep -q -E "$3" "$5"; then
        touch "$1/$6"
      fi' "$BUILD" "$CACHE" "$EXTRA" "$pattern"
fi
failed=0
for i in "${!todo[@]}"; do
  out=$work/$i.out
  [[ -f $out.rc ]] || { echo "tidy: clang-tidy did not run on ${todo[$i]}" >&2; exit 1; }
  grep -q -E "$pattern" "$out" && continue
  # No one-line finding, yet a non-zero exit (.clang-tidy makes every finding an error): either a
  # finding whose message spans lines (clang-analyzer's Padding lists fields one per line) or
  # clang-tidy itself failed. Either way show what it printed, and go on to the other sources.
  if [[ $(<"$out.rc") != 0 ]]; then
    echo "tidy: clang-tidy exited $(<"$out.rc") on ${todo[$i]}; it printed:" >&2
    sed "s|^$PWD/||" "$out" | head -40 >&2
    tail -5 "$out.err" >&2
    failed=1
  fi
done
warnings=$(cat "$work"/*.out 2>/dev/null | grep -E "$pattern" | sed "s|^$PWD/||" | sort -u || true)
if [[ -n $warnings ]]; then
  echo "$warnings" >&2
  echo "tidy: $(wc -l <<<"$warnings") finding(s) in ${#todo[@]} analysed sources; by check:" >&2
  grep -o '\[[a-z0-9.,-]*\]$' <<<"$warnings" | sort | uniq -c | sort -rn >&2
  exit 1
fi
((failed == 0)) || exit 1
echo "tidy: ${#sources[@]} sources clean (.clang-tidy checks, functions <= 120 lines)"
