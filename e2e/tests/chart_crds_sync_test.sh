#!/usr/bin/env bash
# crds/ is the single source of truth for draco's CRDs; charts/draco/crds/ must be an exact copy
# (scripts/sync-crds.sh makes it). Also proves the check can fail, on a scratch copy of the tree.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

"$ROOT/scripts/sync-crds.sh" --check || fail "charts/draco/crds is out of sync with crds/"
pass "charts/draco/crds matches crds/ ($(ls "$ROOT/crds" | wc -l) files)"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/scripts" "$tmp/charts/draco"
cp "$ROOT/scripts/sync-crds.sh" "$tmp/scripts/"
cp -r "$ROOT/crds" "$tmp/crds"
cp -r "$ROOT/charts/draco/crds" "$tmp/charts/draco/crds"
echo "# edited" >>"$tmp/crds/draco.dev_allocationpolicies.yaml"
if "$tmp/scripts/sync-crds.sh" --check 2>/dev/null; then fail "--check missed an edited source CRD"; fi
"$tmp/scripts/sync-crds.sh" && "$tmp/scripts/sync-crds.sh" --check || fail "sync did not repair the copy"
touch "$tmp/charts/draco/crds/stale.yaml"
if "$tmp/scripts/sync-crds.sh" --check 2>/dev/null; then fail "--check missed a stale chart CRD"; fi
"$tmp/scripts/sync-crds.sh" && [[ ! -e $tmp/charts/draco/crds/stale.yaml ]] || fail "sync kept a stale CRD"
pass "--check detects edited and stale copies; sync repairs both"
