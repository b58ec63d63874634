#!/usr/bin/env bash
# draco's alert rules (charts/draco/files/prometheus-rules.yaml): `promtool check rules`, then
# `promtool test rules alerts_test.yaml` on recorded series, after checking that the test file
# expects every alert of the rule file at least once firing and once silent. Skips (77) without
# promtool (Debian package prometheus; scripts/install-deps.sh installs it).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RULES=$HERE/../../charts/draco/files/prometheus-rules.yaml
command -v promtool >/dev/null || { echo "SKIP: no promtool (apt-get install prometheus)" >&2; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: needs python3" >&2; exit 77; }

promtool check rules "$RULES"
python3 - "$RULES" "$HERE/alerts_test.yaml" <<'PY'
import re, sys
# Alert names from the rule file, and per alert the expectations of the test file, read as text
# (python3-yaml may be missing): "alertname: X" followed by "exp_alerts: []" or a list.
alerts = re.findall(r"^\s*- alert:\s*(\S+)", open(sys.argv[1]).read(), re.M)
tests = open(sys.argv[2]).read()
seen = {}
for m in re.finditer(r"alertname:\s*(\S+)\s*\n\s*exp_alerts:\s*(\[\])?", tests):
    seen.setdefault(m.group(1), set()).add("silent" if m.group(2) else "firing")
missing = [f"{a}: no {k} case" for a in alerts for k in ("firing", "silent")
           if k not in seen.get(a, set())]
unknown = sorted(set(seen) - set(alerts))
if missing or unknown or not alerts:
    sys.exit("alerts_test.yaml does not cover the rules: " + "; ".join(
        missing + [f"{u}: not in the rule file" for u in unknown] + ([] if alerts else ["no alerts"])))
print(f"PASS: alerts_test.yaml has a firing and a silent case for each of {len(alerts)} alerts")
PY
cd "$HERE"
promtool test rules alerts_test.yaml
echo "PASS: promtool test rules"
