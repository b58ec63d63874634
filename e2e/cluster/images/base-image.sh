#!/usr/bin/env bash
# Builds the Debian base images of draco's Dockerfile with no registry and no container engine:
# debootstrap --variant=minbase of RELEASE (default bookworm) from the host's own apt mirror (read
# from /etc/apt/sources.list.d/*.sources or /etc/apt/sources.list, never written down here),
# committed with buildah as two local images,
#   localhost/debian:RELEASE       the minbase root, apt sources = the host's for RELEASE
#   localhost/debian:RELEASE-slim  the same without docs, man pages and locales, and a dpkg
#                                  configuration that keeps them out, as Debian's -slim images do
# for the Dockerfile's --build-arg BASE_IMAGE=localhost/debian. buildah's storage is
# ${DRACO_CACHE:-$HOME/.cache/draco}/buildah (its own storage.conf; overlay when the kernel allows
# it, else vfs; DRACO_BUILDAH_DRIVER forces one), nothing of the host's container storage is used.
# An image already in that storage is kept (--refresh rebuilds both). Needs root, buildah,
# debootstrap. Prints the base repository (localhost/debian) on the last line of stdout.
# Usage: base-image.sh [--refresh] [RELEASE]
# draco-image.sh sources this file for buildah_setup and base_image_ensure.
set -euo pipefail

BASE_REPO=localhost/debian

base_log() { echo "[base-image] $*" >&2; }
base_die() { echo "[base-image] ERROR: $*" >&2; exit 1; }

# buildah_setup: checks root and buildah, picks the storage driver and exports
# CONTAINERS_STORAGE_CONF, TMPDIR and BUILDAH_ISOLATION so that every buildah command after it
# uses the cache's storage. Takes a lock for the rest of the calling process: one build at a time.
buildah_setup() {
  [[ $(id -u) == 0 ]] || base_die "must run as root (debootstrap and buildah's chroot isolation need it)"
  command -v buildah >/dev/null || base_die "buildah is missing: apt-get install buildah"
  BUILDAH_DIR=${DRACO_CACHE:-$HOME/.cache/draco}/buildah
  mkdir -p "$BUILDAH_DIR/tmp"
  exec {BUILDAH_LOCK_FD}>"$BUILDAH_DIR/lock"
  flock "$BUILDAH_LOCK_FD"
  local driver=${DRACO_BUILDAH_DRIVER:-}
  [[ -n $driver || ! -f $BUILDAH_DIR/driver ]] || driver=$(cat "$BUILDAH_DIR/driver")
  local try
  for try in ${driver:-overlay vfs}; do
    # One storage tree per driver: containers/storage refuses a tree made by another driver.
    cat >"$BUILDAH_DIR/storage-$try.conf" <<EOF
[storage]
driver = "$try"
graphroot = "$BUILDAH_DIR/$try"
runroot = "$BUILDAH_DIR/run-$try"
EOF
    export CONTAINERS_STORAGE_CONF=$BUILDAH_DIR/storage-$try.conf
    if buildah info >/dev/null 2>"$BUILDAH_DIR/info.log"; then
      echo "$try" >"$BUILDAH_DIR/driver"
      export TMPDIR=$BUILDAH_DIR/tmp BUILDAH_ISOLATION=chroot
      return 0
    fi
    base_log "storage driver $try does not work here: $(tail -n 1 "$BUILDAH_DIR/info.log")"
  done
  base_die "no usable buildah storage driver under $BUILDAH_DIR (see $BUILDAH_DIR/info.log)"
}

# apt_sources MODE RELEASE: reads the host's apt configuration. MODE uri prints the URI of the
# first enabled "deb" source that lists suite RELEASE itself; MODE deb822 prints the deb822
# stanzas whose suites are RELEASE or RELEASE-something (updates, security); MODE list prints the
# one-line sources.list entries of those suites.
apt_sources() {
  local mode=$1 rel=$2 f
  local deb822=() list=()
  for f in /etc/apt/sources.list.d/*.sources; do [[ -f $f ]] && deb822+=("$f"); done
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do [[ -f $f ]] && list+=("$f"); done
  if ((${#deb822[@]})) && [[ $mode != list ]]; then
    awk -v rel="$rel" -v mode="$mode" '
      BEGIN { RS = ""; FS = "\n" }
      {
        types = ""; uris = ""; suites = ""; enabled = "yes"; text = ""
        for (i = 1; i <= NF; i++) {
          if ($i ~ /^[ \t]*#/) continue
          text = text $i "\n"
          if ($i ~ /^[ \t]/) continue
          n = index($i, ":"); if (n == 0) continue
          key = tolower(substr($i, 1, n - 1)); val = substr($i, n + 1)
          gsub(/^[ \t]+|[ \t]+$/, "", val)
          if (key == "types") types = val
          else if (key == "uris") uris = val
          else if (key == "suites") suites = val
          else if (key == "enabled") enabled = tolower(val)
        }
        if (enabled == "no" || (" " types " ") !~ /[ \t]deb[ \t]/) next
        ns = split(suites, s, /[ \t]+/)
        for (j = 1; j <= ns; j++) {
          if (mode == "uri" && s[j] == rel) { split(uris, u, /[ \t]+/); print u[1]; exit }
          if (mode == "deb822" && (s[j] == rel || index(s[j], rel "-") == 1)) { printf "%s\n", text; next }
        }
      }' "${deb822[@]}"
    return 0
  fi
  ((${#list[@]})) || return 0
  # deb [option=value ...] URI SUITE COMPONENT...
  awk -v rel="$rel" -v mode="$mode" '
    $1 == "deb" {
      i = 2
      if ($2 ~ /^\[/) { while (i < NF && $i !~ /\]$/) i++; i++ }
      if (mode == "uri" && $(i + 1) == rel) { print $i; exit }
      if (mode == "list" && ($(i + 1) == rel || index($(i + 1), rel "-") == 1)) print
    }' "${list[@]}"
}

# apt_keyrings: the keyring files the host's Signed-By options name, one a line.
apt_keyrings() {
  cat /etc/apt/sources.list.d/*.sources 2>/dev/null |
    sed -n 's/^[Ss]igned-[Bb]y:[ \t]*\(\/[^ \t]*\)[ \t]*$/\1/p'
  cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
    sed -n 's/.*signed-by=\(\/[^] \t]*\).*/\1/p'
}

# image_id NAME: the ID of image NAME in the storage, nothing when there is none.
image_id() { buildah inspect --type image --format '{{.FromImageID}}' "$1" 2>/dev/null || true; }

# base_image_ensure RELEASE [refresh]: makes localhost/debian:RELEASE and RELEASE-slim unless both
# are in the storage already (buildah_setup first).
base_image_ensure() {
  local rel=$1 refresh=${2:-0}
  local full=$BASE_REPO:$rel slim=$BASE_REPO:$rel-slim
  local old_ids
  old_ids="$(image_id "$full") $(image_id "$slim")"
  if ((!refresh)) && [[ $old_ids == ?*' '?* ]]; then
    return 0
  fi
  command -v debootstrap >/dev/null || base_die "debootstrap is missing: apt-get install debootstrap"
  local mirror keyring="" k
  mirror=$(apt_sources uri "$rel")
  [[ -n $mirror ]] || mirror=$(apt_sources uri "$(. /etc/os-release && echo "${VERSION_CODENAME:-}")")
  [[ $mirror == http://* || $mirror == https://* || $mirror == file:/* ]] ||
    base_die "no http(s) or file apt source for Debian $rel in /etc/apt/sources.list{,.d} (found '${mirror}')"
  for k in $(apt_keyrings) /usr/share/keyrings/debian-archive-keyring.gpg; do
    if [[ -f $k ]]; then keyring=$k; break; fi
  done
  [[ -n $keyring ]] || base_die "no Debian archive keyring to check the mirror: apt-get install debian-archive-keyring"

  base_log "debootstrap --variant=minbase $rel from the host's apt mirror (cold: a few minutes)"
  local ctr mnt
  ctr=$(buildah from --pull=never scratch)
  # shellcheck disable=SC2064 # expand now: the trap must remove this container.
  trap "buildah rm '$ctr' >/dev/null 2>&1 || true" EXIT
  mnt=$(buildah mount "$ctr")
  [[ $mnt == /?*/* && -d $mnt ]] || base_die "buildah mount gave no usable root ('$mnt')"
  if ! debootstrap --variant=minbase --keyring="$keyring" "$rel" "$mnt" "$mirror" \
       >"$BUILDAH_DIR/debootstrap.log" 2>&1; then
    tail -n 20 "$BUILDAH_DIR/debootstrap.log" >&2
    base_die "debootstrap failed (log: $BUILDAH_DIR/debootstrap.log)"
  fi
  findmnt -rn -o TARGET | awk -v m="$mnt/" 'index($0, m) == 1 { bad = 1 } END { exit bad }' ||
    base_die "something is still mounted under $mnt after debootstrap"

  # apt sources: the host's for this release (updates and security included) when it has them,
  # else debootstrap's own one-line sources.list; the keyrings they name come along.
  local stanzas lines
  stanzas=$(apt_sources deb822 "$rel")
  lines=$(apt_sources list "$rel")
  if [[ -n $stanzas ]]; then
    rm -f "$mnt/etc/apt/sources.list"
    printf '%s\n' "$stanzas" >"$mnt/etc/apt/sources.list.d/debian.sources"
  elif [[ -n $lines ]]; then
    printf '%s\n' "$lines" >"$mnt/etc/apt/sources.list"
  fi
  for k in $(apt_keyrings); do
    if [[ -f $k && ! -e $mnt$k ]]; then install -D -m 0644 "$k" "$mnt$k"; fi
  done
  # apt and dpkg set up as in Debian's container images: no package caches or .deb files left
  # behind, no translations, services never started by a package install.
  local clean='"rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true";'
  printf '%s\n' "DPkg::Post-Invoke { $clean };" "APT::Update::Post-Invoke { $clean };" \
    'Dir::Cache::pkgcache "";' 'Dir::Cache::srcpkgcache "";' >"$mnt/etc/apt/apt.conf.d/docker-clean"
  echo 'Acquire::GzipIndexes "true";' >"$mnt/etc/apt/apt.conf.d/docker-gzip-indexes"
  echo 'Acquire::Languages "none";' >"$mnt/etc/apt/apt.conf.d/docker-no-languages"
  echo 'Apt::AutoRemove::SuggestsImportant "false";' >"$mnt/etc/apt/apt.conf.d/docker-autoremove-suggests"
  printf '#!/bin/sh\nexit 101\n' >"$mnt/usr/sbin/policy-rc.d"
  chmod 0755 "$mnt/usr/sbin/policy-rc.d"
  buildah config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$ctr"
  # debootstrap installs the release as first published: add its updates and security fixes.
  if ! buildah run --isolation chroot "$ctr" -- sh -c 'apt-get update -qq &&
       DEBIAN_FRONTEND=noninteractive apt-get dist-upgrade -y -qq' >>"$BUILDAH_DIR/debootstrap.log" 2>&1; then
    tail -n 20 "$BUILDAH_DIR/debootstrap.log" >&2
    base_die "apt-get dist-upgrade in the new $rel root failed (log: $BUILDAH_DIR/debootstrap.log)"
  fi
  # What a container image has no use for: device nodes (the runtime provides /dev), the host's
  # name and resolver, package lists and logs.
  rm -rf --one-file-system "${mnt:?}"/dev/* "$mnt"/var/lib/apt/lists/* "$mnt"/var/cache/apt/*.bin \
    "$mnt"/var/cache/apt/archives/*.deb "$mnt"/var/cache/debconf/*-old
  find "$mnt/var/log" -type f -delete
  : >"$mnt/etc/hostname"
  : >"$mnt/etc/resolv.conf"
  buildah umount "$ctr" >/dev/null
  buildah config --cmd bash --label "org.opencontainers.image.description=Debian $rel minbase (debootstrap)" "$ctr"
  buildah commit --quiet --rm "$ctr" "$full" >/dev/null
  trap - EXIT

  # -slim: Debian's -slim images exclude these paths from every package (dpkg.cfg.d), keeping only
  # the copyright files.
  ctr=$(buildah from --pull=never "$full")
  trap "buildah rm '$ctr' >/dev/null 2>&1 || true" EXIT
  mnt=$(buildah mount "$ctr")
  [[ $mnt == /?*/* && -d $mnt ]] || base_die "buildah mount gave no usable root ('$mnt')"
  mkdir -p "$mnt/etc/dpkg/dpkg.cfg.d"
  cat >"$mnt/etc/dpkg/dpkg.cfg.d/docker" <<'EOF'
# The "slim" variant: files containers normally do not need are excluded, and stay excluded.
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/lintian/overrides/*
path-exclude /usr/share/locale/*
path-exclude /usr/share/man/*
EOF
  find "$mnt/usr/share/doc" -mindepth 1 ! -type d ! -path "$mnt/usr/share/doc/*/copyright" -delete
  find "$mnt/usr/share/doc" -mindepth 1 -type d -empty -delete
  local d
  for d in groff info linda lintian/overrides locale man; do
    if [[ -d $mnt/usr/share/$d ]]; then find "$mnt/usr/share/$d" -mindepth 1 -delete; fi
  done
  buildah umount "$ctr" >/dev/null
  buildah config --label "org.opencontainers.image.description=Debian $rel minbase slim (debootstrap)" "$ctr"
  # One layer: the slim image must not carry the full one beneath it.
  buildah commit --quiet --rm --squash "$ctr" "$slim" >/dev/null
  trap - EXIT
  # The images these names had before a refresh; kept when something still uses them.
  local id
  for id in $old_ids; do buildah rmi "$id" >/dev/null 2>&1 || true; done
  base_log "built $full and $slim"
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
  refresh=0
  if [[ ${1:-} == --refresh ]]; then refresh=1; shift; fi
  [[ $# -le 1 && ${1:-bookworm} =~ ^[a-z]+$ ]] ||
    { echo "usage: base-image.sh [--refresh] [RELEASE]" >&2; exit 2; }
  buildah_setup
  base_image_ensure "${1:-bookworm}" "$refresh"
  echo "$BASE_REPO"
fi
