#!/usr/bin/env bash
# Run the official MCP conformance suite (client side, @modelcontextprotocol/conformance) against
# our conformance client. `make conformance` runs it after `make deps` and building the client;
# see tests/conformance/SCENARIOS.md for what each scenario asks of the client.
#
# Three suites, two pinned versions of the package (tests/npm/package.json):
#   0.1.16       @modelcontextprotocol/conformance 0.1.16: every client scenario it lists.
#   2025-11-25   0.2.0-alpha.12 (npm alias conformance-next): the scenarios
#                `conformance client --requirements 2025-11-25` runs (the frozen requirement set,
#                scored and not_scored), at the 2025-11-25 wire.
#   2026-07-28   the same for `--requirements 2026-07-28` (stateless wire).
#   2025-03-26   0.2.0-alpha.12 `--spec-version 2025-03-26`: the two backward-compatibility OAuth
#                scenarios (auth/2025-03-26-*) that neither requirement set includes, so that
#                every authorization scenario of 0.2.0-alpha.12 runs somewhere.
#   extensions   0.2.0-alpha.12: the client scenarios `list --client` tags [extension] other than
#                authorization ones (those run in the requirement sets): the Skills checks
#                (sep-2640-client-*), each forced at the 2026-07-28 wire.
# `--requirements` cannot be combined with `--scenario` and runs its whole set at once, so each
# scenario is run on its own as `--scenario S --spec-version REV --force`, which is exactly what
# `--requirements REV` does for each of its scenarios (same wire version, same forced run).
#
# Every scenario runs with --expected-failures tests/conformance/baseline-<suite>.yml; all
# suites share one pool of CONFORMANCE_JOBS at a time, the timing-sensitive ones (sse-retry) run
# alone afterwards. Results per suite: tests/results/conformance/<suite>/
# (runs/<scenario>-<time>/checks.json|stdout.txt|stderr.txt, logs/<scenario>.log, summary.txt).
# Ends with one line per suite and the total "conformance: N passed, M failed" (also in
# tests/results/conformance/summary.txt); exits non-zero when anything failed.
#
# Environment (all optional):
#   CONFORMANCE_CLIENT        client binary          (default target/debug/conformance-client)
#   CONFORMANCE_SUITES        suites to run          (default "0.1.16 2025-11-25 2026-07-28 2025-03-26 extensions")
#   CONFORMANCE_SCENARIOS     space-separated subset: NAME runs it in every selected suite that has
#                             it, SUITE:NAME only in that suite (e.g. 2026-07-28:auth/iss-supported)
#   CONFORMANCE_BASELINE_DIR  where baseline-<suite>.yml live (default tests/conformance)
#   CONFORMANCE_OUT           results directory      (default tests/results/conformance)
#   CONFORMANCE_JOBS          scenarios at a time    (default 4)
#   CONFORMANCE_TIMEOUT_MS    per-scenario timeout   (default 30000)
#   CONFORMANCE_NODE          Node >= 22             (default .tools/node22/bin/node)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."
ROOT="$PWD"

CLIENT="${CONFORMANCE_CLIENT:-$ROOT/target/debug/conformance-client}"
BASELINE_DIR="${CONFORMANCE_BASELINE_DIR:-$ROOT/tests/conformance}"
OUT="${CONFORMANCE_OUT:-$ROOT/tests/results/conformance}"
JOBS="${CONFORMANCE_JOBS:-4}"
TIMEOUT_MS="${CONFORMANCE_TIMEOUT_MS:-30000}"
NODE="${CONFORMANCE_NODE:-$ROOT/.tools/node22/bin/node}"
MODULES="$ROOT/tests/npm/node_modules"
SUMMARIZE="$ROOT/tests/conformance/summarize.mjs"
# Scenarios that measure timing (sse-retry checks the reconnect delay within -50/+200 ms): never
# run them next to others on a 2-core machine.
SERIAL=(sse-retry)

# The suites: id -> npm package directory (tests/npm/node_modules/<dir>), pinned version, and
# which scenarios: "all" (every client scenario the package lists), "requirements REV" (what
# `--requirements REV` runs, each scenario at REV's wire) or "spec-version V" (what
# `list --client --spec-version V` lists, run at V). Bumping a version means editing
# tests/npm/package.json, this table, the baselines and SCENARIOS.md together.
ALL_SUITES=(0.1.16 2025-11-25 2026-07-28 2025-03-26 extensions)
declare -A PKG=(
  [0.1.16]="@modelcontextprotocol/conformance"
  [2025-11-25]="conformance-next"
  [2026-07-28]="conformance-next"
  [2025-03-26]="conformance-next"
  [extensions]="conformance-next"
)
declare -A VERSION=(
  [0.1.16]="0.1.16"
  [2025-11-25]="0.2.0-alpha.12"
  [2026-07-28]="0.2.0-alpha.12"
  [2025-03-26]="0.2.0-alpha.12"
  [extensions]="0.2.0-alpha.12"
)
declare -A SELECT=(
  [0.1.16]="all"
  [2025-11-25]="requirements 2025-11-25"
  [2026-07-28]="requirements 2026-07-28"
  [2025-03-26]="spec-version 2025-03-26"
  [extensions]="extension 2026-07-28"
)

die() {
  echo "conformance: error: $*" >&2
  exit 2
}

[ -x "$NODE" ] || die "Node 22 not found at $NODE: run 'make deps'"
node_major="$("$NODE" -p 'process.versions.node.split(".")[0]')"
[ "$node_major" -ge 22 ] || die "$NODE is Node $node_major; the conformance suite needs Node >= 22"
[ -x "$CLIENT" ] || die "client binary not found or not executable: $CLIENT
  (build it: make build, or run 'make conformance')"
case "$CLIENT" in
  *[[:space:]]*) die "the client path must not contain spaces (the suite splits --command on spaces): $CLIENT" ;;
esac

read -r -a SUITES <<<"${CONFORMANCE_SUITES:-${ALL_SUITES[*]}}"
[ "${#SUITES[@]}" -gt 0 ] || die "CONFORMANCE_SUITES is empty"
for suite in "${SUITES[@]}"; do
  [ -n "${PKG[$suite]:-}" ] || die "unknown suite '$suite'; known: ${ALL_SUITES[*]}"
done

read -r -a WANTED <<<"${CONFORMANCE_SCENARIOS:-}"
declare -A WANTED_FOUND=()

# Per suite: the CLI, its label, every client scenario it knows (KNOWN_<n>), the ones to run
# (SEL_<n>) and the ones its requirement set does not score (NOTSCORED_<n>).
declare -A CLI LABEL BASELINE KNOWN SEL NOTSCORED
RUN_SUITES=()
for suite in "${SUITES[@]}"; do
  dir="$MODULES/${PKG[$suite]}"
  cli="$dir/dist/index.js"
  [ -f "$cli" ] || die "conformance CLI not found at $cli: run 'make deps'"
  have="$("$NODE" -p "require('$dir/package.json').version")"
  [ "$have" = "${VERSION[$suite]}" ] ||
    die "suite $suite wants ${PKG[$suite]} ${VERSION[$suite]}, tests/npm has $have: run 'make deps'"
  baseline="$BASELINE_DIR/baseline-$suite.yml"
  [ -f "$baseline" ] || die "baseline not found: $baseline"
  CLI[$suite]="$cli"
  BASELINE[$suite]="$baseline"
  read -r how rev <<<"${SELECT[$suite]}"
  LABEL[$suite]="${VERSION[$suite]}${rev:+ --$how $rev}"

  mapfile -t all < <("$NODE" "$cli" list --client | sed -n 's/^  - \([^ ]*\).*/\1/p')
  [ "${#all[@]}" -gt 0 ] || die "'conformance list --client' of $suite listed no scenarios"
  if [ "$how" = requirements ]; then
    mapfile -t lines < <("$NODE" "$SUMMARIZE" scenarios "$cli" "$rev")
    [ "${#lines[@]}" -gt 0 ] || die "requirement set $rev of $suite lists no client scenarios"
    list=()
    notscored=()
    for line in "${lines[@]}"; do
      name="${line%%$'\t'*}"
      printf '%s\n' "${all[@]}" | grep -qxF -- "$name" ||
        die "requirement set $rev names '$name', which ${PKG[$suite]} ${VERSION[$suite]} does not list"
      list+=("$name")
      [ "${line#*$'\t'}" = scored ] || notscored+=("$name")
    done
    NOTSCORED[$suite]="${notscored[*]}"
  elif [ "$how" = extension ]; then
    mapfile -t list < <("$NODE" "$cli" list --client |
      sed -n 's/^  - \([^ ]*\) \[extension\].*/\1/p' | grep -v '^auth/' || true)
    [ "${#list[@]}" -gt 0 ] || die "'conformance list --client' of $suite tags no non-auth scenario [extension]"
    NOTSCORED[$suite]="${list[*]}"
  elif [ "$how" = spec-version ]; then
    mapfile -t list < <("$NODE" "$cli" list --client --spec-version "$rev" | sed -n 's/^  - \([^ ]*\).*/\1/p')
    [ "${#list[@]}" -gt 0 ] || die "'conformance list --client --spec-version $rev' listed no scenarios"
    NOTSCORED[$suite]=""
  else
    list=("${all[@]}")
    NOTSCORED[$suite]=""
  fi
  KNOWN[$suite]="${list[*]}"

  if [ "${#WANTED[@]}" -gt 0 ]; then
    sel=()
    for w in "${WANTED[@]}"; do
      case "$w" in
        *:*) [ "${w%%:*}" = "$suite" ] || continue; name="${w#*:}" ;;
        *) name="$w" ;;
      esac
      if printf '%s\n' "${list[@]}" | grep -qxF -- "$name"; then
        sel+=("$name")
        WANTED_FOUND[$w]=1
      fi
    done
  else
    sel=("${list[@]}")
  fi
  if [ "${#sel[@]}" -gt 0 ]; then
    SEL[$suite]="${sel[*]}"
    RUN_SUITES+=("$suite")
  fi
done
for w in "${WANTED[@]}"; do
  [ -n "${WANTED_FOUND[$w]:-}" ] ||
    die "scenario '$w' is in none of the selected suites (${SUITES[*]}); 'conformance list --client' names them"
done
[ "${#RUN_SUITES[@]}" -gt 0 ] || die "nothing to run"

# Fresh results: a run replaces every earlier one, even of the suites it skips (and the flat
# layout of the single-suite run.sh).
rm -rf "$OUT/runs" "$OUT/logs" "$OUT/summary.txt"
for suite in "${ALL_SUITES[@]}"; do rm -rf "${OUT:?}/$suite"; done
for suite in "${RUN_SUITES[@]}"; do mkdir -p "$OUT/$suite/runs" "$OUT/$suite/logs"; done

run_one() {
  local suite="$1" scenario="$2" safe="${2//\//_}" rc=0 how rev
  local extra=()
  read -r how rev <<<"${SELECT[$suite]}"
  case "$how" in
    requirements | extension) extra=(--spec-version "$rev" --force) ;;
    spec-version) extra=(--spec-version "$rev") ;;
  esac
  "$NODE" "${CLI[$suite]}" client \
    --command "$CLIENT" \
    --scenario "$scenario" \
    "${extra[@]}" \
    --timeout "$TIMEOUT_MS" \
    --expected-failures "${BASELINE[$suite]}" \
    -o "$OUT/$suite/runs" \
    >"$OUT/$suite/logs/$safe.log" 2>&1 </dev/null || rc=$?
  echo "$rc" >"$OUT/$suite/logs/$safe.rc"
}

PARALLEL=()
SERIAL_RUN=()
total=0
for suite in "${RUN_SUITES[@]}"; do
  read -r -a sel <<<"${SEL[$suite]}"
  echo "==> conformance $suite: $(basename "$CLIENT") against ${PKG[$suite]} ${LABEL[$suite]}: ${#sel[@]} scenarios"
  total=$((total + ${#sel[@]}))
  for s in "${sel[@]}"; do
    if printf '%s\n' "${SERIAL[@]}" | grep -qxF -- "$s"; then SERIAL_RUN+=("$suite $s"); else PARALLEL+=("$suite $s"); fi
  done
done

started=$SECONDS
echo "==> conformance: $total scenarios, ${#PARALLEL[@]} of them $JOBS at a time"
for job in "${PARALLEL[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n || true; done
  run_one ${job} &
done
wait
for job in "${SERIAL_RUN[@]}"; do
  echo "==> conformance: ${job#* } of ${job%% *} alone (timing-sensitive)"
  run_one ${job}
done
echo "==> conformance: ran in $((SECONDS - started)) s"

status=0
for suite in "${RUN_SUITES[@]}"; do
  read -r -a sel <<<"${SEL[$suite]}"
  KNOWN_SCENARIOS="${KNOWN[$suite]}" NOT_SCORED="${NOTSCORED[$suite]}" \
    "$NODE" "$SUMMARIZE" judge "${LABEL[$suite]}" "$OUT/$suite" "${BASELINE[$suite]}" "${CLI[$suite]}" "${sel[@]}" \
    | tee "$OUT/$suite/summary.txt" || status=1
done
"$NODE" "$SUMMARIZE" total "$OUT" "${RUN_SUITES[@]}" | tee "$OUT/summary.txt" || status=1

# Scenarios a client that does nothing also passes (the suite only checks that nothing wrong was
# fetched): each must also show, in the client's own stderr, that it did the work. A pattern
# (grep -E) per scenario; the scenario's newest run must match it.
declare -A EVIDENCE=(
  [sep-2640-client-no-prefetch]='conformance-client: skills: \["[^"]+"'
  [sep-2640-client-verify-digest]='conformance-client: refused .* has digest sha256:[0-9a-f]{64}, but the skill.s manifest says'
  [sep-2640-client-verify-size]='conformance-client: refused .* is [0-9]+ bytes, but the skill.s manifest says [0-9]+'
  [sep-2640-client-verify-frontmatter]='conformance-client: refused .*frontmatter .* does not match'
)
for suite in "${RUN_SUITES[@]}"; do
  read -r -a sel <<<"${SEL[$suite]}"
  for scenario in "${sel[@]}"; do
    pattern="${EVIDENCE[$scenario]:-}"
    [ -n "$pattern" ] || continue
    newest="$(ls -d "$OUT/$suite/runs/${scenario//\//_}"-* 2>/dev/null | sort | tail -n 1)"
    if [ -z "$newest" ] || ! grep -qE -- "$pattern" "$newest/stderr.txt" 2>/dev/null; then
      echo "FAIL  $scenario ($suite): the suite's checks passed, but the client's stderr does not show the work (/$pattern/)"
      status=1
    fi
  done
done
exit "$status"
