#!/usr/bin/env bash
# Where a 1 GiB resource's CPU goes, by process and thread, beside the floor and two variants of it.
# ROUNDS rounds (default 5), each: the library (test-runner --test resource --file F against a reflector,
# plaintext, loopback; threads.py counts each thread's CPU over the transfer alone), then Scripts/file-over-tcp.c
# as the floor (1 MiB reads and writes), with the receiver reading at most 256 KiB at a time
# (RECEIVE_READ=262144), and with the sender using sendfile (SENDFILE=1). The file and the copies go to
# SCRATCH (default /dev/shm/by-thread: tmpfs). Prints one line a run; writes them to OUT/summary.txt.
# FLOORS, one line a floor run, "LABEL" or "LABEL|ENV=VALUE [ENV=VALUE ...]", replaces those three; CFLAGS (default
# -O2) builds it.
#
#   BIN=DIR results/resources-2026-12-01/by-thread.sh      (DIR holds release builds of reflector and test-runner)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${BIN:?"BIN: a folder with release builds of reflector and test-runner"}
out=${OUT:-$here}; rounds=${ROUNDS:-5}
scratch=${SCRATCH:-/dev/shm/by-thread}; mkdir -p "$scratch"
trap 'rm -rf "$scratch"' EXIT
floors=${FLOORS:-$'floor\nfloor, receiver reads 256 KiB|RECEIVE_READ=262144\nfloor, sender sendfile|SENDFILE=1'}
# shellcheck disable=SC2086 # CFLAGS is a list of flags
cc ${CFLAGS:--O2} -pthread -o "$scratch/floor" "$here/../../Scripts/file-over-tcp.c"
"$scratch/floor" --self-test > /dev/null
dd if=/dev/urandom of="$scratch/file" bs=1M count=1024 status=none
{
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //') x $(nproc); kernel $(uname -r)"
    echo "tools: $("$bin/test-runner" --version 2>/dev/null | head -1); scratch: $(stat -f -c %T "$scratch")"
    echo "free page reporting order: $(cat /sys/module/page_reporting/parameters/page_reporting_order 2>/dev/null || echo none)"
} | tee "$out/summary.txt"
library() {
    rm -rf "$scratch/landing"; mkdir -p "$scratch/landing"
    "$bin/reflector" --no-dnssd --bind 127.0.0.1 --port 0 --raw-echo-port 0 --udp-ports ephemeral --encryption none \
        --resource-directory "$scratch/landing" > "$scratch/reflector.log" 2>&1 &
    local pid=$! port=""
    for _ in $(seq 100); do grep -q ' ready ' "$scratch/reflector.log" && break; sleep 0.1; done
    port=$(sed -n 's/.* ready .* port=\([0-9]*\) .*/\1/p' "$scratch/reflector.log")
    python3 "$here/threads.py" "$pid" "$scratch/landing" > "$scratch/threads.txt" &
    local poller=$!
    TMPDIR=$scratch timeout 600 "$bin/test-runner" run --connect "127.0.0.1:$port" --test resource --file "$scratch/file" \
        --encryption none --duration 600 --name by-thread --output "$scratch/run.json" > /dev/null 2>&1
    wait "$poller"
    kill -TERM "$pid"; wait "$pid" 2> /dev/null || true
    echo "library MB/s $(jq '.resources.bytesPerSecond / 1e6 | floor' "$scratch/run.json"); $(cat "$scratch/threads.txt")"
}
floor() {  # LABEL [ENV...]
    local label=$1; shift
    rm -f "$scratch/copy"
    # bytes seconds MB/s senderCPU receiverCPU
    read -r _ seconds rate sender receiver < <(env "$@" "$scratch/floor" "$scratch/file" "$scratch/copy")
    cmp -s "$scratch/file" "$scratch/copy" || { echo "the floor's copy differs" >&2; exit 1; }
    echo "$label MB/s ${rate%.*}; transfer $seconds s; sender $sender s CPU, receiver $receiver s CPU"
}
for round in $(seq "$rounds"); do
    {
        echo "round $round: $(library)"
        while IFS='|' read -r label knob; do
            # shellcheck disable=SC2086 # the knobs are a list of ENV=VALUE words
            echo "round $round: $(floor "$label" $knob)"
        done <<< "$floors"
    } | tee -a "$out/summary.txt"
done
