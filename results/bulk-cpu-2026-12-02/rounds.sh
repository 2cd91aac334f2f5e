#!/usr/bin/env bash
# CPU seconds a GB, both ends together, of bulk one way on loopback (one stream, or PARALLEL): iperf3 and the tools taking turns,
# ROUNDS rounds (default 5) of `iperf3 -c 127.0.0.1 -t 5` against `iperf3 -s`, then `test-runner run --test bulk
# -t 5 --encryption none` against `reflector --encryption none`. Each process's CPU (user + system) from /proc
# over the run: the server's or reflector's from its stat before and after, the client's or runner's from its own
# exit (/usr/bin/time). The bytes are the receiver's. Prints one line a run and the ratio within each round.
#
# PARALLEL=N (default 1) runs N streams in both, `-P N`; the bytes and rates are then their sums.
#
#   BIN=DIR [ROUNDS=N] [PARALLEL=N] results/bulk-cpu-2026-12-02/rounds.sh   (DIR: release builds of reflector and test-runner)
set -euo pipefail
bin=${BIN:?"BIN: a folder with release builds of reflector and test-runner"}
rounds=${ROUNDS:-5}
parallel=${PARALLEL:-1}
work=$(mktemp -d)
trap 'kill "${server:-0}" "${reflector:-0}" 2> /dev/null || true; rm -rf "$work"' EXIT
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)
iperf3 -s -p 5299 > /dev/null 2>&1 &
server=$!
"$bin/reflector" --no-dnssd --bind 127.0.0.1 --port 0 --udp-ports ephemeral --encryption none > "$work/reflector.log" 2>&1 &
reflector=$!
for _ in $(seq 100); do grep -q ' ready ' "$work/reflector.log" && break; sleep 0.1; done
port=$(sed -n 's/.* ready .* port=\([0-9]*\) .*/\1/p' "$work/reflector.log")
sleep 0.5
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //') x $(nproc); kernel $(uname -r)"
echo "iperf3: $(iperf3 --version | head -1)"
echo "tools: $("$bin/test-runner" --version 2>&1 | head -1)"
echo "streams: $parallel"
for round in $(seq "$rounds"); do
    s0=$(ticks "$server")
    /usr/bin/time -f "%U %S" -o "$work/client.time" iperf3 -c 127.0.0.1 -p 5299 -t 5 -P "$parallel" -J > "$work/iperf3.json"
    s1=$(ticks "$server")
    r0=$(ticks "$reflector")
    /usr/bin/time -f "%U %S" -o "$work/runner.time" "$bin/test-runner" run --connect "127.0.0.1:$port" --name cpu \
        --quiet --output "$work/runner.json" --test bulk -t 5 -P "$parallel" -i 0 --encryption none > /dev/null
    r1=$(ticks "$reflector")
    python3 - "$round" "$work" "$s0 $s1 $r0 $r1" "$hz" << 'PY'
import json, sys
round_, work, ticks, hz = sys.argv[1], sys.argv[2], [int(x) for x in sys.argv[3].split()], int(sys.argv[4])
def seconds(path): return sum(float(x) for x in open(path).read().split()[-2:])
iperf = json.load(open(f"{work}/iperf3.json"))["end"]["sum_received"]
iperf_gb = iperf["bytes"] / 1e9
iperf_cpu = seconds(f"{work}/client.time") + (ticks[1] - ticks[0]) / hz
forward = json.load(open(f"{work}/runner.json"))["bulk"]["forward"]
tools_gb = forward["receivedBytes"] / 1e9
tools_cpu = seconds(f"{work}/runner.time") + (ticks[3] - ticks[2]) / hz
a, b = iperf_cpu / iperf_gb, tools_cpu / tools_gb
print(f"round {round_}: iperf3 {iperf['bits_per_second'] / 8e9:.2f} GB/s, {a:.3f} CPU s a GB; tools "
      f"{forward['bytesPerSecond'] / 1e9:.2f} GB/s, {b:.3f} CPU s a GB (the runner's whole process, set-up "
      f"included); tools / iperf3: rate {forward['bytesPerSecond'] * 8 / iperf['bits_per_second']:.2f}, "
      f"CPU a GB {b / a:.2f}")
PY
done
