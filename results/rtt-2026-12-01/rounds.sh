#!/usr/bin/env bash
# Five rounds, each: sockperf ping-pong (64 B, 3 s; server and client unpinned, or on CPUs 0 and 1 with
# PIN=split), then the library's round-trip benchmarks in one run (RoundTrip64B rawTCP, eventLoop, responder,
# plain; with PIN=split, each end's event loop on its own CPU); p50 wall clock, each over that round's sockperf
# and over the benchmark's own raw TCP of the same run.
# Run from the repository, its Benchmarks package built: results/rtt-2026-12-01/rounds.sh (OUT=DIR for another folder).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-results/rtt-2026-12-01}; mkdir -p "$out"; : > "$out/summary.txt"
server_cpu=(); client_cpu=()
if [[ ${PIN:-} == split ]]; then server_cpu=(taskset -c 0); client_cpu=(taskset -c 1); fi
${server_cpu[@]+"${server_cpu[@]}"} sockperf server --tcp -i 127.0.0.1 -p 15998 > /dev/null 2>&1 &
server=$!
trap 'kill $server' EXIT
sleep 1
p50() { awk -v k="RoundTrip64B.$1" '$0 ~ k {f=1} f && /Time \(wall clock\)/ {split($0,a,"|"); gsub(/ /,"",a[5]); print a[5]; exit}' "$2"; }
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //') x $(nproc); commit: $(git rev-parse --short HEAD); PIN=${PIN:-none}" | tee -a "$out/summary.txt"
for round in 1 2 3 4 5; do
    sp=$(${client_cpu[@]+"${client_cpu[@]}"} sockperf ping-pong --tcp -i 127.0.0.1 -p 15998 -m 64 -t 3 --full-rtt 2>&1 |
        awk '/percentile 50.000/{print $NF}')
    swift package --package-path Benchmarks benchmark \
        --filter 'RoundTrip64B.(rawTCP|eventLoop|plain|responder)' --no-progress --format markdown \
        > "$out/bench-$round.md" 2>&1
    raw=$(p50 rawTCP "$out/bench-$round.md")
    for kind in rawTCP eventLoop responder plain; do
        v=$(p50 "$kind" "$out/bench-$round.md")
        echo "round $round sockperf $sp $kind $v overSockperf $(echo "scale=2; $v/$sp" | bc) overRawTCP $(echo "scale=2; $v/$raw" | bc)" | tee -a "$out/summary.txt"
    done
done
