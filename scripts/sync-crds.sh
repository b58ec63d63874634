#!/usr/bin/env bash
# Copies the CRDs from crds/ (the single source of truth) into charts/draco/crds/.
#   scripts/sync-crds.sh          copy, removing chart CRDs that no longer exist in crds/
#   scripts/sync-crds.sh --check  change nothing; exit 1 and list the differences if out of sync
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
src=$root/crds
dst=$root/charts/draco/crds
check=0
[[ ${1:-} == --check ]] && check=1
mkdir -p "$dst"
rc=0
for f in "$src"/*.yaml; do
  name=$(basename "$f")
  if ((check)); then
    if ! cmp -s "$f" "$dst/$name"; then
      echo "out of sync: charts/draco/crds/$name differs from crds/$name" >&2
      rc=1
    fi
  else
    cp "$f" "$dst/$name"
  fi
done
for f in "$dst"/*.yaml; do
  [[ -e $f ]] || continue
  name=$(basename "$f")
  if [[ ! -e $src/$name ]]; then
    if ((check)); then
      echo "out of sync: charts/draco/crds/$name has no source in crds/" >&2
      rc=1
    else
      rm "$f"
    fi
  fi
done
if ((rc)); then echo "run scripts/sync-crds.sh to fix" >&2; fi
exit $rc
