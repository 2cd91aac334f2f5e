#!/usr/bin/env bash
# Resources and streams against raw TCP on loopback, in ROUNDS rounds, each with, one after the other:
#   raw        iperf3 -P 8 -n 1 GiB: raw TCP, 8 streams, the baseline
#   streams    test-runner --test stream --one-way --streams 8 --bytes 134217728: 8 streams, 1 GiB in all,
#              read and checked by the reflector (deliveredBytesPerSecond), plaintext then encrypted
#   resource   test-runner --test resource --bytes 1073741824 --beside-echo 100: a 1 GiB file, confirmed by
#              SHA-256, with 100 probes a second on the same session beside it, plaintext then encrypted
# against one reflector on 127.0.0.1 (--encryption optional: each runner chooses), release builds. Each
# document also gives both ends' peak memory. Prints a table (ranges over the rounds, ratios taken within a
# round) and writes every document and summary.json to $RESULTS_DIR (default
# results/runs/transfers-<UTC date>/run-<time>/).
#
#   Scripts/bench-transfers.sh [ROUNDS]     default 3
#
# Environment: BIN (a folder holding release builds of reflector and test-runner; default: build them),
# RESULTS_DIR, TMPDIR (the runner's 1 GiB file goes there), TIME_LIMIT (seconds for the whole run, default
# 1800). Everything stays on 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=${1:-3}
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || { echo "usage: $0 [ROUNDS]" >&2; exit 2; }
time_limit=${TIME_LIMIT:-1800}
gib=$((1 << 30))
stamp=$(date -u +%Y-%m-%dT%H%M%SZ)
results=${RESULTS_DIR:-results/runs/transfers-$(date -u +%F)}/run-$stamp
mkdir -p "$results"
results=$(cd "$results" && pwd)

Scripts/setup.sh > /dev/null
for tool in iperf3 jq ss timeout; do
    command -v "$tool" >/dev/null || { echo "missing: $tool (apt-get install iperf3 jq iproute2)" >&2; exit 2; }
done
# shellcheck source=Scripts/loopback-tools.sh
. Scripts/loopback-tools.sh
iperf_pid=
cleanup() {
    [ -z "$iperf_pid" ] || kill "$iperf_pid" 2>/dev/null || true
    stop_reflector
}
trap cleanup EXIT
trap 'exit 130' INT TERM
# The whole run is bounded: past TIME_LIMIT, the watchdog ends this script and so runs its cleanup.
start_watchdog "$time_limit"
trap 'kill $watchdog 2>/dev/null || true; cleanup' EXIT

tools_binaries 2> "$results/build.txt"
{
    echo "date: $stamp"
    echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD -- Sources 2>/dev/null || echo ' (with local changes)')"
    echo "test-runner: $("$bin/test-runner" --version 2>&1 | head -1)"
    echo "iperf3: $(iperf3 --version | head -1)"
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //') x $(nproc)"
    echo "kernel: $(uname -r)"
    echo "file system of TMPDIR: $(stat -f -c %T "${TMPDIR:-/tmp}")"
    echo "free page reporting: $(page_reporting)"
    echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$results/host.txt"

start_reflector "$results/reflector.log" --encryption optional
iperf_port=$(free_port)

# runner NAME OPTIONS...: one test-runner run, its document in $results/NAME.json, which must have no error.
runner() {
    local name=$1
    shift
    timeout 900 "$bin/test-runner" run --connect "127.0.0.1:$reflector_port" --name bench-transfers \
        --duration 600 --output "$results/$name.json" "$@" > "$results/$name.txt" 2>&1 ||
        { cat "$results/$name.txt" >&2; exit 1; }
}

for round in $(seq "$rounds"); do
    echo "round $round of $rounds: raw TCP (iperf3 -P 8 -n 1 GiB) ..."
    iperf3 -s -1 -B 127.0.0.1 -p "$iperf_port" > /dev/null 2>&1 &
    iperf_pid=$!
    for _ in $(seq 50); do ss -ltn "sport = :$iperf_port" | grep -q LISTEN && break; sleep 0.1; done
    timeout 600 iperf3 -c 127.0.0.1 -p "$iperf_port" -P 8 -n "$gib" -J > "$results/raw-$round.json"
    wait "$iperf_pid" || true
    iperf_pid=
    for encryption in none required; do
        echo "round $round: 8 streams, 1 GiB in all, encryption $encryption ..."
        runner "streams-$encryption-$round" --test stream --one-way --streams 8 --bytes $((gib / 8)) \
            --encryption "$encryption"
        echo "round $round: a 1 GiB resource with probes beside it, encryption $encryption ..."
        runner "resource-$encryption-$round" --test resource --bytes "$gib" --beside-echo 100 \
            --encryption "$encryption"
    done
done
stop_reflector

# One object a round, then the ranges.
for round in $(seq "$rounds"); do
    jq -n --argjson round "$round" \
        --slurpfile raw "$results/raw-$round.json" \
        --slurpfile sp "$results/streams-none-$round.json" --slurpfile se "$results/streams-required-$round.json" \
        --slurpfile rp "$results/resource-none-$round.json" --slurpfile re "$results/resource-required-$round.json" \
        '{round: $round,
          rawTCP8Streams: ($raw[0].end.sum_received.bits_per_second / 8 / 1e6),
          streamsPlain: ($sp[0].streams.deliveredBytesPerSecond / 1e6),
          streamsEncrypted: ($se[0].streams.deliveredBytesPerSecond / 1e6),
          resourcePlain: ($rp[0].resources.bytesPerSecond / 1e6),
          resourceEncrypted: ($re[0].resources.bytesPerSecond / 1e6),
          besideP50Milliseconds: ($rp[0].resources.besideEcho.duringTransfers.roundTrip.p50Nanoseconds / 1e6),
          besideP99Milliseconds: ($rp[0].resources.besideEcho.duringTransfers.roundTrip.p99Nanoseconds / 1e6),
          idleP99Milliseconds: ($rp[0].resources.besideEcho.idle.roundTrip.p99Nanoseconds / 1e6),
          besideEncryptedP99Milliseconds: ($re[0].resources.besideEcho.duringTransfers.roundTrip.p99Nanoseconds / 1e6),
          runnerPeakMiB: ([$sp[0], $se[0], $rp[0], $re[0]] | map(.memory.runnerPeakResidentBytes) | max / 1048576),
          reflectorPeakMiB: ([$sp[0], $se[0], $rp[0], $re[0]] | map(.memory.reflectorPeakResidentBytes // 0) | max / 1048576)}
         | .streamsOverRawTCP = (.streamsPlain / .rawTCP8Streams)
         | .resourceOverRawTCP = (.resourcePlain / .rawTCP8Streams)
         | .streamsEncryptedOverPlain = (.streamsEncrypted / .streamsPlain)
         | .resourceEncryptedOverPlain = (.resourceEncrypted / .resourcePlain)'
done | jq -s --arg date "$stamp" --arg commit "$(git rev-parse HEAD 2>/dev/null || echo unknown)" \
    --arg cpu "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')" --argjson cpus "$(nproc)" \
    --arg testRunner "$("$bin/test-runner" --version 2>&1 | head -1)" --arg iperf3 "$(iperf3 --version | head -1)" \
    '{schemaVersion: 1, date: $date, commit: $commit, cpu: $cpu, cpus: $cpus, testRunner: $testRunner,
      iperf3: $iperf3, units: "MB/s (10^6 bytes a second), milliseconds, MiB", rounds: .,
      ranges: (. as $r | [.[0] | keys[] | select(. != "round")] | map({key: ., value: {min: ([$r[][.]] | min),
        max: ([$r[][.]] | max)}}) | from_entries)}' > "$results/summary.json"

jq -r '.ranges | to_entries[] | "\(.key): \(.value.min * 100 | round / 100) - \(.value.max * 100 | round / 100)"' \
    "$results/summary.json" | tee "$results/table.txt"
echo "wrote $results"
