#!/usr/bin/env bash
# Builds draco's container image from the repository's Dockerfile with buildah, with no Docker
# engine and no image registry, and writes it as an OCI archive that containerd imports
# (ctr -n k8s.io images import FILE):
#   ${DRACO_CACHE:-$HOME/.cache/draco}/images/draco-TAG.tar, image NAME:TAG
# NAME defaults to docker.io/library/draco, the name containerd gives the chart's default
# image.repository "draco", so the chart's default values find the image.
# The Debian bases come from debootstrap (base-image.sh: localhost/debian:RELEASE and -slim, cached
# in buildah's storage under ${DRACO_CACHE:-$HOME/.cache/draco}/buildah). --binary PATH puts a draco
# built on this host (Debian 12, the runtime base's ABI), stripped, into the Dockerfile's
# "prebuilt" stage and compiles nothing; --from-source (the default) builds the Dockerfile's
# "build" stage (the whole C++ build: ~15 min on 2 cores). Steps are cached (buildah --layers):
# with the same inputs a rebuild takes seconds and the archive is rewritten only when the image
# changed. --refresh re-runs debootstrap and rebuilds without the cache (new Debian updates).
# VERSION is ${DRACO_VERSION:-the chart's appVersion}, REVISION `git rev-parse HEAD`, CREATED the
# time of HEAD's commit. Needs root, buildah, debootstrap, binutils (strip).
# Prints the archive's path on the last line of stdout.
# Usage: draco-image.sh --tag TAG [--binary PATH | --from-source] [--name NAME] [--refresh]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
log() { echo "[draco-image] $*" >&2; }
die() { echo "[draco-image] ERROR: $*" >&2; exit 1; }
usage() { sed -n 's/^# Usage: /usage: /p' "$0" >&2; exit 2; }

tag="" binary="" name=docker.io/library/draco refresh=0 source=0
while (($#)); do
  case $1 in
    --tag) (($# >= 2)) || usage; tag=$2; shift 2 ;;
    --binary) (($# >= 2)) || usage; binary=$2; shift 2 ;;
    --from-source) source=1; shift ;;
    --name) (($# >= 2)) || usage; name=$2; shift 2 ;;
    --refresh) refresh=1; shift ;;
    -h|--help) usage ;;
    *) echo "[draco-image] unknown argument: $1" >&2; usage ;;
  esac
done
[[ -n $tag ]] || usage
[[ $tag =~ ^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$ ]] || die "invalid image tag '$tag'"
[[ $name =~ ^[a-z0-9]([a-z0-9._/-]*[a-z0-9])?(:[0-9]+)?(/[a-z0-9]([a-z0-9._-]*[a-z0-9])?)*$ ]] ||
  die "invalid image name '$name' (no tag: use --tag)"
[[ -z $binary ]] || ((!source)) || die "--binary and --from-source exclude each other"
cache=${DRACO_CACHE:-$HOME/.cache/draco}
[[ $cache != *:* ]] || die "DRACO_CACHE must not contain ':' (buildah's oci-archive: syntax): $cache"
out=$cache/images
release=$(sed -n 's/^ARG DEBIAN_RELEASE=\([a-z]*\)$/\1/p' "$root/Dockerfile")
[[ -n $release ]] || die "no ARG DEBIAN_RELEASE=... in $root/Dockerfile"

if [[ -n $binary ]]; then
  command -v strip >/dev/null || die "strip is missing: apt-get install binutils"
  [[ -f $binary && -x $binary ]] || die "--binary $binary is not an executable file"
  [[ $(head -c 4 "$binary" | od -An -c | tr -d ' ') == 177ELF ]] || die "--binary $binary is not an ELF file"
  host_release=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
  [[ $host_release == "$release" ]] ||
    log "warning: this host is Debian '$host_release', the image's base is $release: the binary may not run there"
fi

# shellcheck source=base-image.sh
source "$here/base-image.sh"
buildah_setup
base_image_ensure "$release" "$refresh"
mkdir -p "$out"

if [[ -n $binary ]]; then
  stage=prebuilt
  # The build context is a directory holding only the binary, at the Dockerfile's default
  # DRACO_BINARY path: nothing of the source tree is sent, nothing is written into it.
  context=$cache/draco-image/context
  mkdir -p "$context/.draco-image"
  strip --strip-unneeded -o "$context/.draco-image/draco.new" "$binary"
  chmod 0755 "$context/.draco-image/draco.new"
  # The source's time: buildah's COPY cache compares file times too.
  touch -r "$binary" "$context/.draco-image/draco.new"
  mv -f "$context/.draco-image/draco.new" "$context/.draco-image/draco"
else
  stage=build
  context=$root
  log "building draco from source in the Dockerfile's build stage (cold: ~15 min on 2 cores)"
fi

version=${DRACO_VERSION:-$(sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\} *$/\1/p' "$root/charts/draco/Chart.yaml")}
version=${version:-0.1.0}
revision=$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)
created=$(TZ=UTC git -C "$root" log -1 --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ 2>/dev/null || echo unknown)
old_id=$(image_id "$name:$tag")

build=(buildah bud --isolation chroot --layers --pull=never -f "$root/Dockerfile"
  --build-arg BASE_IMAGE="$BASE_REPO" --build-arg DEBIAN_RELEASE="$release"
  # buildah 1.28 skips the unused binary stage only when the stage's name is a given argument.
  --build-arg DRACO_BINARY_STAGE="$stage"
  --build-arg VERSION="$version" --build-arg REVISION="$revision" --build-arg CREATED="$created"
  # The same values as labels: buildah 1.28's step cache ignores build arguments, so the
  # Dockerfile's LABEL step may come from the cache with the values of an earlier build; labels
  # given here are part of the last step's cache key and override those.
  --label org.opencontainers.image.version="$version"
  --label org.opencontainers.image.revision="$revision"
  --label org.opencontainers.image.created="$created"
  -t "$name:$tag")
((!refresh)) || build+=(--no-cache)
log "building $name:$tag ($stage stage, base $BASE_REPO:$release-slim)"
"${build[@]}" "$context" >&2 || die "buildah bud failed"
# buildah 1.28 leaves the working container (and its mount) of the instruction-less "binary"
# stage behind on every build. The storage is this cache's own and locked: remove them all.
buildah rm --all >/dev/null
id=$(image_id "$name:$tag")
[[ -n $id ]] || die "buildah built no image $name:$tag"
if [[ -n $old_id && $old_id != "$id" ]]; then
  # The image this tag named before; kept when something still uses it (a cached step).
  buildah rmi "$old_id" >/dev/null 2>&1 || true
fi
# Untagged images nothing builds on (earlier stage results, replaced images); the cached steps
# of the current image stay.
buildah rmi --prune >/dev/null 2>&1 || true

archive=$out/draco-$tag.tar
stamp="$id $name:$tag"
if [[ -f $archive && -f $archive.id && $(cat "$archive.id") == "$stamp" ]]; then
  log "$archive is up to date"
else
  tmp=$out/.draco-$tag.tar.tmp
  trap 'rm -f "$tmp"' EXIT
  rm -f "$tmp" "$archive.id"
  buildah push --quiet "$name:$tag" "oci-archive:$tmp:$name:$tag" >&2 || die "buildah push failed"
  mv -f "$tmp" "$archive"
  echo "$stamp" >"$archive.id"
  log "wrote $name:$tag ($(du -h "$archive" | cut -f1)) to $archive"
fi
echo "$archive"
