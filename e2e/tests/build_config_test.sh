#!/usr/bin/env bash
# The build the tests run is the configuration the image ships: the Dockerfile's build stage
# configures Release with warnings as errors, and so does the build directory under test
# (scripts/configure.sh, which demo.sh and test.sh share). Before, CI built RelWithDebInfo only and
# nothing built the image's configuration, which GCC 12 at -O3 refused (-Wrestrict, GCC bug
# 105329). No control plane needed.
set -euo pipefail
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${DRACO_BUILD_DIR:-$root/build}
cache=$build/CMakeCache.txt
[[ -f $cache ]] || { echo "SKIP: no $cache" >&2; exit 77; }
value() { sed -n "s/^$1:[A-Z]*=//p" "$cache"; }
# The Dockerfile's configure line (a RUN continued over several lines).
docker_cfg=$(sed -n '/^RUN cmake -S/,/[^\\]$/p' "$root/Dockerfile" | tr -d '\\\n')
[[ $docker_cfg == *"-DCMAKE_BUILD_TYPE=Release"* && $docker_cfg == *"-DDRACO_WERROR=ON"* ]] ||
  fail "the Dockerfile no longer configures Release with -DDRACO_WERROR=ON: $docker_cfg"
[[ $(value CMAKE_BUILD_TYPE) == Release ]] || fail "$build is $(value CMAKE_BUILD_TYPE), not Release"
[[ $(value DRACO_WERROR) == ON ]] || fail "$build does not treat warnings as errors"
flags=$(value CMAKE_CXX_FLAGS_RELEASE)
[[ $flags == *-O3* && $flags == *-DNDEBUG* ]] || fail "$build's Release flags are '$flags', not the image's -O3 -DNDEBUG"
grep -q -- "-Werror" "$build/build.ninja" || fail "no -Werror in $build/build.ninja"
pass "the build under test is the image's: Release ($flags), warnings as errors"
