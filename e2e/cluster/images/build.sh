#!/usr/bin/env bash
# Builds the two images the local real nodes run (e2e/cluster/node-up.sh), from Debian packages
# and this directory, with no registry and no container engine:
#   draco.local/pause:1     the pod sandbox: pause.c, linked statically (gcc, libc6-dev)
#   draco.local/workload:1  busybox-static and show-devices.sh: prints what the DRA driver
#                           injected into the container, then sleeps
# Writes OCI archives (oci_image.py) to ${DRACO_CACHE:-$HOME/.cache/draco}/images/ and prints that
# directory on the last line. A rebuild happens only when an input changed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${DRACO_CACHE:-$HOME/.cache/draco}/images
mkdir -p "$out"
die() { echo "[images] ERROR: $*" >&2; exit 1; }
command -v gcc >/dev/null || die "gcc is missing: apt-get install gcc libc6-dev"
[[ -x /bin/busybox && $(/bin/busybox --list 2>/dev/null) == *sleep* ]] ||
  die "busybox-static is missing: apt-get install busybox-static"
stamp=$(cat "$here"/pause.c "$here"/show-devices.sh "$here"/oci_image.py /bin/busybox | sha256sum | cut -c1-16)
if [[ -f $out/stamp && $(cat "$out/stamp") == "$stamp" && -f $out/pause.tar && -f $out/workload.tar ]]; then
  echo "$out"
  exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

mkdir -p "$work/pause"
gcc -static -O2 -Wall -Wextra -Werror -o "$work/pause/pause" "$here/pause.c"
python3 "$here/oci_image.py" --root "$work/pause" --name draco.local/pause:1 \
  --entrypoint '["/pause"]' --out "$out/pause.tar" >/dev/null

r=$work/workload
mkdir -p "$r/bin" "$r/tmp" "$r/proc" "$r/sys" "$r/dev" "$r/etc" "$r/var/run"
cp /bin/busybox "$r/bin/busybox"
for cmd in $(/bin/busybox --list); do
  [[ $cmd == busybox ]] || ln -s busybox "$r/bin/$cmd"
done
install -m 0755 "$here/show-devices.sh" "$r/bin/show-devices"
echo "root:x:0:0:root:/:/bin/sh" >"$r/etc/passwd"
echo "root:x:0:" >"$r/etc/group"
chmod 1777 "$r/tmp"
python3 "$here/oci_image.py" --root "$r" --name draco.local/workload:1 \
  --env PATH=/bin --entrypoint '["/bin/show-devices"]' --out "$out/workload.tar" >/dev/null
echo "$stamp" >"$out/stamp"
echo "[images] built draco.local/pause:1 and draco.local/workload:1 in $out" >&2
echo "$out"
