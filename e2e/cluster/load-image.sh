#!/usr/bin/env bash
# Loads an OCI image archive into the containerd of every local real node (node-up.sh), as
# `kind load image-archive` does for kind: e.g. the draco image that images/draco-image.sh wrote.
# Usage: e2e/cluster/load-image.sh ARCHIVE
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
archive=${1:?usage: load-image.sh ARCHIVE}
[[ -f $archive ]] || die "no file $archive"
BIN=$(env_bin)
n=0
for sock in "$D"/nodes/*/containerd.sock; do
  [[ -S $sock ]] || continue
  "$BIN/ctr" -a "$sock" -n k8s.io images import --snapshotter overlayfs "$archive" >/dev/null 2>&1 ||
    die "could not import $archive into $(basename "$(dirname "$sock")")"
  n=$((n + 1))
done
((n)) || die "no real node under $D/nodes (up.sh --real-nodes N)"
log "loaded $(basename "$archive") into $n real node(s)"
