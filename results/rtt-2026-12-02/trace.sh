#!/usr/bin/env bash
# Where a 64-byte round trip's time goes, for raw blocking TCP, the bare event loop, the library answering in the
# read and the library with a task awaiting each echo: `RoundTripCounts KIND 20000` (both ends in one process)
# under `perf record` of every system call's entry and exit, then split.py: each busy thread's user-space time
# and each system call's time, per round trip. Tracing adds its own cost to every system call (about the same
# for every kind: three calls a round trip at each end), so the figures compare kinds, not absolute speed.
# Run from the repository, its Benchmarks package built, as root (perf tracepoints):
#   results/rtt-2026-12-02/trace.sh   (ROUNDS=N, default 3, the kinds taking turns; OUT=FILE for another summary)
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-results/rtt-2026-12-02/trace.txt}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //') x $(nproc); commit: $(git rev-parse --short HEAD); kernel: $(uname -r)" > "$out"
for round in $(seq 1 "${ROUNDS:-3}"); do
for kind in rawTCP eventLoop responder plain; do
    perf record -q -e raw_syscalls:sys_enter,raw_syscalls:sys_exit -o "$work/$kind.data" -- \
        Benchmarks/.build/release/RoundTripCounts "$kind" 20000 > /dev/null
    perf script -i "$work/$kind.data" > "$work/$kind.txt" 2> /dev/null
    { echo "== round $round: $kind"; python3 results/rtt-2026-12-02/split.py "$work/$kind.txt"; } >> "$out"
done
done
cat "$out"
