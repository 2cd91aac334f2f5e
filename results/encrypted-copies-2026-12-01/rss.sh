#!/usr/bin/env bash
# The reflector's peak RSS (VmHWM) while 8 runners at once each run 5 s of encrypted bulk.   rss.sh BIN
set -euo pipefail
bin=$1
work=$(mktemp -d); trap 'kill "${reflector:-0}" 2> /dev/null || true; rm -rf "$work"' EXIT
"$bin/reflector" --no-dnssd --bind 127.0.0.1 --port 0 --udp-ports ephemeral --encryption required > "$work/r.log" 2>&1 &
reflector=$!
for _ in $(seq 100); do grep -q ' ready ' "$work/r.log" && break; sleep 0.1; done
port=$(sed -n 's/.* ready .* port=\([0-9]*\) .*/\1/p' "$work/r.log")
pids=()
for i in $(seq 8); do
    "$bin/test-runner" run --connect "127.0.0.1:$port" --name m --quiet --output "$work/o$i.json" --test bulk -t 5 -i 0 > /dev/null &
    pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
echo "$(basename "$bin") $(grep -E 'VmHWM|VmRSS' /proc/$reflector/status | tr -s ' ' | tr '\n' ' ')"
