#!/usr/bin/env bash
# One 5 s bulk run on loopback: BIN's reflector (--encryption optional) and runner (--encryption ENCRYPTION);
# prints the rate, and for each process its minor page faults and CPU ticks (10 ms) over the run (/proc/PID/stat).
# EXTRA adds runner options ("-R", "-P 4").   faults.sh BIN none|required
set -euo pipefail
bin=$1; enc=$2
work=$(mktemp -d); trap 'kill "${reflector:-0}" 2> /dev/null || true; rm -rf "$work"' EXIT
"$bin/reflector" --no-dnssd --bind 127.0.0.1 --port 0 --udp-ports ephemeral --encryption optional > "$work/r.log" 2>&1 &
reflector=$!
for _ in $(seq 100); do grep -q ' ready ' "$work/r.log" && break; sleep 0.1; done
port=$(sed -n 's/.* ready .* port=\([0-9]*\) .*/\1/p' "$work/r.log")
stat() { awk '{print $10, $14+$15}' /proc/$1/stat; }
r0=$(stat $reflector)
# shellcheck disable=SC2086
"$bin/test-runner" run --connect "127.0.0.1:$port" --name f --quiet --output "$work/o.json" --test bulk -t 5 -i 0 ${EXTRA:-} --encryption $enc > /dev/null &
runner=$!
sleep 0.3; w0=$(stat $runner); w1=$w0
while kill -0 $runner 2>/dev/null; do w1=$(stat $runner 2>/dev/null || echo "$w1"); sleep 0.1; done
wait $runner || true
r1=$(stat $reflector)
rate=$(python3 -c "import json;b=json.load(open('$work/o.json'))['bulk'];print(round((b.get('forward') or b.get('reverse'))['bytesPerSecond']/1e9,2))")
echo "$enc rate ${rate} GB/s; reflector faults,ticks: $(echo $r0 $r1 | awk '{print $3-$1, $4-$2}'); runner: $(echo $w0 $w1 | awk '{print $3-$1, $4-$2}')"
