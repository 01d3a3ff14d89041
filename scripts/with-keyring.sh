#!/usr/bin/env bash
# Run a command against a real, throwaway, unlocked GNOME Keyring (Secret Service).
#
#   dbus-run-session -- scripts/with-keyring.sh CMD [ARGS...]
#
# It needs a private D-Bus session bus (dbus-run-session gives one and tears it down after), makes
# a fresh XDG_RUNTIME_DIR and XDG_DATA_HOME (so a brand-new login keyring, never the user's),
# starts gnome-keyring-daemon with only the secrets component, unlocked with a non-empty
# password, waits until org.freedesktop.secrets is on the bus, runs CMD as a child, then stops the
# daemon, removes the temporary directories and exits with CMD's exit status.
# See shared/docs/TESTING.md ("The OS keyring, for real, headless").
set -euo pipefail

prog=with-keyring.sh
if [ "$#" -eq 0 ]; then
  echo "usage: dbus-run-session -- $0 CMD [ARGS...]" >&2
  exit 2
fi
if [ -z "${DBUS_SESSION_BUS_ADDRESS:-}" ]; then
  echo "$prog: no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is unset)." >&2
  echo "$prog: run it inside a private session: dbus-run-session -- $0 $*" >&2
  exit 2
fi
for tool in gnome-keyring-daemon dbus-send; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "$prog: '$tool' not found: run 'make deps' (packages gnome-keyring, dbus)." >&2
    exit 2
  fi
done

runtime_dir="$(mktemp -d "${TMPDIR:-/tmp}/sb-keyring-run.XXXXXX")"
data_dir="$(mktemp -d "${TMPDIR:-/tmp}/sb-keyring-data.XXXXXX")"
chmod 700 "$runtime_dir" "$data_dir"
daemon_pid=""

# shellcheck disable=SC2329 # invoked by the EXIT trap
cleanup() {
  if [ -n "$daemon_pid" ]; then
    kill "$daemon_pid" 2>/dev/null || true
    wait "$daemon_pid" 2>/dev/null || true
  fi
  rm -rf "$runtime_dir" "$data_dir"
}
trap cleanup EXIT

export XDG_RUNTIME_DIR="$runtime_dir"
export XDG_DATA_HOME="$data_dir"

secrets_on_bus() {
  dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
    org.freedesktop.DBus.ListNames 2>/dev/null | grep -q '"org.freedesktop.secrets"'
}

if secrets_on_bus; then
  echo "$prog: org.freedesktop.secrets is already owned on this bus; refusing to use a keyring" >&2
  echo "$prog: that is not a throwaway one. Use a private bus: dbus-run-session -- $0 ..." >&2
  exit 2
fi

# --foreground (not --daemonize) so that $! is the daemon itself and we can stop exactly it.
# The unlock password is read from stdin; it must be non-empty.
printf '%s' "${SWITCHBOARD_KEYRING_PASSWORD:-ci-keyring-pw}" |
  gnome-keyring-daemon --foreground --unlock --components=secrets \
    >"$runtime_dir/gnome-keyring.out" 2>"$runtime_dir/gnome-keyring.err" &
daemon_pid=$!

ready=0
for _ in $(seq 1 200); do # up to ~10 s
  if secrets_on_bus; then
    ready=1
    break
  fi
  if ! kill -0 "$daemon_pid" 2>/dev/null; then
    break
  fi
  sleep 0.05
done
if [ "$ready" -ne 1 ]; then
  echo "$prog: gnome-keyring-daemon did not register org.freedesktop.secrets on the session bus" >&2
  sed 's/^/  gnome-keyring: /' "$runtime_dir/gnome-keyring.err" >&2 || true
  exit 1
fi

# Run the command as a child (not exec) so the daemon and temp dirs are cleaned up afterwards.
status=0
"$@" || status=$?
exit "$status"
