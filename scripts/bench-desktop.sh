#!/usr/bin/env bash
# `make bench-desktop` (and the last step of `make bench`): the desktop app's start-up time and
# idle memory on release builds, issue 14's benchmark. Results in $SWITCHBOARD_BENCH_OUT
# (default tests/results/bench): desktop.txt (the tables) and desktop.tsv (every sample).
#
#   scripts/bench-desktop.sh        (after `make deps ui`; what `make bench-desktop` runs)
#
# 1. Builds, niced: the release app and CLI exactly as scripts/package.sh does (one selection, so
#    a fresh `make package` build is reused), the release fake server (as `make bench` builds
#    it), and the minimal Tauri 2 app of tests/bench/minimal-app into target/minimal-app (its
#    own Cargo project and target directory: `make test` never builds it).
# 2. Re-runs itself under Xvfb and a private D-Bus session with a throwaway keyring, as the e2e
#    tests run (Makefile test-rust, scripts/with-keyring.sh).
# 3. Start-up: from asking tauri-driver for a session (WebKitWebDriver spawns the app) until the
#    first page is rendered from IPC answers, i.e. the element `#page .first-run` (no server) or
#    `#page article[data-name]` (a server card) exists; found with one WebDriver request under an
#    implicit wait, so no client polling adds to it. Scenarios, interleaved in every round:
#    minimal app (`#ready`, the floor), 0 servers, 20 servers lazy, 20 servers always on; the 20
#    are 15 healthy fake servers and 5 broken ones (2 hang in their handshake, 2 crash at start,
#    1 remote URL nobody answers). Each scenario's data directory is made by the CLI beforehand,
#    so no run creates a database. The page cache is warm (a "cold" start of a new process, not
#    of a cold disk).
# 4. Idle memory: the app launched directly (no WebDriver), 60 s idle, then PSS and RSS
#    (/proc/PID/smaps_rollup) of the app and its WebKit processes (WebKitWebProcess,
#    WebKitNetworkProcess and anything under them), summed; MCP server processes, if any, apart.
#    Scenarios: the minimal app (the floor), 0 servers, 10 healthy servers (lazy: none runs),
#    10 healthy servers always on.
# Every figure is the median over the runs. A missed target is reported, never an error.
#
# Knobs: BENCH_START_RUNS (default 5), BENCH_MEM_RUNS (3), BENCH_IDLE_S (60). For a quick check
# of the script itself: BENCH_NO_BUILD=1 with BENCH_APP, BENCH_CLI, BENCH_FAKE, BENCH_MINIMAL
# pointing at other builds (the figures are then not the benchmark's).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT="$PWD"
CARGO="${CARGO:-cargo}"
TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
RELEASE="$TARGET_DIR/release"
MINIMAL_TARGET="$TARGET_DIR/minimal-app"
APP="${BENCH_APP:-$RELEASE/switchboard-desktop}"
CLI="${BENCH_CLI:-$RELEASE/switchboard}"
FAKE="${BENCH_FAKE:-$RELEASE/fake-mcp-server}"
MINIMAL="${BENCH_MINIMAL:-$MINIMAL_TARGET/release/switchboard-minimal-app}"
DRIVER="${SWITCHBOARD_TAURI_DRIVER:-$ROOT/.tools/cargo/bin/tauri-driver}"
OUT="${SWITCHBOARD_BENCH_OUT:-$ROOT/tests/results/bench}"
START_RUNS="${BENCH_START_RUNS:-5}"
MEM_RUNS="${BENCH_MEM_RUNS:-3}"
IDLE_S="${BENCH_IDLE_S:-60}"

say() { printf '==> bench-desktop: %s\n' "$*"; }
die() {
  printf 'bench-desktop: error: %s\n' "$*" >&2
  exit 1
}

if [ -z "${SB_BENCH_DESKTOP_INNER:-}" ]; then
  read -r -a EXTRA_FEATURES <<<"${CARGO_FEATURES:-}"
  [ -x "$DRIVER" ] || die "tauri-driver not found at $DRIVER (run \`make deps\`)"
  for tool in xvfb-run dbus-run-session curl jq; do
    command -v "$tool" >/dev/null || die "'$tool' not found (run \`make deps\`)"
  done
  if [ "${BENCH_NO_BUILD:-0}" = 1 ]; then
    say "BENCH_NO_BUILD=1: measuring $APP and $MINIMAL as they are"
  else
    say "release app + CLI (as scripts/package.sh builds them; reused when fresh)"
    nice -n 19 "$CARGO" build --release -p switchboard-desktop -p switchboard-cli \
      --features switchboard-desktop/custom-protocol "${EXTRA_FEATURES[@]}"
    say "release fake-mcp-server (as \`make bench\` builds it)"
    nice -n 19 "$CARGO" build --release -p switchboard-tests --bins "${EXTRA_FEATURES[@]}"
    say "minimal Tauri 2 app (tests/bench/minimal-app, target dir $MINIMAL_TARGET)"
    (cd tests/bench/minimal-app &&
      CARGO_TARGET_DIR="$MINIMAL_TARGET" nice -n 19 "$CARGO" build --release --locked)
  fi
  mkdir -p "$OUT"
  say "measuring under Xvfb and a private D-Bus session"
  exec env SB_BENCH_DESKTOP_INNER=1 NO_AT_BRIDGE=1 \
    xvfb-run -a -s "-screen 0 1280x800x24" dbus-run-session -- \
    scripts/with-keyring.sh "$ROOT/scripts/bench-desktop.sh" "$@"
fi

# ---- inside Xvfb + D-Bus + keyring -------------------------------------------------------------

WORK="$(mktemp -d "${TMPDIR:-/tmp}/sb-bench-desktop.XXXXXX")"
SAMPLES="$OUT/desktop.tsv"
REPORT="$OUT/desktop.txt"
# Processes this script started and has not seen end: stopped on exit, by pid.
declare -a STARTED=()

stop_pid() {
  local pid="$1"
  kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 50); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
}

# Fake servers left running (always-on ones whose app was killed): by the pids they wrote.
stop_servers() {
  local f pid
  for f in "$WORK"/pids/*; do
    [ -f "$f" ] || continue
    while read -r pid; do
      [ -n "$pid" ] || continue
      if tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline" | grep -q fake-mcp-server; then
        stop_pid "$pid"
      fi
    done <"$f"
    rm -f "$f"
  done
}

cleanup() {
  local pid
  for pid in "${STARTED[@]}"; do stop_pid "$pid"; done
  stop_servers
  rm -rf "$WORK"
}
trap cleanup EXIT

# Every process under PID (not PID itself), one pid a line.
descendants() {
  ps -e -o pid=,ppid= | awk -v root="$1" '
    { kids[$2] = kids[$2] " " $1 }
    function walk(p,   i, n, k) { n = split(kids[p], k, " "); for (i = 1; i <= n; i++) { print k[i]; walk(k[i]) } }
    END { walk(root) }'
}

now_ms() { echo $(($(date +%s%N) / 1000000)); }
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
median() {
  sort -n | awk '{a[NR]=$1} END { if (NR == 0) print "nan"; else if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2 }'
}

# ---- the scenarios' data directories, made with the CLI ---------------------------------------

sb() { SWITCHBOARD_DATA_DIR="$1" "$CLI" "${@:2}" >/dev/null 2>>"$WORK/cli.log"; }

add_fake() { # DIR NAME ARGS...
  local dir="$1" name="$2"
  shift 2
  sb "$dir" server add "$name" -- "$FAKE" --pid-file "$WORK/pids/$name" "$@"
  sb "$dir" server trust "$name" --yes
}

make_dir() { # NAME HEALTHY BROKEN(0|1) ALWAYS_ON(0|1)
  local dir="$WORK/data/$1" healthy="$2" broken="$3" always="$4" i names=()
  mkdir -p "$dir"
  sb "$dir" server list
  for i in $(seq 1 "$healthy"); do
    add_fake "$dir" "ok$i" --tools 5
    names+=("ok$i")
  done
  if [ "$broken" = 1 ]; then
    add_fake "$dir" hung1 --mode slow-init=600000
    add_fake "$dir" hung2 --mode slow-init=600000
    add_fake "$dir" crash1 --mode crash-on-init
    add_fake "$dir" crash2 --mode crash-on-init
    sb "$dir" server add gone --url "http://127.0.0.1:9/mcp"
    sb "$dir" server trust gone --yes || true
    names+=(hung1 hung2 crash1 crash2 gone)
  fi
  if [ "$always" = 1 ]; then
    for i in "${names[@]}"; do sb "$dir" server always-on "$i" on; done
  fi
}

mkdir -p "$WORK/pids"
say "data directories (CLI: $CLI)"
make_dir s0 0 0 0
make_dir s20lazy 15 1 0
make_dir s20on 15 1 1
make_dir m10lazy 10 0 0
make_dir m10on 10 0 1

# ---- start-up through WebDriver ----------------------------------------------------------------

wd() { # METHOD URL [JSON]
  if [ $# -ge 3 ]; then
    curl -s --max-time 90 -X "$1" -H 'Content-Type: application/json' -d "$3" "$2"
  else
    curl -s --max-time 90 -X "$1" "$2"
  fi
}

# One start: sets RESULT to "ms_to_session ms_to_page cards"; the app is closed after. Not run in
# a subshell, so that the exit trap knows every pid it started.
start_once() { # BINARY DATA_DIR(or -) CSS
  local bin="$1" data="$2" css="$3" port native driver base t0 t1 t2 sid reply found p
  port="$(free_port)"
  native="$(free_port)"
  if [ "$data" = - ]; then
    "$DRIVER" --port "$port" --native-port "$native" >/dev/null 2>&1 &
  else
    SWITCHBOARD_DATA_DIR="$data" "$DRIVER" --port "$port" --native-port "$native" >/dev/null 2>&1 &
  fi
  driver=$!
  STARTED+=("$driver")
  for _ in $(seq 200); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && (exec 3<>"/dev/tcp/127.0.0.1/$native") 2>/dev/null; then
      break
    fi
    sleep 0.1
  done
  base="http://127.0.0.1:$port"
  local caps
  caps="$(jq -nc --arg app "$bin" '{capabilities: {alwaysMatch: {"tauri:options": {application: $app}}}}')"
  t0="$(now_ms)"
  reply="$(wd POST "$base/session" "$caps")"
  t1="$(now_ms)"
  sid="$(jq -r '.value.sessionId // empty' <<<"$reply")"
  [ -n "$sid" ] || die "no WebDriver session: $reply"
  wd POST "$base/session/$sid/timeouts" '{"implicit": 60000}' >/dev/null
  local q
  q="$(jq -nc --arg css "$css" '{using: "css selector", value: $css}')"
  found=0
  for _ in $(seq 20); do
    reply="$(wd POST "$base/session/$sid/element" "$q" || true)"
    if jq -e '.value | objects | has("error") | not' <<<"$reply" >/dev/null; then
      found=1
      break
    fi
    # Not there after the implicit wait: give up; other errors (page still loading): retry.
    if jq -e '.value.error == "no such element"' <<<"$reply" >/dev/null; then break; fi
    sleep 0.05
  done
  t2="$(now_ms)"
  # The count must not wait: under an implicit wait, "find elements" waits for at least one.
  wd POST "$base/session/$sid/timeouts" '{"implicit": 0}' >/dev/null || true
  local count
  count="$(wd POST "$base/session/$sid/elements" "$(jq -nc --arg css "#page article[data-name]" '{using: "css selector", value: $css}')" | jq '.value | if type == "array" then length else 0 end' || echo "?")"
  # WebKitWebDriver ends the app; whatever of the tree is left is stopped by pid.
  local tree
  tree="$(descendants "$driver")"
  wd DELETE "$base/session/$sid" >/dev/null || true
  stop_pid "$driver"
  for p in $tree; do stop_pid "$p"; done
  stop_servers
  [ "$found" = 1 ] || die "$bin never showed $css: $reply"
  RESULT="$((t1 - t0)) $((t2 - t0)) $count"
}

SB_CSS="#page .first-run, #page article[data-name]"
declare -A START_MS=() START_CARDS=()
start_scenarios=(minimal s0 s20lazy s20on)
# start: ms to the session, ms to the page, server cards seen; mem (kB): PSS and RSS of app +
# WebKit, the app's PSS, WebKit's PSS, the servers' PSS, processes in the tree.
printf 'kind\tscenario\trun\tvalues...\n' >"$SAMPLES"
LOAD_BEFORE="$(cut -d' ' -f1-3 /proc/loadavg)"
say "start-up: $START_RUNS rounds of ${start_scenarios[*]} (load $LOAD_BEFORE)"
for run in $(seq 1 "$START_RUNS"); do
  for s in "${start_scenarios[@]}"; do
    if [ "$s" = minimal ]; then
      start_once "$MINIMAL" - "#ready"
    else
      start_once "$APP" "$WORK/data/$s" "$SB_CSS"
    fi
    read -r session page cards <<<"$RESULT"
    printf 'start\t%s\t%s\t%s\t%s\t%s\n' "$s" "$run" "$session" "$page" "$cards" >>"$SAMPLES"
    START_MS[$s]+="$page "
    START_CARDS[$s]="$cards"
    say "  start $s #$run: session ${session} ms, page ${page} ms, cards $cards"
  done
done

# ---- idle memory ------------------------------------------------------------------------------

# "app_pss app_rss webkit_pss webkit_rss other_pss other_rss nproc" in kB for PID's tree: the
# process itself, every process under a direct child whose subtree runs WebKit (or its D-Bus
# proxy), and the rest (MCP servers) as "other".
tree_memory() {
  local root="$1" line pid grp p r
  declare -A kind_pss=([app]=0 [webkit]=0 [other]=0) kind_rss=([app]=0 [webkit]=0 [other]=0)
  local n=0
  while read -r pid grp; do
    read -r p r < <(awk '/^Pss:/ {p=$2} /^Rss:/ {r=$2} END {print p+0, r+0}' "/proc/$pid/smaps_rollup" 2>/dev/null || echo "0 0")
    kind_pss[$grp]=$((kind_pss[$grp] + p))
    kind_rss[$grp]=$((kind_rss[$grp] + r))
    n=$((n + 1))
  done < <(ps -e -o pid=,ppid=,comm= | awk -v root="$root" '
    { pid = $1; pp = $2; $1 = ""; $2 = ""; sub(/^ +/, ""); comm[pid] = $0; kids[pp] = kids[pp] " " pid }
    function walk(p, top,   i, n, k) { member[p]=top; n=split(kids[p], k, " "); for (i=1; i<=n; i++) walk(k[i], top) }
    END {
      n=split(kids[root], k, " ")
      for (i=1; i<=n; i++) walk(k[i], k[i])
      for (p in member) if (comm[p] ~ /^WebKit/ || comm[p] == "xdg-dbus-proxy") webkit[member[p]]=1
      print root, "app"
      for (p in member) print p, (webkit[member[p]] ? "webkit" : "other")
    }')
  echo "${kind_pss[app]} ${kind_rss[app]} ${kind_pss[webkit]} ${kind_rss[webkit]} ${kind_pss[other]} ${kind_rss[other]} $n"
}

# One idle measurement: sets RESULT to tree_memory's figures (not in a subshell, as start_once).
mem_once() { # BINARY DATA_DIR(or -)
  local bin="$1" data="$2" pid
  if [ "$data" = - ]; then
    "$bin" >"$WORK/app.log" 2>&1 &
  else
    SWITCHBOARD_DATA_DIR="$data" "$bin" >"$WORK/app.log" 2>&1 &
  fi
  pid=$!
  STARTED+=("$pid")
  sleep "$IDLE_S"
  kill -0 "$pid" 2>/dev/null || die "$bin exited during the idle wait: $(tail -n 5 "$WORK/app.log")"
  RESULT="$(tree_memory "$pid")"
  # The WebKit children end with the app; anything else of its tree is stopped by pid.
  local tree p
  tree="$(descendants "$pid")"
  stop_pid "$pid"
  for p in $tree; do stop_pid "$p"; done
  stop_servers
}

declare -A MEM_PSS=() MEM_RSS=() MEM_OTHER=() MEM_APP=() MEM_WEBKIT=()
mem_scenarios=(minimal m0 m10lazy m10on)
say "idle memory: $MEM_RUNS rounds of ${mem_scenarios[*]}, ${IDLE_S} s idle each"
for run in $(seq 1 "$MEM_RUNS"); do
  for s in "${mem_scenarios[@]}"; do
    case "$s" in
      minimal) mem_once "$MINIMAL" - ;;
      m0) mem_once "$APP" "$WORK/data/s0" ;;
      *) mem_once "$APP" "$WORK/data/$s" ;;
    esac
    read -r ap ar wp wr op or n <<<"$RESULT"
    printf 'mem\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$s" "$run" "$((ap + wp))" "$((ar + wr))" \
      "$ap" "$wp" "$op" "$n" >>"$SAMPLES"
    MEM_PSS[$s]+="$((ap + wp)) "
    MEM_APP[$s]+="$ap "
    MEM_WEBKIT[$s]+="$wp "
    MEM_RSS[$s]+="$((ar + wr)) "
    MEM_OTHER[$s]+="$op "
    say "  mem $s #$run: app+WebKit PSS $(((ap + wp) / 1024)) MiB (app $((ap / 1024)), WebKit $((wp / 1024))), RSS $(((ar + wr) / 1024)) MiB; servers PSS $((op / 1024)) MiB; $n processes"
  done
done
LOAD_AFTER="$(cut -d' ' -f1-3 /proc/loadavg)"

# ---- report ------------------------------------------------------------------------------------

med() { tr ' ' '\n' <<<"$1" | grep -v '^$' | median; }
mib() { awk -v k="$1" 'BEGIN { printf "%.0f", k / 1024 }'; }
{
  echo "Desktop start-up and idle memory ($(date -u +%Y-%m-%dT%H:%MZ), $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?'))"
  echo "load average before: $LOAD_BEFORE; after: $LOAD_AFTER; $(nproc) CPUs"
  echo
  echo "Start-up to the first page rendered (median of $START_RUNS, ms; WebDriver session included)"
  printf '  %-10s %8s  %s\n' scenario median "samples (cards seen)"
  for s in "${start_scenarios[@]}"; do
    printf '  %-10s %8s  %s(%s)\n' "$s" "$(med "${START_MS[$s]}")" "${START_MS[$s]}" "${START_CARDS[$s]}"
  done
  base="$(med "${START_MS[s0]}")"
  for s in s20lazy s20on; do
    awk -v a="$(med "${START_MS[$s]}")" -v b="$base" -v s="$s" \
      'BEGIN { r = a / b; printf "  %s / s0 = %.2f (target <= 1.10: %s)\n", s, r, (r <= 1.10 ? "met" : "MISSED") }'
  done
  echo
  echo "Idle memory after ${IDLE_S} s, app + WebKit processes (median of $MEM_RUNS; MiB)"
  printf '  %-10s %8s %8s %10s %12s %12s\n' scenario PSS RSS "app PSS" "WebKit PSS" "servers PSS"
  for s in "${mem_scenarios[@]}"; do
    printf '  %-10s %8s %8s %10s %12s %12s\n' "$s" "$(mib "$(med "${MEM_PSS[$s]}")")" \
      "$(mib "$(med "${MEM_RSS[$s]}")")" "$(mib "$(med "${MEM_APP[$s]}")")" \
      "$(mib "$(med "${MEM_WEBKIT[$s]}")")" "$(mib "$(med "${MEM_OTHER[$s]}")")"
  done
  floor="$(med "${MEM_PSS[minimal]}")"
  for s in m0 m10lazy m10on; do
    awk -v a="$(med "${MEM_PSS[$s]}")" -v b="$floor" -v s="$s" \
      'BEGIN { r = a / b; printf "  %s / minimal (PSS) = %.2fx (target <= 1.10x: %s)\n", s, r, (r <= 1.10 ? "met" : "MISSED") }'
  done
} | tee "$REPORT"
say "samples in $SAMPLES, report in $REPORT"
