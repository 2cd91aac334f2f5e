#!/usr/bin/env bash
# Resources sent one after another on one session, two builds of the reflector taking turns (before, after, before,
# ...): the runner's rate over the measured transfers, the reflector's CPU over its whole run (user and system, in
# ticks of 10 ms, from /proc/PID/stat; it hashes each file it receives with SHA-256 to confirm it, the same work in
# both builds) and its page faults. ROUNDS rounds (default 5), COUNT transfers of BYTES each (default 48 of 8 MiB)
# after one warm-up, plaintext, loopback, files and landing folder on /dev/shm. One test-runner, RUNNER's (default
# AFTER's), sends for both. One line a run to standard output.
#
#   BEFORE=DIR AFTER=DIR [RUNNER=DIR] results/resources-2026-12-01-evening/sequence.sh   (each DIR a release bin folder)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
before=${BEFORE:?"BEFORE: the bin folder of the release build to compare against"}
after=${AFTER:?"AFTER: the bin folder of the release build under test"}
runner=${RUNNER:-$after}
for tool in jq timeout; do command -v "$tool" >/dev/null || { echo "missing: $tool" >&2; exit 2; }; done
# shellcheck source=../../Scripts/loopback-tools.sh
. "$here/../../Scripts/loopback-tools.sh"
pin_ends none
scratch=$(mktemp -d /dev/shm/sequence.XXXXXX)
trap 'stop_reflector; rm -rf "$scratch"' EXIT
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //') x $(nproc); kernel $(uname -r)"
echo "free page reporting order: $(cat /sys/module/page_reporting/parameters/page_reporting_order 2>/dev/null || echo none)"
run() {  # LABEL BIN
    bin=$2  # start_reflector's
    rm -rf "$scratch/landing"; mkdir -p "$scratch/landing"
    start_reflector "$scratch/reflector.log" --encryption none --resource-directory "$scratch/landing"
    TMPDIR=$scratch timeout 600 "$runner/test-runner" run --connect "127.0.0.1:$reflector_port" --test resource \
        --bytes "${BYTES:-8388608}" --count "${COUNT:-48}" --warmup 1 --encryption none --duration 60 --name sequence \
        --output "$scratch/run.json" > "$scratch/runner.txt" 2>&1 || cat "$scratch/runner.txt" >&2
    local stat
    read -r -a stat < "/proc/$reflector_pid/stat"
    echo "$1 MB/s $(jq '.resources.bytesPerSecond / 1e6 | floor' "$scratch/run.json") reflectorCPUticks $((stat[13] + stat[14])) faults ${stat[9]}"
    stop_reflector
}
for round in $(seq "${ROUNDS:-5}"); do
    run before "$before"
    run after "$after"
done
