# Pieces of scripts/demo.sh that its test (e2e/tests/demo_wait_test.sh) runs alone (sourced).

# wait_ready PID URL LOG SECS: waits until URL answers 2xx (draco's /readyz), at most SECS seconds.
# Returns 1 with a message naming the reason if the process PID exits first, or if the deadline
# passes; then the not-ready process is stopped (nothing is left half started), and the message
# carries the probe's last answer (which names the failing checks) and the tail of LOG.
wait_ready() {
  local pid=$1 url=$2 log=$3 secs=$4 end=$((SECONDS + $4)) body
  until curl -sf "$url" >/dev/null 2>&1; do
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "draco exited before it was ready; the end of $log:" >&2
      tail -n 15 "$log" >&2 2>/dev/null || true
      return 1
    fi
    if ((SECONDS >= end)); then
      body=$(curl -s --max-time 2 "$url" 2>&1 || true)
      echo "draco not ready after $secs s (${url}: ${body:-no answer}); stopped it; the end of $log:" >&2
      tail -n 15 "$log" >&2 2>/dev/null || true
      kill "$pid" 2>/dev/null || true
      return 1
    fi
    sleep 0.5
  done
}
