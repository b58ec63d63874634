#!/usr/bin/env bash
# Prints the bin directory of a Go toolchain new enough for every Go module of the repository (the
# control plane, the oracles, the benchmarks' drivers): the `go` on PATH when it is at least
# DRACO_GO_VERSION, else a toolchain fetched once into ${DRACO_CACHE:-~/.cache/draco}/go/.
#
# The fetch is the one the go command makes itself for GOTOOLCHAIN (Go 1.21+): the module
# golang.org/toolchain@v0.0.1-goVERSION.OS-ARCH from the Go module proxy (`go env GOPROXY`),
# checked against the checksum database (`go env GOSUMDB`). It is asked of the Go that is there, so
# Debian 12's own Go 1.19 (golang-go, which predates GOTOOLCHAIN) can bring in the newer one:
# `go mod download` verifies the module's hash before it unpacks it. The zip keeps no file modes;
# the binaries are made executable as the go command does.
#
# Usage: PATH="$(scripts/go-toolchain.sh):$PATH"  (prints one line; messages go to stderr)
# Exit 1 when no Go at all is on PATH (scripts/install-deps.sh installs Debian's) or the fetch fails.
set -euo pipefail
want=${DRACO_GO_VERSION:-1.26.8}
log() { echo "[go-toolchain] $*" >&2; }

# version_ge A B: A >= B for dotted Go versions (1.26.8 >= 1.26.0; "1.19" is 1.19.0).
version_ge() { [[ $(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n1) == "$2" ]]; }
# go_version GO: "1.26.8" for the toolchain binary GO, empty when it does not run.
go_version() { GOTOOLCHAIN=local "$1" env GOVERSION 2>/dev/null | sed -n 's/^go\([0-9.]*\).*/\1/p'; }

if command -v go >/dev/null 2>&1; then
  have=$(go_version go)
  if [[ -n $have ]] && version_ge "$have" "$want"; then
    dirname "$(command -v go)"
    exit 0
  fi
else
  log "no go on PATH: run scripts/install-deps.sh (it installs Debian's golang-go)"
  exit 1
fi

cache=${DRACO_CACHE:-$HOME/.cache/draco}/go
dir=$cache/go$want
if [[ -x $dir/bin/go && $(go_version "$dir/bin/go") == "$want" ]]; then
  echo "$dir/bin"
  exit 0
fi

case $(uname -m) in
  x86_64) arch=amd64 ;;
  aarch64) arch=arm64 ;;
  *) log "no Go toolchain module for $(uname -m)"; exit 1 ;;
esac
mod=golang.org/toolchain@v0.0.1-go$want.linux-$arch
log "go on PATH is go${have:-?} (< $want): fetching $mod from the Go module proxy"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/draco-go-toolchain.XXXXXX")
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
# A module cache of its own (the toolchain is 300 MB unpacked and used from $dir), outside any
# module; GOFLAGS cleared so that a -mod setting of the caller does not apply.
if ! src=$(cd "$tmp" && GOMODCACHE=$tmp/mod GOFLAGS=-modcacherw GO111MODULE=on GOTOOLCHAIN=local \
  go mod download -json "$mod" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p'); then
  log "go mod download $mod failed (is the Go module proxy reachable? go env GOPROXY: $(go env GOPROXY))"
  exit 1
fi
[[ -n $src && -d $src ]] || { log "go mod download $mod gave no directory"; exit 1; }
mkdir -p "$cache"
rm -rf "$dir.new"
cp -r "$src" "$dir.new"
chmod -R u+w "$dir.new"
# What the go command marks executable when it runs a downloaded toolchain.
chmod +x "$dir.new"/bin/* "$dir.new"/pkg/tool/*/*
got=$(go_version "$dir.new/bin/go")
[[ $got == "$want" ]] || { log "the fetched toolchain reports go$got, not go$want"; exit 1; }
rm -rf "$dir"
mv "$dir.new" "$dir"
log "go$want in $dir"
echo "$dir/bin"
