#!/usr/bin/env bash
# Five rounds, each: sockperf ping-pong (64 B, 3 s) with its server on CPU 0 and its client on CPU 1, then the
# library's round-trip benchmarks (RoundTrip64B eventLoop, responder, plain) with PIN=split, first from a
# checkout of the build before (BEFORE_TREE, its Benchmarks package built) and then from this one; p50 wall
# clock, each over that round's sockperf.
# Run from the repository: BEFORE_TREE=DIR results/rtt-pinned-2026-12-01/ab-rtt.sh (OUT=DIR for another folder).
set -euo pipefail
cd "$(dirname "$0")/../.."
before=${BEFORE_TREE:?"BEFORE_TREE: a checkout of the build to compare with"}
out=${OUT:-results/rtt-pinned-2026-12-01}; mkdir -p "$out"; : > "$out/summary.txt"
taskset -c 0 sockperf server --tcp -i 127.0.0.1 -p 15998 > /dev/null 2>&1 &
server=$!
trap 'kill $server' EXIT
sleep 1
p50() { awk -v k="RoundTrip64B.$1" '$0 ~ k {f=1} f && /Time \(wall clock\)/ {split($0,a,"|"); gsub(/ /,"",a[5]); print a[5]; exit}' "$2"; }
for round in 1 2 3 4 5; do
    sp=$(taskset -c 1 sockperf ping-pong --tcp -i 127.0.0.1 -p 15998 -m 64 -t 3 --full-rtt 2>&1 |
        awk '/percentile 50.000/{print $NF}')
    for build in before after; do
        tree=.
        [[ $build == before ]] && tree=$before
        PIN=split swift package --package-path "$tree/Benchmarks" benchmark \
            --filter 'RoundTrip64B.(eventLoop|plain|responder)' --no-progress --format markdown \
            > "$out/bench-$round-$build.md" 2>&1
        for kind in eventLoop responder plain; do
            v=$(p50 "$kind" "$out/bench-$round-$build.md")
            echo "round $round sockperf $sp $build $kind $v ratio $(echo "scale=2; $v/$sp" | bc)" | tee -a "$out/summary.txt"
        done
    done
done
