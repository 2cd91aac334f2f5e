#!/usr/bin/env bash
# 1 MiB messages one way (test-runner --test bulk --size 1048576 -t 5), two reflector builds alternating, one runner build.
# Usage: ab-large.sh ROUNDS OUTDIR   (BEFORE, AFTER: reflector builds; RUNNER: a test-runner build)
set -u
rounds=$1 out=$2; mkdir -p "$out"
one() { # label reflector round
    "$2" --no-dnssd --bind 127.0.0.1 --port 0 --encryption optional --no-raw-echo >"$out/reflector.log" 2>&1 &
    local rp=$!
    for _ in $(seq 100); do grep -q "ready" "$out/reflector.log" && break; sleep 0.1; done
    local port; port=$(grep -o ' port=[0-9]*' "$out/reflector.log" | head -1 | cut -d= -f2)
    local t0; t0=$(awk '{print $14+$15}' /proc/$rp/stat)
    "$RUNNER" run --connect "127.0.0.1:$port" --name ab --quiet --output "$out/$1-$3.json" --test bulk \
        --size 1048576 -t 5 -i 0 --encryption none >/dev/null 2>&1
    local t1; t1=$(awk '{print $14+$15}' /proc/$rp/stat)
    local mf; mf=$(awk '{print $10}' /proc/$rp/stat)
    kill "$rp"; wait "$rp" 2>/dev/null
    python3 - "$out/$1-$3.json" "$1" "$3" "$((t1 - t0))" <<'PY'
import json, sys
forward = json.load(open(sys.argv[1]))["bulk"]["forward"]
rate = forward["bytesPerSecond"]
print(f"{sys.argv[2]} round {sys.argv[3]}: {rate / 1e9:.2f} GB/s; reflector CPU {int(sys.argv[4]) / 100:.2f} s "
      f"({int(sys.argv[4]) / 100 / (rate * 5 / 1e9):.2f} s a GB)")
PY
}
for r in $(seq "$rounds"); do
    one before "$BEFORE" "$r"
    one after "$AFTER" "$r"
done
