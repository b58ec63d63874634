#!/usr/bin/env bash
# Every build argument the Dockerfile uses is declared where it is used. An ARG before the first
# FROM is global and visible in FROM lines only; a stage that uses it in LABEL, COPY, ENV, RUN...
# must declare it again (`ARG NAME`), or the value is empty (the image label read "debian:-slim"
# once). Checked per stage: every $NAME / ${NAME...} outside FROM lines is declared by ARG or ENV
# earlier in that stage (RUN: upper-case names only, minus those the command assigns itself, since
# lower-case ones are the shell's own), and every name in a FROM line is a global ARG. The check
# first proves it catches the bug on a copy whose runtime stage lacks `ARG DEBIAN_RELEASE`.
# No cluster needed. DRACO_DOCKERFILE overrides the file checked.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v python3 >/dev/null || { echo "SKIP: needs python3" >&2; exit 77; }
DOCKERFILE=${DRACO_DOCKERFILE:-$ROOT/Dockerfile}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# check FILE: prints one line per undeclared use; exit 1 when there is any.
check() {
  python3 - "$1" <<'EOF'
import re, sys

# Build arguments Docker and BuildKit define without a declaration (still need ARG in a stage,
# except the proxy ones), and environment every shell has.
PREDEFINED = {"HTTP_PROXY", "HTTPS_PROXY", "FTP_PROXY", "NO_PROXY", "ALL_PROXY",
              "http_proxy", "https_proxy", "ftp_proxy", "no_proxy", "all_proxy"}
SHELL_ENV = {"PATH", "HOME", "PWD", "HOSTNAME", "SHELL", "USER"}
REF = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)[^}]*\}|([A-Za-z_][A-Za-z0-9_]*))")

lines, cur = [], ""
for raw in open(sys.argv[1], encoding="utf-8"):
    s = raw.rstrip("\n")
    if not cur and (s.lstrip().startswith("#") or not s.strip()):
        continue
    if cur and s.lstrip().startswith("#"):
        continue  # a comment inside a continued instruction
    if s.endswith("\\"):
        cur += s[:-1] + " "
        continue
    lines.append(cur + s)
    cur = ""
if cur:
    lines.append(cur)

glob, stage, stage_name, bad = set(), None, "", []
for line in lines:
    word, _, rest = line.strip().partition(" ")
    inst = word.upper()
    names = {a or b for a, b in REF.findall(rest)}
    if inst == "FROM":
        for n in sorted(names - glob):
            bad.append(f"FROM {rest.strip()}: ${n} is not a global ARG")
        stage = set(PREDEFINED)
        m = re.search(r"\bAS\s+(\S+)", rest, re.I)
        stage_name = m.group(1) if m else rest.split()[0]
        continue
    if inst == "ARG":
        for decl in rest.split():
            n = decl.split("=", 1)[0]
            (glob if stage is None else stage).add(n)
        continue
    if stage is None:
        continue
    if inst == "RUN":
        assigned = set(re.findall(r"(?:^|[\s;&|(])([A-Za-z_][A-Za-z0-9_]*)=", rest))
        assigned |= set(re.findall(r"\bfor\s+([A-Za-z_][A-Za-z0-9_]*)\s+in\b", rest))
        names = {n for n in names if n.isupper() or n in glob} - assigned - SHELL_ENV
    for n in sorted(names - stage):
        where = f"stage {stage_name}, {inst}"
        hint = " (a global ARG: declare `ARG " + n + "` in the stage)" if n in glob else ""
        bad.append(f"{where}: ${n} is not declared in the stage{hint}")
    if inst == "ENV":
        for m in re.finditer(r"([A-Za-z_][A-Za-z0-9_]*)[= ]", rest):
            stage.add(m.group(1))
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
EOF
}

# 1. The check fails on the bug it exists for.
awk 'BEGIN{s=""} /^FROM /{s=$NF} !(s == "runtime" && $0 == "ARG DEBIAN_RELEASE")' \
  "$DOCKERFILE" >"$tmp/Dockerfile.bug"
cmp -s "$DOCKERFILE" "$tmp/Dockerfile.bug" && fail "the runtime stage of $DOCKERFILE has no 'ARG DEBIAN_RELEASE' line to remove"
out=$(check "$tmp/Dockerfile.bug") && fail "the check passed a runtime stage without ARG DEBIAN_RELEASE"
grep -q 'stage runtime, LABEL: \$DEBIAN_RELEASE .*global ARG' <<<"$out" ||
  fail "the check missed the undeclared DEBIAN_RELEASE: $out"
pass "the check reports a stage using a global ARG it does not declare ($out)"

# 2. The Dockerfile itself.
out=$(check "$DOCKERFILE") || fail "undeclared build arguments in $DOCKERFILE:
$out"
pass "every build argument $DOCKERFILE uses is declared in its stage (FROM lines: global ARGs)"
