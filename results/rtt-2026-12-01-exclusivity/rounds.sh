#!/usr/bin/env bash
# The 64-byte round trip with Swift's run-time exclusivity checks in the build and without them. The Benchmarks
# package of one checkout runs as is and built with `-Xswiftc -enforce-exclusivity=unchecked` on every module
# (SwiftNIO's and Foundation's included), each build in a scratch folder of its own, the two taking turns for
# ROUNDS rounds (default 6): the RoundTrip64B benchmarks rawTCP, eventLoop and responder, the p50 of the wall clock
# (each over the same run's raw TCP) and of the CPU time a round trip (both ends in one process). The first round
# of each build also builds it.
#
# Usage: [ROUNDS=N] [SOURCE=DIR] [OUT=DIR] [CHECKED_SCRATCH=DIR] [UNCHECKED_SCRATCH=DIR] \
#            results/rtt-2026-12-01-exclusivity/rounds.sh
#   SOURCE  the checkout to run (default: this one); OUT where the runs go (default: this folder);
#   the scratch folders default to SOURCE/Benchmarks/.build-checked and .build-unchecked.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source_dir=$(cd "${SOURCE:-$here/../..}" && pwd)
out=${OUT:-$here}
rounds=${ROUNDS:-6}
mkdir -p "$out"
checked=(--scratch-path "${CHECKED_SCRATCH:-$source_dir/Benchmarks/.build-checked}")
unchecked=(--scratch-path "${UNCHECKED_SCRATCH:-$source_dir/Benchmarks/.build-unchecked}"
    -Xswiftc -enforce-exclusivity=unchecked)
run() { # build, round
    local -n flags=$1
    swift package --package-path "$source_dir/Benchmarks" "${flags[@]}" benchmark \
        --filter 'RoundTrip64B.(rawTCP|eventLoop|responder)' --no-progress --format markdown > "$out/$1-$2.md" 2>&1
}
for round in $(seq 1 "$rounds"); do
    if ((round % 2)); then run checked "$round"; run unchecked "$round"; else run unchecked "$round"; run checked "$round"; fi
done
{
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //') x $(nproc);" \
        "source: $(git -C "$source_dir" rev-parse --short HEAD); rounds: $rounds"
    python3 - "$out" "$rounds" << 'PY'
import statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
kinds = ("rawTCP", "eventLoop", "responder")
def p50(path, kind, metric):
    section = open(path).read().split(f"### RoundTrip64B.{kind}")[1]
    row = next(line for line in section.splitlines() if metric in line)
    return float(row.split("|")[4])
def spread(values):
    return f"{min(values):.2f}-{max(values):.2f} (median {statistics.median(values):.2f})"
builds = ("checked", "unchecked")
wall = {(b, r): {k: p50(f"{out}/{b}-{r}.md", k, "Time (wall clock)") for k in kinds}
        for b in builds for r in range(1, rounds + 1)}
cpu = {(b, r): {k: p50(f"{out}/{b}-{r}.md", k, "Time (total CPU)") for k in kinds}
       for b in builds for r in range(1, rounds + 1)}
for r in range(1, rounds + 1):
    for b in builds:
        print(f"round {r} {b:9} p50 us, wall (CPU): " +
              ", ".join(f"{k} {wall[(b, r)][k]:.0f} ({cpu[(b, r)][k]:.0f})" for k in kinds))
for b in builds:
    for kind in kinds[1:]:
        print(f"{b:9} {kind:9} wall over the run's raw TCP: "
              f"{spread([wall[(b, r)][kind] / wall[(b, r)]['rawTCP'] for r in range(1, rounds + 1)])}")
for kind in kinds:
    print(f"unchecked/checked {kind:9} wall: {spread([wall[('unchecked', r)][kind] / wall[('checked', r)][kind] for r in range(1, rounds + 1)])}"
          f"; CPU: {spread([cpu[('unchecked', r)][kind] / cpu[('checked', r)][kind] for r in range(1, rounds + 1)])}")
PY
} | tee "$out/summary.txt"
