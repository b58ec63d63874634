#!/usr/bin/env bash
# House-style file size limit (../shared/reference/aesthetics.md, issue #16): no tracked C++ file
# over 600 lines. The 120-line function limit is clang-tidy's readability-function-size,
# checked with the other .clang-tidy checks by scripts/check-tidy.sh.
# The allocator's compute form stays private (issue #16): no file outside controller/allocator/
# includes compute_model.h, compute_api.h or from_api.h; everyone else uses allocator.h's api
# objects.
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
private=$(git ls-files '*.cc' '*.h' | grep -v '^controller/allocator/' |
  xargs grep -HnE '#include "controller/allocator/(compute_model|compute_api|from_api)\.h"' || true)
if [[ -n $private ]]; then
  echo "limits: the allocator's compute form is private to controller/allocator/:" >&2
  echo "$private" >&2
  status=1
fi
((status == 0)) && echo "limits: $files C++ files, each <= $MAX_LINES lines; compute form private"
exit $status
