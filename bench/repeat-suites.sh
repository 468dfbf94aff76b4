#!/usr/bin/env bash
# Runs test suites N times in a row and stops at the first red run: the check that a suite which
# once flaked is green run after run on this machine, not just once.
#
#   DATABASE_URL=postgres://... REDIS_URL=redis://... bash bench/repeat-suites.sh [runs] [suite files...]
#
# Defaults: 10 runs of test/integration/faults.real.test.ts and test/integration/scale-out.real.test.ts
# (the real-services suites need DATABASE_URL and REDIS_URL on loopback, as in .ci/run's second
# phase). It builds once (the process suites start dist/). Each run's output goes to
# bench/repeat-suites/run-<n>.log; the tally (and the first failure's log) is printed at the end.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

runs="${1:-10}"
shift || true
suites=("$@")
[ ${#suites[@]} -gt 0 ] || suites=(test/integration/faults.real.test.ts test/integration/scale-out.real.test.ts)
[ -n "${DATABASE_URL:-}" ] && [ -n "${REDIS_URL:-}" ] || { echo "repeat-suites: DATABASE_URL and REDIS_URL must be set" >&2; exit 2; }

out=bench/repeat-suites
mkdir -p "$out"
npm run build >/dev/null || exit 1
export NODE_EXTRA_CA_CERTS=test/fixtures/tls/ca.pem
started=$(date +%s)
for ((n = 1; n <= runs; n += 1)); do
  run_started=$(date +%s)
  if npx vitest run "${suites[@]}" >"$out/run-$n.log" 2>&1; then
    echo "run $n/$runs: green in $(( $(date +%s) - run_started )) s"
  else
    echo "run $n/$runs: RED after $(( $(date +%s) - run_started )) s (log: $out/run-$n.log)"
    grep -E "FAIL|AssertionError|Error:" "$out/run-$n.log" | head -20
    exit 1
  fi
done
echo "all $runs runs green (${suites[*]}) in $(( $(date +%s) - started )) s"
