#!/usr/bin/env bash
# House-style file size limit (../shared/reference/aesthetics.md, issue #16): no tracked C++ file
# over 600 lines. The 120-line function limit is clang-tidy's readability-function-size,
# checked with the other .clang-tidy checks by scripts/check-tidy.sh.
# Usage: scripts/check-limits.sh
set -euo pipefail
cd "$(dirname "$0")/.."
MAX_LINES=600
status=0
files=0
while read -r n f; do
  [[ $f == total ]] && continue
  files=$((files + 1))
  if ((n > MAX_LINES)); then
    echo "limits: $f has $n lines (max $MAX_LINES): split it by concern" >&2
    status=1
  fi
done < <(git ls-files '*.cc' '*.h' | xargs wc -l)
((status == 0)) && echo "limits: $files C++ files, each <= $MAX_LINES lines"
exit $status
