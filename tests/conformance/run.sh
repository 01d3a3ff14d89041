#!/usr/bin/env bash
# Run the official MCP conformance suite (client side, @modelcontextprotocol/conformance, pinned in
# tests/npm/package.json) against our conformance client. `make conformance` runs it after
# `make deps` and building the client; see tests/conformance/SCENARIOS.md for what each scenario
# asks of the client.
#
# Every client scenario the suite lists is run on its own (`conformance client --scenario S`) with
# --expected-failures tests/conformance/baseline.yml; most run CONFORMANCE_JOBS at a time, the
# timing-sensitive ones (sse-retry) alone afterwards. Results: tests/results/conformance/
# (runs/<scenario>-<time>/checks.json|stdout.txt|stderr.txt, logs/<scenario>.log). Ends with the
# line "conformance: N passed, M failed"; exits non-zero when anything failed.
#
# Environment (all optional):
#   CONFORMANCE_CLIENT      client binary         (default target/debug/conformance-client)
#   CONFORMANCE_BASELINE    expected failures     (default tests/conformance/baseline.yml)
#   CONFORMANCE_OUT         results directory     (default tests/results/conformance)
#   CONFORMANCE_JOBS        scenarios at a time   (default 4)
#   CONFORMANCE_TIMEOUT_MS  per-scenario timeout  (default 30000)
#   CONFORMANCE_SCENARIOS   space-separated subset to run (default: every client scenario)
#   CONFORMANCE_NODE        Node >= 22            (default .tools/node22/bin/node)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."
ROOT="$PWD"

CLIENT="${CONFORMANCE_CLIENT:-$ROOT/target/debug/conformance-client}"
BASELINE="${CONFORMANCE_BASELINE:-$ROOT/tests/conformance/baseline.yml}"
OUT="${CONFORMANCE_OUT:-$ROOT/tests/results/conformance}"
JOBS="${CONFORMANCE_JOBS:-4}"
TIMEOUT_MS="${CONFORMANCE_TIMEOUT_MS:-30000}"
NODE="${CONFORMANCE_NODE:-$ROOT/.tools/node22/bin/node}"
CLI="$ROOT/tests/npm/node_modules/@modelcontextprotocol/conformance/dist/index.js"
SUMMARIZE="$ROOT/tests/conformance/summarize.mjs"
# Scenarios that measure timing (sse-retry checks the reconnect delay within -50/+200 ms): never
# run them next to others on a 2-core machine.
SERIAL=(sse-retry)

die() {
  echo "conformance: error: $*" >&2
  exit 2
}

[ -x "$NODE" ] || die "Node 22 not found at $NODE: run 'make deps'"
node_major="$("$NODE" -p 'process.versions.node.split(".")[0]')"
[ "$node_major" -ge 22 ] || die "$NODE is Node $node_major; the conformance suite needs Node >= 22"
[ -f "$CLI" ] || die "conformance CLI not found at $CLI: run 'make deps'"
[ -f "$BASELINE" ] || die "baseline not found: $BASELINE"
[ -x "$CLIENT" ] || die "client binary not found or not executable: $CLIENT
  (build it: make build, or run 'make conformance')"
case "$CLIENT" in
  *[[:space:]]*) die "the client path must not contain spaces (the suite splits --command on spaces): $CLIENT" ;;
esac

# The scenarios: every client scenario of the pinned suite, or the subset asked for.
mapfile -t ALL < <("$NODE" "$CLI" list --client | sed -n 's/^  - \([^ ]*\).*/\1/p')
[ "${#ALL[@]}" -gt 0 ] || die "'conformance list --client' listed no scenarios"
if [ -n "${CONFORMANCE_SCENARIOS:-}" ]; then
  read -r -a SELECTED <<<"$CONFORMANCE_SCENARIOS"
  for s in "${SELECTED[@]}"; do
    printf '%s\n' "${ALL[@]}" | grep -qxF -- "$s" || die "unknown scenario '$s'; known: ${ALL[*]}"
  done
else
  SELECTED=("${ALL[@]}")
fi

PARALLEL=()
SERIAL_RUN=()
for s in "${SELECTED[@]}"; do
  if printf '%s\n' "${SERIAL[@]}" | grep -qxF -- "$s"; then SERIAL_RUN+=("$s"); else PARALLEL+=("$s"); fi
done

rm -rf "$OUT/runs" "$OUT/logs"
mkdir -p "$OUT/runs" "$OUT/logs"

run_one() {
  local scenario="$1" safe="${1//\//_}" rc=0
  "$NODE" "$CLI" client \
    --command "$CLIENT" \
    --scenario "$scenario" \
    --timeout "$TIMEOUT_MS" \
    --expected-failures "$BASELINE" \
    -o "$OUT/runs" \
    >"$OUT/logs/$safe.log" 2>&1 </dev/null || rc=$?
  echo "$rc" >"$OUT/logs/$safe.rc"
}

echo "==> conformance: $(basename "$CLIENT") against @modelcontextprotocol/conformance $("$NODE" -p "require('$ROOT/tests/npm/node_modules/@modelcontextprotocol/conformance/package.json').version")"
echo "==> conformance: ${#PARALLEL[@]} scenarios, $JOBS at a time"
for s in "${PARALLEL[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n || true; done
  run_one "$s" &
done
wait
if [ "${#SERIAL_RUN[@]}" -gt 0 ]; then
  echo "==> conformance: ${SERIAL_RUN[*]} alone (timing-sensitive)"
  for s in "${SERIAL_RUN[@]}"; do run_one "$s"; done
fi

status=0
KNOWN_SCENARIOS="${ALL[*]}" "$NODE" "$SUMMARIZE" "$OUT" "$BASELINE" "$CLI" "${SELECTED[@]}" | tee "$OUT/summary.txt" || status=$?
exit "$status"
