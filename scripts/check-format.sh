#!/usr/bin/env bash
# Fails when a tracked C++ file differs from clang-format's output (.clang-format: Google style,
# 100 columns), naming each file; run `clang-format -i FILE` to fix. Generated tables and fuzzer
# corpora are not C++ sources and are not checked. Usage: scripts/check-format.sh
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.cc' '*.h')
bad=$(clang-format --dry-run "${files[@]}" 2>&1 | sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: warning:.*/\1/p' | sort -u)
if [[ -n $bad ]]; then
  echo "clang-format: these files are not formatted (clang-format -i FILE):" >&2
  echo "$bad" | sed 's/^/  /' >&2
  exit 1
fi
echo "clang-format: ${#files[@]} files formatted"
