#!/usr/bin/env bash
# Latency under load on loopback, two builds taking turns: ROUNDS rounds (default 5), each a
# `test-runner run --test responsiveness -t 4 -P 8` of BEFORE's runner against BEFORE's reflector, then
# AFTER's against AFTER's. Prints each phase's load, probes and RPM, then the ratios AFTER over BEFORE round by
# round. On one host both ends and all flows share its cores, so this shows what the tools' own scheduling
# does to the probes under load, not a link's queues.
#
#   BEFORE=DIR AFTER=DIR [ROUNDS=N] [ENCRYPTION=none|required] results/responsiveness-loopback-2026-12-02/ab.sh
#   (each DIR: release builds of reflector and test-runner)
set -euo pipefail
before=${BEFORE:?"BEFORE: a folder with release builds of reflector and test-runner"}
after=${AFTER:?"AFTER: the same, of the build to compare"}
rounds=${ROUNDS:-5}
encryption=${ENCRYPTION:-none}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2> /dev/null || true; rm -rf "$work"' EXIT
start() { # build name: starts its reflector, sets port
    "$1/reflector" --no-dnssd --bind 127.0.0.1 --port 0 --raw-echo-port 0 --udp-ports ephemeral --encryption "$encryption" \
        > "$work/$2.log" 2>&1 &
    pids+=($!)
    for _ in $(seq 100); do grep -q ' ready ' "$work/$2.log" && break; sleep 0.1; done
    port=$(sed -n 's/.* ready .* port=\([0-9]*\) .*/\1/p' "$work/$2.log")
    [ -n "$port" ] || { cat "$work/$2.log" >&2; exit 1; }
}
start "$before" before
port_before=$port
start "$after" after
port_after=$port
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //') x $(nproc); kernel $(uname -r)"
echo "before: $("$before/test-runner" --version 2>&1 | head -1)"
echo "after: $("$after/test-runner" --version 2>&1 | head -1)"
echo "encryption: $encryption"
for round in $(seq "$rounds"); do
    for build in before after; do
        dir=$before port=$port_before
        [ "$build" = after ] && dir=$after port=$port_after
        "$dir/test-runner" run --connect "127.0.0.1:$port" --name "rpm-$build" --quiet \
            --output "$work/$build-$round.json" --test responsiveness -t 4 -P 8 --encryption "$encryption" > /dev/null
    done
    python3 "$here/summarize.py" "$round" "$work/before-$round.json" "$work/after-$round.json"
done
