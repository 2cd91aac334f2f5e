#!/usr/bin/env bash
# A loopback benchmark worth committing: release builds of reflector and test-runner, a data sweep and the
# same sweep over raw TCP, each written to results/<UTC date>-<test>-<name>.json, then the comparison
# (table, and results/report.svg over every result of that name).
# Env: NAME (run name, default loopback), COUNT (default 2000), WARMUP (default 200),
# SIZES (default 1,64,1024,65536,1048576). Extra arguments go to both test-runner runs (e.g. --window 8).
set -euo pipefail
cd "$(dirname "$0")/.."
Scripts/setup.sh
export AVAHI_COMPAT_NOWARN=1
swift build -c release --product reflector
swift build -c release --product test-runner
bin=$(swift build -c release --show-bin-path)
name=${NAME:-loopback}
service="pcb-bench-$$"
service=${service:0:15}
log=$(mktemp)

"$bin/reflector" --service "$service" --raw-echo-port 0 >"$log" 2>&1 &
reflector=$!
trap 'kill "$reflector" 2>/dev/null || true; rm -f "$log"' EXIT
for _ in $(seq 100); do grep -q ' ready ' "$log" && break; sleep 0.1; done
grep ' ready ' "$log" || { echo "the reflector did not start:" >&2; cat "$log" >&2; exit 1; }

plan=(--service "$service" --size "${SIZES:-1,64,1024,65536,1048576}" --count "${COUNT:-2000}"
    --warmup "${WARMUP:-200}" --name "$name" "$@")
"$bin/test-runner" run --test data "${plan[@]}" | tee /dev/stderr | sed -n 's/^wrote //p' >"$log.data"
"$bin/test-runner" run --test raw-tcp "${plan[@]}" | tee /dev/stderr | sed -n 's/^wrote //p' >"$log.raw"
"$bin/test-runner" report "$(cat "$log.data")" "$(cat "$log.raw")" --svg results/report.svg \
    --title "PeerConnectivity against raw TCP on loopback (release build)"
rm -f "$log.data" "$log.raw"
kill -TERM "$reflector"
wait "$reflector"
