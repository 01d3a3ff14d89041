#!/usr/bin/env bash
# Start the desktop app (what `make run` runs after building it).
#
#   scripts/run-desktop.sh path/to/switchboard-desktop [ARGS...]
#
# With a display ($DISPLAY or $WAYLAND_DISPLAY) the app starts as usual. Without one (a server,
# CI, an SSH session) it starts under a virtual X server (xvfb-run -a) in a private D-Bus session
# with the accessibility bridge off, so it leaves no daemons behind; the window then exists but
# nobody can see it (the script prints the virtual display's number for screenshots).
set -euo pipefail

if [ "$#" -lt 1 ]; then
  echo "usage: $0 path/to/switchboard-desktop [ARGS...]" >&2
  exit 2
fi
app="$1"
shift
[ -x "$app" ] || {
  echo "run: $app not found or not executable (build it: make build)" >&2
  exit 2
}

if [ -n "${DISPLAY:-}" ] || [ -n "${WAYLAND_DISPLAY:-}" ]; then
  exec "$app" "$@"
fi

for tool in xvfb-run dbus-run-session; do
  command -v "$tool" >/dev/null 2>&1 || {
    echo "run: no display, and '$tool' is missing to start a virtual one: run 'make deps'" >&2
    exit 2
  }
done
cat >&2 <<'MSG'
==> run: no display found ($DISPLAY and $WAYLAND_DISPLAY are unset).
==> run: starting Switchboard under a VIRTUAL X server (xvfb-run -a): the window is real but
==> run: invisible, nobody can see or click it here. Run `make run` in a desktop session to use
==> run: the app; headless, use the `switchboard` CLI. Stop it with Ctrl+C.
MSG
# shellcheck disable=SC2016 # $DISPLAY is expanded by the inner shell, inside xvfb-run
exec xvfb-run -a -s "-screen 0 1280x800x24" bash -c '
  echo "==> run: virtual display $DISPLAY; screenshot: DISPLAY=$DISPLAY XAUTHORITY=$XAUTHORITY import -window root shot.png" >&2
  exec env NO_AT_BRIDGE=1 dbus-run-session -- "$@"' run-desktop "$app" "$@"
