#!/usr/bin/env bash
# The 64-byte echo while 16 MiB messages cross, and idle (EchoBesideLarge64B), of the build where the benchmark came
# (BEFORE_TREE: a checkout of fd87b00 with its Benchmarks package built in release) and of this tree, alternating,
# ROUNDS rounds (default 3); each run's table in OUT (default this folder), and the p50 and p99 of each in summary.txt.
# Run from the repository: BEFORE_TREE=DIR results/large-messages-2026-12-01/ab.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
before=${BEFORE_TREE:?"BEFORE_TREE: a checkout of fd87b00, its Benchmarks package built"}
out=${OUT:-results/large-messages-2026-12-01}; rounds=${ROUNDS:-3}
mkdir -p "$out"
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //') x $(nproc); before: $(git -C "$before" rev-parse --short HEAD); after: $(git rev-parse --short HEAD)" | tee "$out/summary.txt"
# p50 and p99 of one benchmark's wall clock in a markdown table
pick() { awk -v k="### EchoBesideLarge64B.$1" '$0 == k {f=1} f && /Time \(wall clock\)/ {split($0,a,"|"); gsub(/ /,"",a[5]); gsub(/ /,"",a[8]); print "p50 " a[5] " p99 " a[8]; exit}' "$2"; }
for round in $(seq "$rounds"); do
    for build in before after; do
        tree=.; [[ $build == before ]] && tree=$before
        swift package --package-path "$tree/Benchmarks" benchmark --filter 'EchoBesideLarge64B.*' --no-progress \
            --format markdown > "$out/$build-$round.md" 2>&1
        echo "round $round $build: during 16 MiB $(pick during16MiB "$out/$build-$round.md") µs; idle $(pick idle "$out/$build-$round.md") µs" | tee -a "$out/summary.txt"
    done
done
