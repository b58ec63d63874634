#!/usr/bin/env bash
# scripts/demo.sh waits for draco's readiness with a deadline (scripts/demo-lib.sh wait_ready): a
# draco that never becomes ready fails the demo after the deadline with the probe's answer and is
# stopped; one that exits fails it at once; a ready one passes. A process and a local HTTP server
# stand in for draco. No control plane needed.
set -euo pipefail
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
source "$root/scripts/demo-lib.sh"
tmp=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$tmp"' EXIT
echo "draco: informers not synced" >"$tmp/draco.log"
port=$((30000 + RANDOM % 10000))

# Never ready: a running process, a probe that answers 500.
mkdir -p "$tmp/www"
python3 - "$port" >/dev/null 2>&1 <<'PY' &
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        ok = self.path == "/ok"
        self.send_response(200 if ok else 500)
        self.end_headers()
        self.wfile.write(b"ok" if ok else b"[-]informers-synced failed: caches not synced")
    def log_message(self, *a): pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
PY
pids+=($!)
for _ in $(seq 50); do curl -s "127.0.0.1:$port/ok" >/dev/null 2>&1 && break; sleep 0.1; done
sleep 300 &
never=$!
pids+=($never)
start=$SECONDS
if wait_ready "$never" "http://127.0.0.1:$port/readyz" "$tmp/draco.log" 2 2>"$tmp/out"; then
  fail "wait_ready returned success for a probe that never answers 200"
fi
((SECONDS - start <= 5)) || fail "wait_ready took $((SECONDS - start)) s for a 2 s deadline"
grep -q "not ready after 2 s" "$tmp/out" || fail "no deadline message: $(cat "$tmp/out")"
grep -q "caches not synced" "$tmp/out" || fail "the probe's answer is not shown: $(cat "$tmp/out")"
grep -q "informers not synced" "$tmp/out" || fail "the log's tail is not shown: $(cat "$tmp/out")"
sleep 0.2
! kill -0 "$never" 2>/dev/null || fail "the not-ready process was left running"
pass "a never-ready draco fails the wait after its deadline, with the probe's answer, and is stopped"

true &
gone=$!
wait "$gone" || true
start=$SECONDS
if wait_ready "$gone" "http://127.0.0.1:$port/readyz" "$tmp/draco.log" 30 2>"$tmp/out"; then
  fail "wait_ready returned success for an exited process"
fi
((SECONDS - start <= 2)) || fail "an exited process was waited for $((SECONDS - start)) s"
grep -q "exited before it was ready" "$tmp/out" || fail "no exit message: $(cat "$tmp/out")"
pass "an exited draco fails the wait at once"

sleep 300 &
ready=$!
pids+=($ready)
wait_ready "$ready" "http://127.0.0.1:$port/ok" "$tmp/draco.log" 5 || fail "a ready probe failed the wait"
pass "a ready draco passes the wait"
