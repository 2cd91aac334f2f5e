#!/usr/bin/env bash
# Encrypted against plaintext, the library beside TLS with nothing of the library in it: ROUNDS rounds (default 5)
# against one reflector (--encryption optional, its raw echo port on), each round six runs of the tools:
#   bulk        --test bulk -t 3 --encryption none | required        (one stream one way: the target's figure)
#   data        --test data --size 1048576 --window 4 ... none | required   (1 MiB echoes, 4 in flight)
#   raw-tcp     the same plan over raw TCP: blocking sockets when none; when required, swift-nio-ssl's own
#               handler on a SwiftNIO channel at both ends (the tools' TLS baseline), no session, no framing
#               of the library's
# The ratios are taken within each round. Writes each run's document and summary.txt to OUT (default: here).
#
#   BIN=DIR results/tls-ratio-2026-12-01/rounds.sh   (DIR holds release builds of reflector and test-runner)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${BIN:?"BIN: a folder with release builds of reflector and test-runner"}
out=${OUT:-$here}; rounds=${ROUNDS:-5}
work=$(mktemp -d); trap 'kill "${reflector:-0}" 2> /dev/null || true; rm -rf "$work"' EXIT
"$bin/reflector" --no-dnssd --bind 127.0.0.1 --port 0 --raw-echo-port 0 --udp-ports ephemeral \
    --encryption optional > "$work/reflector.log" 2>&1 &
reflector=$!
for _ in $(seq 100); do grep -q ' ready ' "$work/reflector.log" && break; sleep 0.1; done
port=$(sed -n 's/.* ready .* port=\([0-9]*\) .*/\1/p' "$work/reflector.log")
{
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //') x $(nproc); kernel $(uname -r)"
    echo "tools: $("$bin/test-runner" --version 2>/dev/null | head -1)"
} | tee "$out/summary.txt"
run() {  # NAME OPTIONS...
    local name=$1; shift
    "$bin/test-runner" run --connect "127.0.0.1:$port" --name tls-ratio --quiet --output "$out/$name.json" "$@" > /dev/null
}
echoes=(--size 1048576 --window 4 --count 2000 --warmup 200)
for round in $(seq "$rounds"); do
    run "bulk-none-$round" --test bulk -t 3 -i 0 --encryption none
    run "bulk-required-$round" --test bulk -t 3 -i 0 --encryption required
    run "data-none-$round" --test data "${echoes[@]}" --encryption none
    run "data-required-$round" --test data "${echoes[@]}" --encryption required
    run "raw-tcp-none-$round" --test raw-tcp "${echoes[@]}" --encryption none
    run "raw-tcp-required-$round" --test raw-tcp "${echoes[@]}" --encryption required
    python3 - "$out" "$round" << 'PY' | tee -a "$out/summary.txt"
import json, sys
out, r = sys.argv[1], sys.argv[2]
def load(name): return json.load(open(f"{out}/{name}-{r}.json"))
def bulk(name):
    forward = load(name)["bulk"]["forward"]
    assert not forward["corruptedStreams"] and not forward["failedStreams"], forward
    return forward["bytesPerSecond"] / 1e9
def echoes(name):
    result = load(name)["results"][0]
    assert result["corrupted"] == 0 and result["lost"] == 0, result
    return result["throughput"]["receivedBytesPerSecond"] / 1e9
b0, b1 = bulk("bulk-none"), bulk("bulk-required")
d0, d1 = echoes("data-none"), echoes("data-required")
t0, t1 = echoes("raw-tcp-none"), echoes("raw-tcp-required")
print(f"round {r}: bulk GB/s plain {b0:.2f} encrypted {b1:.2f} ({b1 / b0:.2f}); 1 MiB echoes GB/s: library plain "
      f"{d0:.2f} encrypted {d1:.2f} ({d1 / d0:.2f}); raw TCP {t0:.2f}, raw TLS {t1:.2f} ({t1 / t0:.2f}); "
      f"library encrypted / raw TLS {d1 / t1:.2f}, library plain / raw TCP {d0 / t0:.2f}")
PY
done
