# Sourced by the loopback benchmarks (bench-tools, bench-transfers, bench-resources, bench-folders): release
# builds of the two tools and a reflector on 127.0.0.1 with ephemeral ports and no DNS-SD.
#
#   tools_binaries          sets bin: $BIN when given (a folder holding release builds of reflector and
#                           test-runner), else builds both with Scripts/build-tools.sh
#   start_reflector LOG [OPTIONS...]
#                           starts "$bin/reflector" with OPTIONS, its output in LOG, and waits for its ready
#                           line; sets reflector_pid and reflector_port
#   stop_reflector          SIGTERM, and waits for it to end
#   free_port               prints a TCP port free on 127.0.0.1 now
#   start_rsync_daemon DIR CONFIG LOG
#                           an rsync daemon on 127.0.0.1 serving DIR as module "bench" (CONFIG: where its
#                           configuration goes, LOG: its log); sets rsync_port and daemon_pid
#   stop_rsync_daemon       ends it
#   start_watchdog SECONDS  ends the calling script (SIGTERM, so that its EXIT trap cleans up) once SECONDS
#                           have passed; sets watchdog, the pid for the EXIT trap to kill
#   pin_ends DEFAULT        sets server_pin and client_pin, the commands that put a server (the reflector,
#                           iperf3's, sockperf's) and a client each on a core of its own, as on two hosts, and
#                           pinning, what was done ("split: servers on CPU 0, clients on CPU 1", or "none"):
#                           PIN=split or PIN=none, DEFAULT when PIN is not set; fewer than 2 CPUs pin nothing.
#                           Unpinned on one host, the two ends of a round trip share a core in some runs and not
#                           in others, and a 64-byte round trip through the tools took 25 us or 70 us by where
#                           they landed. Until it is called both are empty: start_reflector pins only a caller
#                           that asks.
#   page_reporting          prints whether this machine gives freed pages back to its host (virtio-balloon free
#                           page reporting): "order N", or "none". Where it does, the first write to such a page
#                           faults on the host, unseen by the guest, and new files' pages cost what the host says
#                           (docs/design/PERFORMANCE-HISTORY.md): a result that writes files says which it was
#   pin_server_for_a_while PID, unpin_server PID
#                           after pin_ends, move a running server's threads to CPU 0 and back to where they
#                           were: for a test that runs on one core a side among tests that use more
# The caller's EXIT trap should call stop_reflector and stop_rsync_daemon (they do nothing when none runs).

export AVAHI_COMPAT_NOWARN=1
reflector_pid=""
reflector_port=""
server_pin=()
client_pin=()
pinning=none
daemon_pid=""
rsync_port=""

tools_binaries() {
    bin=${BIN:-}
    [ -n "$bin" ] || bin=$(Scripts/build-tools.sh)
    for tool in reflector test-runner; do
        [ -x "$bin/$tool" ] || { echo "no $tool in $bin" >&2; exit 2; }
    done
}

start_reflector() {
    local log=$1
    shift
    "${server_pin[@]}" "$bin/reflector" --no-dnssd --bind 127.0.0.1 --port 0 --raw-echo-port 0 --udp-ports ephemeral "$@" >"$log" 2>&1 &
    reflector_pid=$!
    for _ in $(seq 100); do grep -q ' ready ' "$log" && break; sleep 0.1; done
    reflector_port=$(sed -n 's/.* ready .* port=\([0-9]*\) .*/\1/p' "$log")
    [ -n "$reflector_port" ] || { echo "the reflector did not start:" >&2; cat "$log" >&2; exit 1; }
}

stop_reflector() {
    [ -n "$reflector_pid" ] || return 0
    kill -TERM "$reflector_pid" 2>/dev/null || true
    wait "$reflector_pid" 2>/dev/null || true
    reflector_pid=""
}

pin_ends() {
    server_pin=() client_pin=() pinning=none
    if [ "${PIN:-$1}" = split ] && [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null; then
        server_pin=(taskset -c 0) client_pin=(taskset -c 1) pinning="split: servers on CPU 0, clients on CPU 1"
    fi
}

page_reporting() {
    local order=/sys/module/page_reporting/parameters/page_reporting_order
    if [ -r "$order" ]; then echo "order $(cat "$order")"; else echo none; fi
}

pin_server_for_a_while() {
    [ "$pinning" != none ] || return 0
    server_affinity=$(taskset -p "$1" | sed 's/.*: //')
    taskset -a -p -c 0 "$1" >/dev/null
}

unpin_server() {
    [ "$pinning" != none ] || return 0
    taskset -a -p "$server_affinity" "$1" >/dev/null
}

start_watchdog() {
    local limit=$1
    ( trap 'kill $nap 2>/dev/null; exit 0' TERM
      sleep "$limit" </dev/null >/dev/null 2>&1 & nap=$!
      wait $nap && { echo "time limit of $limit s reached" >&2; kill -TERM $$; }
    ) </dev/null >/dev/null &
    watchdog=$!
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

start_rsync_daemon() {
    local module=$1 config=$2 log=$3
    rsync_port=$(free_port)
    printf '%s\n' "pid file = $config.pid" "log file = $log" "use chroot = no" "[bench]" "    path = $module" \
        "    read only = yes" "    list = yes" > "$config"
    rsync --daemon --no-detach --address=127.0.0.1 --port="$rsync_port" --config="$config" &
    daemon_pid=$!
    for _ in $(seq 50); do
        rsync "rsync://127.0.0.1:$rsync_port/" > /dev/null 2>&1 && break
        sleep 0.1
    done
}

stop_rsync_daemon() {
    [ -n "$daemon_pid" ] || return 0
    kill "$daemon_pid" 2>/dev/null || true
    wait "$daemon_pid" 2>/dev/null || true
    daemon_pid=""
}
