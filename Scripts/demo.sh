#!/usr/bin/env bash
# The main job: the benchmark tools against each other on this host. A reflector advertises over DNS-SD,
# echoes every message, stream and resource and runs a raw TCP echo server; test-runner finds it, runs a
# sweep of message sizes through PeerConnectivity (data), the same sweep over plain TCP (raw-tcp), an
# unreliable sweep (UDP datagrams), echoed streams and resources confirmed by SHA-256, writes each result as
# JSON into results/demo/, and compares them (a table here, an SVG chart beside the JSON).
# Env: COUNT (measured messages per size, default 200), CONFIGURATION (debug, the default, or release).
set -euo pipefail
cd "$(dirname "$0")/.."
Scripts/setup.sh
export AVAHI_COMPAT_NOWARN=1
configuration=${CONFIGURATION:-debug}
swift build -c "$configuration" --product reflector
swift build -c "$configuration" --product test-runner
bin=$(swift build -c "$configuration" --show-bin-path)
service="pcb-demo-$$"
service=${service:0:15}
out=results/demo
mkdir -p "$out"
log=$(mktemp)

"$bin/reflector" --service "$service" --name demo-reflector --raw-echo-port 0 >"$log" 2>&1 &
reflector=$!
trap 'kill "$reflector" 2>/dev/null || true; rm -f "$log"' EXIT
for _ in $(seq 100); do grep -q ' ready ' "$log" && break; sleep 0.1; done
grep ' ready ' "$log" || { echo "the reflector did not start:" >&2; cat "$log" >&2; exit 1; }

echo "== encryption: required, the default of both tools (TLS 1.3; the reflector's log below names each link)"
target=(--service "$service" --reflector demo-reflector --name demo)
# shellcheck disable=SC2054 # the commas separate sizes within one argument
plan=("${target[@]}" --size 1,64,1024,65536,1048576 --count "${COUNT:-200}" --warmup 20)
echo "== data: PeerConnectivity messages, found by DNS-SD"
"$bin/test-runner" run --test data "${plan[@]}" --output "$out/data.json" --quiet
echo "== raw-tcp: the same plan over plain TCP (the reflector's raw echo port, from its discoveryInfo)"
"$bin/test-runner" run --test raw-tcp "${plan[@]}" --output "$out/raw-tcp.json" --quiet
echo "== data, unreliable: the same sweep as UDP datagrams (up to 65,000 bytes each)"
"$bin/test-runner" run --test data --mode unreliable "${target[@]}" --size 1,64,1024,16384,65000 \
    --count "${COUNT:-200}" --warmup 20 --timeout 1 --output "$out/data-unreliable.json" --quiet
echo "== stream: 4 streams of 4 MiB at once, each echoed back and checked byte for byte"
"$bin/test-runner" run --test stream "${target[@]}" --streams 4 --bytes 4194304 --output "$out/stream.json" \
    --quiet
echo "== resource: a 16 MiB file twice, each confirmed by the reflector's SHA-256"
"$bin/test-runner" run --test resource "${target[@]}" --bytes 16777216 --count 2 \
    --output "$out/resource.json" --quiet
echo "== report"
"$bin/test-runner" report "$out/data.json" "$out/data-unreliable.json" "$out/raw-tcp.json" "$out/stream.json" \
    "$out/resource.json" --svg "$out/report.svg" \
    --title "PeerConnectivity against raw TCP on loopback ($configuration build)"

kill -TERM "$reflector"
wait "$reflector"   # exits 0 after saying goodbye to its runners
echo "== reflector log"
cat "$log"
if [ "$configuration" = debug ]; then
    echo "(debug build: PeerConnectivity runs several times slower than in release; Scripts/bench-loopback.sh measures a release build)"
fi
