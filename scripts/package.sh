#!/usr/bin/env bash
# `make package`: the release bundles, made by Tauri's bundler from a release build.
#
#   scripts/package.sh        (after `make deps ui`; what `make package` runs)
#
# 1. One `cargo build --release` of the desktop app and the `switchboard` CLI together (one
#    feature resolution, so their shared dependencies compile once), with the app's
#    `custom-protocol` feature, as `tauri build` would pass it.
# 2. `tauri bundle --bundles deb`: the .deb with the app, the CLI as /usr/bin/switchboard
#    (tauri.conf.json bundle.linux.deb.files), the desktop entry (src-tauri/packaging/) and icons.
# 3. `tauri bundle --bundles appimage`, tried: the bundler downloads its AppImage tools
#    (AppRun, linuxdeploy) from GitHub at bundle time, which a machine that reaches only the
#    package registries cannot do. Then this step says what is missing and is skipped;
#    SWITCHBOARD_REQUIRE_APPIMAGE=1 makes it an error.
# 4. The sizes of what was built, for docs/benchmarks.md.
#
# The Tauri CLI is the npm package @tauri-apps/cli in ui/ (devDependency, pinned to the tauri
# crate's version), installed by `make ui`; it ships a prebuilt binary, so nothing compiles it.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT="$PWD"
CARGO="${CARGO:-cargo}"
NODE="${SWITCHBOARD_NODE:-$ROOT/.tools/node22/bin/node}"
TAURI_JS="$ROOT/ui/node_modules/@tauri-apps/cli/tauri.js"
TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
RELEASE="$TARGET_DIR/release"
read -r -a EXTRA_FEATURES <<<"${CARGO_FEATURES:-}"

say() { printf '==> package: %s\n' "$*"; }
die() {
  printf 'package: error: %s\n' "$*" >&2
  exit 1
}

[ -x "$NODE" ] || die "$NODE not found (run \`make deps\`)"
[ -f "$TAURI_JS" ] || die "the Tauri CLI is not installed in ui/node_modules (run \`make ui\`)"
tauri() { "$NODE" "$TAURI_JS" "$@"; }

# The CLI packed next to the app: the one of this target directory, wherever that is.
cli_files="{\"/usr/bin/switchboard\": \"$RELEASE/switchboard\"}"
config="{\"bundle\": {\"linux\": {\"deb\": {\"files\": $cli_files}, \"appimage\": {\"files\": $cli_files}}}}"

say "cargo build --release -p switchboard-desktop -p switchboard-cli (long on 2 cores)"
"$CARGO" build --release -p switchboard-desktop -p switchboard-cli \
  --features switchboard-desktop/custom-protocol "${EXTRA_FEATURES[@]}"
say "switchboard --version: $("$RELEASE/switchboard" --version)"

say "tauri bundle --bundles deb"
tauri bundle --ci --bundles deb --config "$config"
debs=("$RELEASE"/bundle/deb/*.deb)
[ -f "${debs[0]}" ] || die "the bundler made no .deb in $RELEASE/bundle/deb"

say "tauri bundle --bundles appimage (tried: its tools are downloaded at bundle time)"
appimage_log="$(mktemp)"
trap 'rm -f "$appimage_log"' EXIT
appimage_ok=1
tauri bundle --ci --bundles appimage --config "$config" >"$appimage_log" 2>&1 || appimage_ok=0
cat "$appimage_log"
if [ "$appimage_ok" -eq 0 ]; then
  tools="${XDG_CACHE_HOME:-$HOME/.cache}/tauri"
  arch="$(uname -m)"
  cat >&2 <<EOF
package: AppImage NOT BUILT: Tauri's bundler could not get its AppImage tools.
  It downloads them from GitHub when they are not in $tools:
    AppRun-$arch                  (tauri-apps/binary-releases, release apprun-old)
    linuxdeploy-$arch.AppImage    (tauri-apps/binary-releases; checked against a hash)
    linuxdeploy-plugin-appimage    (optional: linuxdeploy falls back to its built-in one)
  No Debian, npm or PyPI package ships them, and this machine reaches only the package
  registries. On a machine with internet access this step works as it is; or copy those
  files into $tools first. The bundler said:
    $(grep -m1 -iE 'error|failed' "$appimage_log" || tail -n1 "$appimage_log")
EOF
  if [ "${SWITCHBOARD_REQUIRE_APPIMAGE:-0}" = "1" ]; then
    die "SWITCHBOARD_REQUIRE_APPIMAGE=1 and the AppImage was not built"
  fi
fi

say "sizes:"
for f in "$RELEASE"/bundle/deb/*.deb "$RELEASE"/bundle/appimage/*.AppImage; do
  [ -f "$f" ] || continue
  bytes="$(stat -c %s "$f")"
  printf '    %-40s %10s bytes  %6s MiB\n' "$(basename "$f")" "$bytes" \
    "$(awk -v b="$bytes" 'BEGIN { printf "%.1f", b / 1048576 }')"
done
