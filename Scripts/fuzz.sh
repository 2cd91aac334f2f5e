#!/usr/bin/env bash
# Fuzzes the frame parser and the handshake state machine (Tests/Fuzz/PeerConnectivityFuzz) with libFuzzer
# for a bounded time, then merges the inputs that add coverage into the committed corpus.
#
#   Scripts/fuzz.sh [seconds]     default 60
#
# Builds peer-fuzz with -sanitize=fuzzer,address -D FUZZING into .build-fuzz (kept apart from the
# normal build, where peer-fuzz is a corpus replayer and FuzzCorpusTests replays Tests/FuzzCorpus).
# A crash or broken invariant leaves its input in results/fuzz/crash-*: add it as a named test in a
# FuzzRegressionTests suite beside FuzzCorpusTests, fix the bug, and copy it into the corpus.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
[[ "$seconds" =~ ^[0-9]+$ ]] || { echo "usage: Scripts/fuzz.sh [seconds]" >&2; exit 2; }
scratch=.build-fuzz
corpus=Tests/FuzzCorpus
artifacts=results/fuzz
mkdir -p "$corpus" "$artifacts"

echo "== building peer-fuzz with libFuzzer (release, -sanitize=fuzzer,address)"
swift build -c release --product peer-fuzz --scratch-path "$scratch" \
    -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING -Xswiftc -parse-as-library
binary="$(swift build -c release --scratch-path "$scratch" --show-bin-path)/peer-fuzz"

found=$(mktemp -d)
log=$(mktemp)
trap 'rm -rf "$found" "$log"' EXIT
echo "== fuzzing for ${seconds} s (new inputs in $found, then merged into $corpus)"
set +o pipefail
"$binary" -max_total_time="$seconds" -max_len=4096 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$artifacts/" "$found" "$corpus" 2>&1 | tee "$log" | grep -E "INITED|DONE|pulse|ERROR|crash|deadly" | tail -n 40
status=${PIPESTATUS[0]}
set -o pipefail

echo "== merging inputs that add coverage into $corpus"
before=$(ls "$corpus" | wc -l)
"$binary" -merge=1 -max_len=4096 "$corpus" "$found" 2>&1 | grep -E "MERGE-OUTER: [0-9]+ new files" || true
after=$(ls "$corpus" | wc -l)
echo "corpus: $before -> $after files, $(( $(du -sb "$corpus" | cut -f1) / 1024 )) KiB"
grep -E "^stat::|#[0-9]+ *DONE" "$log" || true
if [ "$status" -ne 0 ]; then
    echo "libFuzzer exited with $status: see $artifacts/ for the input" >&2
    exit "$status"
fi
