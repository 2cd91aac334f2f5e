#!/usr/bin/env bash
# The data test's 64-byte round trip, one message in flight, before and after the runner sends each next
# message as the echo's reply: alternating rounds on loopback, sockperf ping-pong in each round.
# Usage: ab-rtt.sh ROUNDS OUTDIR   (BEFORE and AFTER: folders holding release builds of test-runner;
#        REFLECTOR: one reflector build, the same for both)
set -u
rounds=$1 out=$2
mkdir -p "$out"
: "${BEFORE:?} ${AFTER:?} ${REFLECTOR:?}"
run_one() { # label bindir round encryption
    local label=$1 bin=$2 r=$3 encryption=$4
    "$REFLECTOR" --no-dnssd --bind 127.0.0.1 --port 0 --encryption optional --no-raw-echo >"$out/reflector.log" 2>&1 &
    local rp=$!
    for _ in $(seq 100); do grep -q "ready" "$out/reflector.log" && break; sleep 0.1; done
    local port
    port=$(grep -o ' port=[0-9]*' "$out/reflector.log" | head -1 | cut -d= -f2)
    /usr/bin/time -f "%w %c %U %S" -o "$out/time-$label-$r.txt" "$bin/test-runner" run --connect "127.0.0.1:$port" \
        --name ab --quiet --output "$out/$label-$r.json" --test data --size 64 --count "${COUNT:-20000}" \
        --warmup 2000 --encryption "$encryption" >/dev/null 2>&1
    kill "$rp"; wait "$rp" 2>/dev/null
    python3 - "$out/$label-$r.json" "$out/time-$label-$r.txt" "$label" "$r" <<'PY'
import json, sys
result = json.load(open(sys.argv[1]))["results"][0]
voluntary, involuntary, user, system = open(sys.argv[2]).read().split()[-4:]
trips = result["sent"] + 2000
print(f"{sys.argv[3]} round {sys.argv[4]}: p50 {result['roundTrip']['p50Nanoseconds'] / 1e3:.1f} us, "
      f"echoed {result['echoed']} of {result['sent']}, lost {result['lost']}; runner "
      f"{int(voluntary) / trips:.2f} voluntary switches and "
      f"{(float(user) + float(system)) / trips * 1e6:.1f} us CPU a round trip (user {user} s, system {system} s)")
PY
}
for r in $(seq "$rounds"); do
    sockperf server --tcp -i 127.0.0.1 -p 11111 >/dev/null 2>&1 & sp=$!
    sleep 0.5
    sockperf ping-pong --tcp -i 127.0.0.1 -p 11111 -t 3 -m 64 --full-rtt 2>&1 | grep -E "percentile 50.000" | sed "s/^/sockperf round $r: /"
    kill $sp; wait $sp 2>/dev/null
    run_one before "$BEFORE" "$r" none
    run_one after "$AFTER" "$r" none
    run_one before-encrypted "$BEFORE" "$r" required
    run_one after-encrypted "$AFTER" "$r" required
done
