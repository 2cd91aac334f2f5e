#!/usr/bin/env bash
# A loopback benchmark: release builds of reflector and test-runner, the plan of
# Scripts/bench-plan.sh (data sweep 1 B to 1 MiB reliable, the same over raw TCP, unreliable up to 65,000 B,
# 8 streams, a 256 MiB resource), each written to results/runs/<UTC date>-<test>-<name>.json, then the comparison
# (table, and results/runs/report.svg over these runs).
# Env: NAME (run name, default loopback), and the plan's (see Scripts/bench-plan.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
Scripts/setup.sh
export AVAHI_COMPAT_NOWARN=1
bin=$(Scripts/build-tools.sh)
name=${NAME:-loopback}
service="pcb-bench-$$"
service=${service:0:15}
log=$(mktemp)
written=$(mktemp)

"$bin/reflector" --service "$service" --raw-echo-port 0 >"$log" 2>&1 &
reflector=$!
trap 'kill "$reflector" 2>/dev/null || true; rm -f "$log" "$written"' EXIT
for _ in $(seq 100); do grep -q ' ready ' "$log" && break; sleep 0.1; done
grep ' ready ' "$log" || { echo "the reflector did not start:" >&2; cat "$log" >&2; exit 1; }

# shellcheck source=Scripts/bench-plan.sh
. Scripts/bench-plan.sh
run_prefix=()
target=(--service "$service")
run_plan
mapfile -t files <"$written"
"$bin/test-runner" report "${files[@]}" --svg results/runs/report.svg \
    --title "PeerConnectivity against raw TCP on loopback (release build)"
kill -TERM "$reflector"
wait "$reflector"
