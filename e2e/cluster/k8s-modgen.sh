#!/usr/bin/env bash
# Writes the pinned wrapper module e2e/cluster/k8s/VERSION/{go.mod,go.sum} that build.sh builds the
# control plane of Kubernetes VERSION from: k8s.io/kubernetes at VERSION with every staging module
# replaced by its published v0.MINOR.PATCH, the same go/godebug lines as upstream's go.mod, and the
# dependency versions upstream pins (minimal version selection over upstream's own go.mod).
# Run once per new version and commit the result. Usage: e2e/cluster/k8s-modgen.sh v1.34.4
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../scripts/go-env.sh"
export GOTOOLCHAIN=local GOFLAGS=-mod=mod
V=${1:?usage: k8s-modgen.sh vMAJOR.MINOR.PATCH}
[[ $V =~ ^v1\.([0-9]+)\.([0-9]+)$ ]] || { echo "bad version $V" >&2; exit 2; }
staging="v0.${BASH_REMATCH[1]}.${BASH_REMATCH[2]}"
dir=$here/k8s/$V
mkdir -p "$dir"
upstream=$(go mod download -json "k8s.io/kubernetes@$V" | sed -n 's/^\t"GoMod": "\(.*\)",$/\1/p')
[[ -f $upstream ]] || { echo "could not download k8s.io/kubernetes@$V" >&2; exit 1; }
{
  echo "module draco.invalid/e2e/cluster/k8s"
  echo
  grep -E '^(go|godebug) ' "$upstream"
  echo
  # Upstream replaces each staging module with ./staging/src/k8s.io/NAME; use the published one.
  sed -n 's#^[[:space:]]*\(k8s\.io/[a-z0-9-]*\) => \./staging/src/k8s\.io/[a-z0-9-]*$#\1#p' "$upstream" |
    sort -u | while read -r m; do echo "replace $m => $m $staging"; echo; done
  echo "require k8s.io/kubernetes $V"
} >"$dir/go.mod"
: >"$dir/go.sum"
cd "$dir"
go mod download k8s.io/kubernetes
# Resolve the build list for the binaries build.sh builds (a real node's kubelet and DRA test
# driver too), recording it in go.mod and go.sum.
go list -deps k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
  k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl \
  k8s.io/kubernetes/cmd/kubelet k8s.io/kubernetes/test/e2e/dra/test-driver >/dev/null
echo "$dir"
