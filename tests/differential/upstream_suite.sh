#!/usr/bin/env bash
# Upstream's own allocator test table against draco's allocator.
#
# k8s.io/dynamic-resource-allocation v0.37.2 ships one test table for all its allocator variants
# (structured/internal/allocatortesting: TestAllocator, TestLexicographicalAllocator). This script
# copies that module from the Go module cache into a temporary directory, drops draco's adapter
# package (tests/differential/upstream_suite/, draco code) into it as
# structured/internal/dracoadapter, and runs the table there against the allocator_adapter binary.
# Nothing of upstream is committed to draco.
#
#   tests/differential/upstream_suite.sh ALLOCATOR_ADAPTER [go test -run regexp]
#
# Prints "upstream allocator suite: N passed of M" and the failing cases; exits 0 only when every
# case of the table passed (M is checked against the table size), 77 (skip) without Go.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/../../scripts/go-env.sh"
adapter="${1:?usage: upstream_suite.sh ALLOCATOR_ADAPTER [RUN_REGEXP]}"
run="${2:-^(TestAllocator|TestLexicographicalAllocator)$}"
readonly module=k8s.io/dynamic-resource-allocation version=v0.37.2 expected_cases=283
case "${adapter}" in /*) ;; *) adapter="${PWD}/${adapter}" ;; esac
[[ -x ${adapter} ]] || { echo "not executable: ${adapter}" >&2; exit 1; }

export GOTOOLCHAIN=local GOFLAGS=-mod=mod
if ! command -v go >/dev/null; then
  echo "SKIP: Go is not installed"
  exit 77
fi
command -v python3 >/dev/null || { echo "python3 is needed to count the cases" >&2; exit 1; }
src="$(go env GOMODCACHE)/${module}@${version}"
if [[ ! -d ${src} ]]; then
  # The oracle (tests/oracle) and the control-plane build bring it; fetch it through the module
  # proxy otherwise.
  (cd / && go mod download "${module}@${version}")
fi

work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT
cp -r "${src}" "${work}/dra"
chmod -R u+w "${work}/dra"
mkdir -p "${work}/dra/structured/internal/dracoadapter"
cp "${here}/upstream_suite/"*.go "${work}/dra/structured/internal/dracoadapter/"

cd "${work}/dra"
set +e
DRACO_ALLOCATOR_ADAPTER="${adapter}" go test -count=1 -json -timeout 45m -run "${run}" \
  ./structured/internal/dracoadapter/ >"${work}/test.json" 2>"${work}/test.stderr"
status=$?
python3 - "${work}/test.json" "${expected_cases}" "${run}" <<'EOF'
import json, sys

path, expected, run = sys.argv[1], int(sys.argv[2]), sys.argv[3]
outcome, output = {}, {}
for line in open(path, encoding="utf-8"):
    try:
        e = json.loads(line)
    except ValueError:
        continue
    name = e.get("Test")
    if not name:
        if e.get("Action") == "output":
            sys.stdout.write(e.get("Output", ""))
        continue
    if e.get("Action") in ("pass", "fail", "skip"):
        outcome[name] = e["Action"]
    elif e.get("Action") == "output":
        output.setdefault(name, []).append(e.get("Output", ""))
# Cases are the leaves of the test tree (parents only group them).
leaves = sorted(t for t in outcome if not any(o.startswith(t + "/") for o in outcome))
passed = [t for t in leaves if outcome[t] == "pass"]
for t in leaves:
    if outcome[t] != "pass":
        print(f"--- {outcome[t].upper()}: {t}")
        print("".join(output.get(t, [])[-300:]), end="")
print(f"upstream allocator suite: {len(passed)} passed of {len(leaves)}")
full = run == "^(TestAllocator|TestLexicographicalAllocator)$"
if full and len(leaves) != expected:
    print(f"expected {expected} cases in the table, found {len(leaves)}")
    sys.exit(1)
sys.exit(0 if leaves and len(passed) == len(leaves) else 1)
EOF
counted=$?
set -e
if ((status != 0)); then
  cat "${work}/test.stderr" >&2
  ((counted != 0)) || exit "${status}"
fi
exit "${counted}"
