# Sourced by every script that runs the go command: puts a Go toolchain new enough for the
# repository's modules first on PATH (scripts/go-toolchain.sh: the go on PATH when it is new
# enough, else the toolchain fetched from the Go module proxy, e.g. on Debian 12 with its Go 1.19).
if ! _draco_go_bin=$("$(dirname "${BASH_SOURCE[0]}")/go-toolchain.sh"); then
  echo "no usable Go toolchain (scripts/go-toolchain.sh failed)" >&2
  return 1 2>/dev/null || exit 1
fi
case ":$PATH:" in *":$_draco_go_bin:"*) ;; *) export PATH="$_draco_go_bin:$PATH" ;; esac
unset _draco_go_bin
