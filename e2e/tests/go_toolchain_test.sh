#!/usr/bin/env bash
# A Debian 12 machine whose only Go is Debian's (golang-go: Go 1.19, older than every go.mod of the
# repository and without GOTOOLCHAIN) builds the repository's Go programs: scripts/go-toolchain.sh
# fetches the pinned toolchain from the Go module proxy into an empty cache (checksum-verified by
# `go mod download`, as the go command fetches toolchains), the scripts that run `go` put it first
# on PATH (scripts/go-env.sh), and the allocator oracle builds with it. Without them, the oracle's
# build stops at "invalid go version '1.26.0'". Needs root (installs golang-1.19-go when missing:
# Debian 12's Go, kept beside the machine's own) and the Go module proxy.
# No control plane needed (lib.sh would skip without one).
set -euo pipefail
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
debian_go=/usr/lib/go-1.19/bin
if [[ ! -x $debian_go/go ]]; then
  if [[ $(id -u) != 0 ]] || ! command -v apt-get >/dev/null; then
    echo "SKIP: no Debian Go 1.19 ($debian_go) and no root to install golang-1.19-go" >&2
    exit 77
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends golang-1.19-go \
    >/dev/null 2>&1 || { apt-get update -qq >/dev/null 2>&1 &&
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends golang-1.19-go \
        >/dev/null; } || fail "apt-get install golang-1.19-go"
fi
tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
# PATH as on a fresh Debian 12 with golang-go: Debian's Go and the system directories only.
fresh_path=$debian_go:/usr/sbin:/usr/bin:/sbin:/bin
[[ $(PATH=$fresh_path go env GOVERSION) == go1.19* ]] || fail "Debian's go is not Go 1.19"

# The oracle's go.mod needs a newer Go: Debian's refuses it (what every Go build did before).
if (cd "$root/tests/oracle" && PATH=$fresh_path GOTOOLCHAIN=local GOFLAGS=-mod=mod GOPROXY=off \
  go build -o "$tmp/oracle-119" . >"$tmp/119.log" 2>&1); then
  fail "Debian's Go 1.19 built tests/oracle: the test no longer shows what the toolchain fetch is for"
fi
# Go 1.19 cannot even parse a three-part go directive ("invalid go version '1.26.0'").
grep -qE "invalid go version|requires go >=" "$tmp/119.log" || fail "unexpected Go 1.19 error: $(head -3 "$tmp/119.log")"
pass "Debian's Go 1.19 cannot build the repository's Go modules: $(grep -oE "invalid go version '[0-9.]*'|requires go >= [0-9.]*" "$tmp/119.log" | head -1)"

bin=$(PATH=$fresh_path DRACO_CACHE=$tmp/cache "$root/scripts/go-toolchain.sh" 2>"$tmp/fetch.log") ||
  fail "go-toolchain.sh: $(cat "$tmp/fetch.log")"
[[ $bin == "$tmp/cache/go/go"* ]] || fail "go-toolchain.sh chose $bin, not a fetched toolchain"
want=$(sed -n 's/^want=\${DRACO_GO_VERSION:-\([0-9.]*\)}$/\1/p' "$root/scripts/go-toolchain.sh")
[[ $("$bin/go" env GOVERSION) == "go$want" ]] || fail "fetched toolchain is $("$bin/go" env GOVERSION), not go$want"
grep -q "fetching golang.org/toolchain@v0.0.1-go$want" "$tmp/fetch.log" || fail "no fetch logged"
pass "go-toolchain.sh fetched go$want from the Go module proxy with Debian's Go ($bin)"
again=$(PATH=$fresh_path DRACO_CACHE=$tmp/cache "$root/scripts/go-toolchain.sh" 2>"$tmp/again.log")
[[ $again == "$bin" && ! -s $tmp/again.log ]] || fail "a second call fetched again: $(cat "$tmp/again.log")"
pass "a second call reuses the fetched toolchain"

# The repository's build script, run as on that machine, builds with the fetched toolchain.
PATH=$fresh_path DRACO_CACHE=$tmp/cache "$root/tests/oracle/build.sh" "$tmp/oracle" >"$tmp/build.log" 2>&1 ||
  fail "tests/oracle/build.sh with Debian's Go on PATH: $(tail -5 "$tmp/build.log")"
[[ -x $tmp/oracle ]] || fail "no oracle binary"
go version "$tmp/oracle" | grep -q "go$want" || fail "oracle not built by go$want: $(go version "$tmp/oracle")"
pass "tests/oracle/build.sh builds the oracle with go$want on a PATH whose go is Debian's 1.19"
