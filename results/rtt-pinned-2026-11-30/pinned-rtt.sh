#!/usr/bin/env bash
# Five rounds, each: sockperf ping-pong (64 B, 3 s) with its server on CPU 0 and its client on CPU 1, then the
# library's round-trip benchmarks (RoundTrip64B eventLoop, responder, plain) with PIN=split; p50 wall clock.
# Run from the repository: results/rtt-pinned-2026-11-30/pinned-rtt.sh (OUT=DIR for another folder).
cd "$(dirname "$0")/../.."
out=${OUT:-results/rtt-pinned-2026-11-30}; mkdir -p $out; : > $out/summary.txt
taskset -c 0 sockperf server --tcp -i 127.0.0.1 -p 15998 > /dev/null 2>&1 &
srv=$!; sleep 1
for r in 1 2 3 4 5; do
  sp=$(taskset -c 1 sockperf ping-pong --tcp -i 127.0.0.1 -p 15998 -m 64 -t 3 --full-rtt 2>&1 | awk '/percentile 50.000/{print $NF}')
  PIN=split swift package --package-path Benchmarks benchmark --filter 'RoundTrip64B.(eventLoop|plain|responder)' --no-progress --format markdown > $out/bench-$r.md 2>&1
  for k in eventLoop responder plain; do
    v=$(awk -v k="RoundTrip64B.$k" '$0 ~ k {f=1} f && /Time \(wall clock\)/ {split($0,a,"|"); gsub(/ /,"",a[5]); print a[5]; exit}' $out/bench-$r.md)
    echo "round $r sockperf $sp $k $v ratio $(echo "scale=2; $v/$sp" | bc)" | tee -a $out/summary.txt
  done
done
kill $srv
