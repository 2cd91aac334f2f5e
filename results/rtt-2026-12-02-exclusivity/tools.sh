#!/usr/bin/env bash
# The tools' 64-byte round trip (test-runner --test data --size 64 --count 20000 --warmup 2000, plaintext, against a
# reflector of the same build on 127.0.0.1), release builds with Swift's run-time exclusivity checks and without
# them taking turns, each round beside sockperf's ping-pong p50 (64 B, 3 s). Unpinned, or with PIN=split the servers
# (reflector, sockperf's) on CPU 0 and the clients on CPU 1 (Scripts/loopback-tools.sh, pin_ends).
#
# Usage: [ROUNDS=N] [PIN=split] [CHECKED=DIR] [UNCHECKED=DIR] OUT=DIR results/rtt-2026-12-02-exclusivity/tools.sh
#   CHECKED, UNCHECKED: folders holding both tools (default: EXCLUSIVITY=checked Scripts/build-tools.sh, and
#   Scripts/build-tools.sh). Writes OUT/BUILD-ROUND.json and OUT/rounds.txt; summary.py OUT/rounds.txt sums up.
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${ROUNDS:-10}
out=${OUT:?OUT=DIR}
mkdir -p "$out"
checked=${CHECKED:-$(EXCLUSIVITY=checked Scripts/build-tools.sh)}
unchecked=${UNCHECKED:-$(Scripts/build-tools.sh)}
# shellcheck source=Scripts/loopback-tools.sh
. Scripts/loopback-tools.sh
pin_ends none
"${server_pin[@]}" sockperf server --tcp -i 127.0.0.1 -p 15998 > /dev/null 2>&1 &
sockperf_server=$!
trap 'kill $sockperf_server; stop_reflector' EXIT
sleep 1
one() { # BUILD FOLDER ROUND: prints the run's p50 in microseconds
    bin=$2
    start_reflector "$out/reflector-$1-$3.log" --encryption none
    "${client_pin[@]}" "$bin/test-runner" run --connect "127.0.0.1:$reflector_port" --name exclusivity --quiet \
        --output "$out/$1-$3.json" --test data --size 64 --count 20000 --warmup 2000 --encryption none >&2
    stop_reflector
    rm -f "$out/reflector-$1-$3.log"
    python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['results'][0]; assert r['echoed']==r['sent']; print(r['roundTrip']['p50Nanoseconds']/1e3)" "$out/$1-$3.json"
}
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //') x $(nproc); commit: $(git rev-parse --short HEAD); pinning: $pinning" | tee "$out/rounds.txt"
for r in $(seq "$rounds"); do
    s=$("${client_pin[@]}" sockperf ping-pong --tcp -i 127.0.0.1 -p 15998 -m 64 -t 3 --full-rtt 2>&1 | awk '/percentile 50.000/{print $NF}')
    if ((r % 2)); then order="checked unchecked"; else order="unchecked checked"; fi
    for build in $order; do
        folder=$checked
        [ "$build" = unchecked ] && folder=$unchecked
        echo "round $r sockperf $s $build $(one "$build" "$folder" "$r")"
    done
done | tee -a "$out/rounds.txt"
