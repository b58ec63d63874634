#!/usr/bin/env bash
# Builds the control-plane binaries (etcd, kube-apiserver, kube-controller-manager, kube-scheduler,
# kubectl, helm) from the pinned wrapper modules beside this script; with --node also what a real
# node runs (node-up.sh): kubelet and upstream's DRA test driver of the same version, and
# containerd 2.x with its runc shim (CRI with CDI; module containerd/). The Kubernetes version is
# ${DRACO_K8S_VERSION:-v1.37.2}, one of the directories under k8s/ (v1.34.4, v1.35.4, v1.36.3,
# v1.37.2; add one with k8s-modgen.sh). Results are cached by version under
# ${DRACO_CACHE:-$HOME/.cache/draco}/; a binary already in the cache is not rebuilt.
# Prints the bin directory on the last line of stdout. Usage: build.sh [--node]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../scripts/go-env.sh"
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=mod
K8S=${DRACO_K8S_VERSION:-v1.37.2}
if [[ ! -f $here/k8s/$K8S/go.mod ]]; then
  echo "[build] unsupported Kubernetes version $K8S; supported: $(ls "$here/k8s" | tr '\n' ' ')" >&2
  exit 2
fi
ETCD=$(awk '$1=="go.etcd.io/etcd/server/v3"{print $2}' "$here/etcd/go.mod")
HELM=$(awk '$1=="helm.sh/helm/v4"{print $2}' "$here/helm/go.mod")
CTRD=$(awk '$1=="github.com/containerd/containerd/v2"{print $2}' "$here/containerd/go.mod")
node=0
[[ ${1:-} == --node ]] && node=1
cache=${DRACO_CACHE:-$HOME/.cache/draco}
bin="$cache/bin-k8s-$K8S-etcd-$ETCD-helm-$HELM"
mkdir -p "$bin"
log() { echo "[build] $*" >&2; }
# ldflags: strip, and stamp the Kubernetes version into the binaries (kubectl version, the kubelet's
# node status).
ldflags() {
  local ldf="-s -w" kv
  for kv in gitVersion=$K8S gitMajor=1 gitMinor=$(echo "$K8S" | cut -d. -f2) gitTreeState=clean \
            gitCommit=none buildDate=2026-01-01T00:00:00Z; do
    ldf="$ldf -X k8s.io/component-base/version.$kv -X k8s.io/client-go/pkg/version.$kv"
  done
  echo "$ldf"
}

if [[ ! -x "$bin/kube-apiserver" || ! -x "$bin/kube-controller-manager" || ! -x "$bin/kube-scheduler" || ! -x "$bin/kubectl" ]]; then
  log "building Kubernetes $K8S (cold: 10-20 min on 2 cores)"
  (cd "$here/k8s/$K8S" && go build -trimpath -tags=notest -ldflags="$(ldflags)" -o "$bin/" \
     k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
     k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl)
fi
if ((node)) && [[ ! -x "$bin/kubelet" || ! -x "$bin/dra-test-driver" ]]; then
  log "building kubelet and the DRA test driver $K8S"
  (cd "$here/k8s/$K8S" && go build -trimpath -tags=notest -ldflags="$(ldflags)" -o "$bin/" \
     k8s.io/kubernetes/cmd/kubelet k8s.io/kubernetes/test/e2e/dra/test-driver)
  mv "$bin/test-driver" "$bin/dra-test-driver"
fi
ctrd="$cache/bin-containerd-$CTRD"
if ((node)) && [[ ! -x "$ctrd/containerd" || ! -x "$ctrd/ctr" || ! -x "$ctrd/containerd-shim-runc-v2" ]]; then
  log "building containerd $CTRD"
  mkdir -p "$ctrd"
  (cd "$here/containerd" && go build -trimpath -tags='no_btrfs no_devmapper no_zfs urfave_cli_no_docs' \
     -ldflags="-s -w -X github.com/containerd/containerd/v2/version.Version=$CTRD" -o "$ctrd/" \
     github.com/containerd/containerd/v2/cmd/containerd github.com/containerd/containerd/v2/cmd/ctr \
     github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2)
fi
if ((node)); then
  for b in containerd ctr containerd-shim-runc-v2; do ln -sf "$ctrd/$b" "$bin/$b"; done
fi
if [[ ! -x "$bin/etcd" ]]; then
  log "building etcd $ETCD"
  (cd "$here/etcd" && go build -trimpath -ldflags="-s -w" -o "$bin/etcd" go.etcd.io/etcd/server/v3)
fi
if [[ ! -x "$bin/helm" ]]; then
  log "building helm $HELM"
  (cd "$here/helm" && go build -trimpath \
     -ldflags="-s -w -X helm.sh/helm/v4/internal/version.version=$HELM" -o "$bin/helm" helm.sh/helm/v4/cmd/helm)
fi
echo "$bin"
