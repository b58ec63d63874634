#!/usr/bin/env bash
# scripts/install-deps.sh names the Debian package of every host tool the README's two commands
# and the tests use: for each file below, the package dpkg says owns it must be in the script's
# list (a fresh Debian 12 has none of them; on a developer's machine they may be there for other
# reasons, which is how /usr/bin/time (package time, used by test.sh) and the yaml module of
# Debian's python3 (python3-yaml, used by kubectl_draco_test and the bench scripts) were missed).
# No control plane needed.
set -euo pipefail
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
command -v dpkg-query >/dev/null || { echo "SKIP: not a Debian system" >&2; exit 77; }
# The pkgs=( ... ) array of install-deps.sh, comments dropped.
listed=$(sed -n '/^pkgs=(/,/^)/p' "$root/scripts/install-deps.sh" | sed 's/#.*//' |
  tr -s ' \t' '\n\n' | grep -vE '^(pkgs=\(|\))?$')
files=(
  /usr/bin/time           # test.sh: timings of the builds
  /usr/lib/python3/dist-packages/yaml/__init__.py  # kubectl_draco_test, bench scripts
  /usr/bin/promtool       # prometheus_rules test
  /usr/bin/prometheus     # prometheus_queries e2e
  /usr/bin/curl /usr/bin/cmake /usr/bin/ninja /usr/bin/clang-tidy /usr/bin/clang-format
  /usr/bin/git /usr/sbin/runc /usr/bin/buildah /usr/sbin/debootstrap
  /usr/sbin/iptables /bin/busybox /usr/lib/cni/bridge
)
n=0
for f in "${files[@]}"; do
  [[ -e $f ]] || fail "$f is missing: run scripts/install-deps.sh (it should have installed it)"
  # The path as the scripts use it (a symlink's own package, e.g. clang-tidy), else its target.
  owner=$(dpkg-query -S "$f" 2>/dev/null | head -n1 | cut -d: -f1) ||
    owner=$(dpkg-query -S "$(readlink -f "$f")" 2>/dev/null | head -n1 | cut -d: -f1) || true
  [[ -n $owner ]] || fail "no Debian package owns $f"
  grep -qxF "$owner" <<<"$listed" || fail "$f comes from package $owner, which install-deps.sh does not list"
  n=$((n + 1))
done
pass "install-deps.sh lists the package of each of the $n tools the scripts and tests use"
