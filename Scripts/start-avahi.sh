#!/usr/bin/env bash
# Starts the D-Bus system bus and avahi-daemon without systemd and waits until Avahi is ready.
# Idempotent: does nothing when avahi-daemon already answers on the bus. Needs root.
# Env: AVAHI_LOG (daemon log file), AVAHI_TIMEOUT_S (readiness wait, default 10).
set -euo pipefail
log=${AVAHI_LOG:-${TMPDIR:-/tmp}/avahi-daemon.log}
timeout_s=${AVAHI_TIMEOUT_S:-10}

bus_ready() {
    dbus-send --system --print-reply --reply-timeout=1000 --dest=org.freedesktop.DBus \
        / org.freedesktop.DBus.GetId >/dev/null 2>&1
}
avahi_ready() {  # Avahi server state 2 = RUNNING
    dbus-send --system --print-reply=literal --reply-timeout=1000 --dest=org.freedesktop.Avahi \
        / org.freedesktop.Avahi.Server.GetState 2>/dev/null | grep -q 'int32 2'
}
# A process exists and is not a zombie ('avahi-daemon --check' counts zombies as running).
alive() {
    local state
    state=$(sed -n 's/.*) \(.\).*/\1/p' "/proc/$1/stat" 2>/dev/null)
    [ -n "$state" ] && [ "$state" != Z ]
}

started=$(date +%s%N)
if avahi_ready; then echo "avahi-daemon already running"; exit 0; fi
if ! bus_ready; then
    mkdir -p /run/dbus
    rm -f /run/dbus/pid /run/dbus/system_bus_socket   # stale files stop dbus-daemon from starting
    [ -s /var/lib/dbus/machine-id ] || dbus-uuidgen --ensure
    dbus-daemon --system --fork
    for _ in $(seq 50); do bus_ready && break; sleep 0.1; done
    bus_ready || { echo "dbus-daemon did not come up" >&2; exit 1; }
fi
if ! alive "$(cat /run/avahi-daemon/pid 2>/dev/null || echo 0)"; then
    rm -f /run/avahi-daemon/pid                         # a stale pid file stops avahi-daemon from starting
    setsid avahi-daemon --no-drop-root --no-chroot --no-rlimits >>"$log" 2>&1 </dev/null &
fi
for _ in $(seq $((timeout_s * 20))); do avahi_ready && break; sleep 0.05; done
avahi_ready || { echo "avahi-daemon not ready after ${timeout_s}s; its log:" >&2; tail -20 "$log" >&2; exit 1; }
echo "avahi-daemon ready in $(( ($(date +%s%N) - started) / 1000000 )) ms (pid $(cat /run/avahi-daemon/pid))"
