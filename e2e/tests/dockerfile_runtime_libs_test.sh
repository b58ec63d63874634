#!/usr/bin/env bash
# The Dockerfile's runtime stage installs exactly the Debian packages whose shared libraries a
# built draco loads, beyond what debian:bookworm-slim already has:
#   1. every library `ldd draco` resolves belongs to the slim base (the closure of the Priority:
#      required packages) or to a package in RUNTIME_PACKAGES, and every RUNTIME_PACKAGES entry
#      owns at least one loaded library (no missing and no unused package);
#   2. draco starts (--help) inside a throw-away root assembled only from those packages' files,
#      as UID 65532 with the root mounted read-only, as in the Helm chart.
# No Docker engine is needed. Binary: $DRACO_TEST_BINARY, else the `draco` target of
# $DRACO_BUILD_DIR (built here if needed); skips (77) when neither exists yet or without dpkg.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*" >&2; exit 77; }

command -v dpkg-query >/dev/null && command -v apt-cache >/dev/null || skip "needs a Debian host (dpkg)"

bin=${DRACO_TEST_BINARY:-}
if [[ -z $bin ]]; then
  bdir=${DRACO_BUILD_DIR:-}
  [[ -n $bdir && -f $bdir/CMakeCache.txt ]] || skip "no DRACO_BUILD_DIR with a configured build"
  if [[ -f $bdir/build.ninja ]]; then
    ninja -C "$bdir" -t targets all 2>/dev/null | grep -q '^draco:' || skip "no draco target yet"
  else
    cmake --build "$bdir" --target help 2>/dev/null | grep -qw draco || skip "no draco target yet"
  fi
  cmake --build "$bdir" --target draco -j2 >/dev/null || fail "building the draco target failed"
  bin=$(find "$bdir" -path '*/CMakeFiles' -prune -o -type f -name draco -perm -u+x -print | head -n 1)
  [[ -n $bin ]] || fail "draco target built but no draco executable found under $bdir"
fi
[[ -x $bin ]] || fail "$bin is not an executable"
echo "binary: $bin"

# RUNTIME_PACKAGES as the Dockerfile declares it (continuation lines joined).
DOCKERFILE=${DRACO_DOCKERFILE:-$ROOT/Dockerfile}
pkgs=$(sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$DOCKERFILE" \
  | sed -n 's/^ARG RUNTIME_PACKAGES="\(.*\)"$/\1/p' | tr -s ' ' '\n' | grep -v '^$' | sort -u)
[[ -n $pkgs ]] || fail "no ARG RUNTIME_PACKAGES in Dockerfile"

# The slim base image: all Priority: required packages and what they depend on.
required=$(dpkg-query -W -f='${Package} ${Priority}\n' | awk '$2 == "required" {print $1}')
base=$(apt-cache depends --recurse --installed --no-recommends --no-suggests --no-conflicts \
  --no-breaks --no-replaces --no-enhances $required | grep -v '^ ' | sed 's/:.*//' | sort -u)
grep -qx libc6 <<<"$base" || fail "base closure lacks libc6; dpkg database looks incomplete"

# owner PATH: the Debian package shipping a library path (merged-/usr aware).
owner() {
  local p=$1 c out
  for c in "$p" "/usr$p" "$(readlink -f "$p")" "${p#/usr}"; do
    out=$(dpkg-query -S "$c" 2>/dev/null | head -n 1) || continue
    [[ -n $out ]] && { echo "${out%%:*}"; return 0; }
  done
  return 1
}

ldd_out=$(ldd "$bin") || fail "ldd $bin failed"
if grep -q 'not found' <<<"$ldd_out"; then fail "unresolved libraries on this host: $(grep 'not found' <<<"$ldd_out")"; fi
needed=""
base_owners=""
while read -r lib; do
  o=$(owner "$lib") || fail "no Debian package owns $lib (built from source? the image would lack it)"
  if grep -qx "$o" <<<"$base"; then
    base_owners+="$o"$'\n'
  else
    needed+="$o"$'\n'
  fi
done < <(awk '/=>/ && $3 ~ /^\// {print $3} /^\t\/.*ld-linux/ {print $1}' <<<"$ldd_out")
needed=$(sort -u <<<"$needed" | grep -v '^$' || true)
base_owners=$(sort -u <<<"$base_owners" | grep -v '^$' || true)
echo "loaded libraries come from base packages: $(tr '\n' ' ' <<<"$base_owners")"

missing=$(comm -23 <(echo "$needed") <(echo "$pkgs") | grep -v '^$' || true)
unused=$(comm -13 <(echo "$needed") <(echo "$pkgs") | grep -v '^$' || true)
[[ -z $missing ]] || fail "Dockerfile RUNTIME_PACKAGES lacks: $(tr '\n' ' ' <<<"$missing")"
[[ -z $unused ]] || fail "Dockerfile RUNTIME_PACKAGES has packages draco does not load: $(tr '\n' ' ' <<<"$unused")"
pass "RUNTIME_PACKAGES equals the non-base owners of draco's libraries: $(tr '\n' ' ' <<<"$pkgs")"

# Throw-away root: the files of RUNTIME_PACKAGES, their dependencies, and the base packages that
# own loaded libraries; then draco as UID 65532 on a read-only bind mount of it.
can_chroot=""
if [[ $(id -u) == 0 ]] && unshare -m true 2>/dev/null; then
  can_chroot="unshare -m"
elif unshare -r -m true 2>/dev/null; then
  can_chroot="unshare -r -m"
fi
if [[ -z $can_chroot ]]; then
  echo "SKIP (part 2): cannot create a mount namespace here; the ldd check above still ran" >&2
  exit 0
fi
tmp=$(mktemp -d)
trap '[[ -n ${KEEP_ROOT:-} ]] || rm -rf "$tmp"' EXIT
root=$tmp/root
mkdir -p "$root"/{usr/bin,usr/sbin,usr/lib,usr/lib64,usr/local/bin,etc,tmp}
for d in bin sbin lib lib64; do ln -s "usr/$d" "$root/$d"; done
closure=$(apt-cache depends --recurse --installed --no-recommends --no-suggests --no-conflicts \
  --no-breaks --no-replaces --no-enhances $pkgs $base_owners | grep -v '^ ' | grep -v '^<' \
  | sed 's/:.*//' | sort -u)
for p in $closure; do
  dpkg-query -L "$p" 2>/dev/null | grep -vE '^/usr/share/(doc|man|info|locale|lintian)/' \
    | while read -r f; do
        if [[ -L $f || -f $f ]]; then cp -a --parents "$f" "$root" 2>/dev/null || true; fi
      done
done
# cp --parents creates missing directories private; in the image they are 0755.
find "$root" -type d -exec chmod 0755 {} +
install -m 0755 "$bin" "$root/usr/local/bin/draco"
echo 'nonroot:x:65532:65532:nonroot:/nonexistent:/usr/sbin/nologin' >"$root/etc/passwd"
echo 'nonroot:x:65532:' >"$root/etc/group"
ldconfig -r "$root" 2>/dev/null || true
echo "throw-away root $root: $(du -sh "$root" | cut -f1) from $(wc -w <<<"$closure") packages"

uid_opt="--userspec=65532:65532"
[[ $can_chroot == "unshare -r -m" ]] && uid_opt=""  # only uid 0 is mapped in a user namespace
out=$($can_chroot bash -c "mount --bind '$root' '$root' && mount -o remount,bind,ro '$root' \
  || exit 3; chroot $uid_opt '$root' /usr/local/bin/draco --help; echo \"rc=\$?\"" 2>&1) || true
rc=$(sed -n 's/^rc=//p' <<<"$out" | tail -n 1)
if grep -q 'error while loading shared libraries' <<<"$out" || [[ -z $rc || $rc == 126 || $rc == 127 ]]; then
  fail "draco does not start in the runtime root (rc=$rc): $out"
fi
ro=$($can_chroot bash -c "mount --bind '$root' '$root' && mount -o remount,bind,ro '$root' \
  && { touch '$root/probe' 2>/dev/null && echo writable || echo read-only; }" 2>&1 || true)
[[ $ro == read-only ]] || fail "the throw-away root was not mounted read-only ($ro); the check proves nothing"
pass "draco --help ran (rc=$rc) in a read-only root holding only base + RUNTIME_PACKAGES${uid_opt:+ as UID 65532}"
