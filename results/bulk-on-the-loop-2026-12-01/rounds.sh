#!/usr/bin/env bash
# Two builds of the tools taking turns at bulk on loopback: ROUNDS rounds (default 6), each round one
# `test-runner run --test bulk -t 5 -i 0 EXTRA --encryption none`, then `required`, with BEFORE's reflector and
# runner, then AFTER's. Each line: the round, the build, the encryption, the rate (the direction that ran), and
# each process's minor page faults and CPU ticks (10 ms) over the run, from /proc/PID/stat.
#
#   BEFORE=DIR AFTER=DIR [ROUNDS=N] [EXTRA="-R" | "-P 4"] results/bulk-on-the-loop-2026-12-01/rounds.sh
#   (each DIR holds release builds of reflector and test-runner)
set -euo pipefail
before=${BEFORE:?"BEFORE: a folder with release builds of reflector and test-runner"}
after=${AFTER:?"AFTER: the same for the other build"}
rounds=${ROUNDS:-6}
run() {  # BIN ENCRYPTION
    local bin=$1 encryption=$2 work reflector port runner r0 r1 w0 w1
    work=$(mktemp -d)
    "$bin/reflector" --no-dnssd --bind 127.0.0.1 --port 0 --udp-ports ephemeral --encryption optional \
        > "$work/reflector.log" 2>&1 &
    reflector=$!
    for _ in $(seq 100); do grep -q ' ready ' "$work/reflector.log" && break; sleep 0.1; done
    port=$(sed -n 's/.* ready .* port=\([0-9]*\) .*/\1/p' "$work/reflector.log")
    counts() { awk '{print $10, $14 + $15}' "/proc/$1/stat"; }
    r0=$(counts "$reflector")
    # shellcheck disable=SC2086
    "$bin/test-runner" run --connect "127.0.0.1:$port" --name bulk --quiet --output "$work/run.json" \
        --test bulk -t 5 -i 0 ${EXTRA:-} --encryption "$encryption" > /dev/null &
    runner=$!
    sleep 0.3
    w0=$(counts "$runner"); w1=$w0
    while kill -0 "$runner" 2> /dev/null; do w1=$(counts "$runner" 2> /dev/null || echo "$w1"); sleep 0.1; done
    wait "$runner" || true
    r1=$(counts "$reflector")
    kill "$reflector"; wait "$reflector" 2> /dev/null || true
    python3 - "$work/run.json" "$r0 $r1" "$w0 $w1" << 'PY'
import json, sys
bulk = json.load(open(sys.argv[1]))["bulk"]
direction = bulk.get("forward") or bulk.get("reverse")
gb = direction["bytesPerSecond"] * direction["seconds"] / 1e9
r = [int(x) for x in sys.argv[2].split()]; w = [int(x) for x in sys.argv[3].split()]
print(f"rate {direction['bytesPerSecond'] / 1e9:.2f} GB/s; reflector {r[2] - r[0]} faults, "
      f"{(r[3] - r[1]) / 100 / gb:.3f} CPU s a GB; runner {(w[3] - w[1]) / 100 / gb:.3f} CPU s a GB")
PY
    rm -rf "$work"
}
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //') x $(nproc); kernel $(uname -r)"
for round in $(seq "$rounds"); do
    for encryption in none required; do
        for build in before after; do
            bin=$before; [ "$build" = after ] && bin=$after
            echo "$round $build $encryption $(run "$bin" "$encryption")"
        done
    done
done
