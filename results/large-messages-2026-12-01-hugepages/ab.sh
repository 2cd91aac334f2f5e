#!/usr/bin/env bash
# The 64-byte echo while 16 MiB messages cross, and idle (EchoBesideLarge64B), without and with the 2 MiB page hint
# on a large message's mapping (Sources/PeerConnectivityTransport/Platform/Platform+Memory.swift), alternating,
# ROUNDS rounds (default 3), in one checkout: TREE, a clone at the commit that added the hint (its parent has the
# file as it was). Each run's table in OUT (default this folder), the p50 and p99 of each in summary.txt.
# Run from the repository: TREE=CLONE results/large-messages-2026-12-01-hugepages/ab.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
tree=${TREE:?"TREE: a clone at the commit that added the page hint"}
out=${OUT:-$PWD/results/large-messages-2026-12-01-hugepages}; rounds=${ROUNDS:-3}
file=Sources/PeerConnectivityTransport/Platform/Platform+Memory.swift
mkdir -p "$out"
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //') x $(nproc); tree: $(git -C "$tree" rev-parse --short HEAD); transparent huge pages: $(cat /sys/kernel/mm/transparent_hugepage/enabled)" | tee "$out/summary.txt"
# p50 and p99 of one benchmark's wall clock in a markdown table
pick() { awk -v k="### EchoBesideLarge64B.$1" '$0 == k {f=1} f && /Time \(wall clock\)/ {split($0,a,"|"); gsub(/ /,"",a[5]); gsub(/ /,"",a[8]); print "p50 " a[5] " p99 " a[8]; exit}' "$2"; }
for round in $(seq "$rounds"); do
    for build in without with; do
        if [[ $build == without ]]; then git -C "$tree" checkout -q HEAD~1 -- "$file"; else git -C "$tree" checkout -q HEAD -- "$file"; fi
        swift build --package-path "$tree/Benchmarks" -c release --product SessionBenchmarks > /dev/null
        swift package --package-path "$tree/Benchmarks" benchmark --target SessionBenchmarks \
            --filter 'EchoBesideLarge64B.*' --no-progress --format markdown > "$out/$build-$round.md" 2>&1
        echo "round $round $build: during 16 MiB $(pick during16MiB "$out/$build-$round.md") µs; idle $(pick idle "$out/$build-$round.md") µs" | tee -a "$out/summary.txt"
    done
done
git -C "$tree" checkout -q HEAD -- "$file"
