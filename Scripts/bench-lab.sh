#!/usr/bin/env bash
# The benchmark between two hosts of the lab (docs/LAB.md): a 2-host lab of its own (LAB_LINK=bridge, no
# shaping unless SHAPE is given), the reflector on A, the plan of Scripts/bench-plan.sh run by test-runner on
# B (finding the reflector by DNS-SD), each result written to results/runs/<UTC date>-<test>-<name>.json, then
# the comparison (table, and results/runs/report-<name>.svg). The lab goes down whatever happens.
# Env: NAME (run name, default lab), LAB_LINK (bridge), SHAPE (e.g. "rate 100mbit", applied to B),
# LAB_BIN (folder of reflector and test-runner; default: swift build -c release), and the plan's.
set -euo pipefail
cd "$(dirname "$0")/.."
export AVAHI_COMPAT_NOWARN=1
export LAB_PREFIX=p2pbn LAB_DIR=/run/p2p-lab-bench LAB_LINK=${LAB_LINK:-bridge}
lab=Scripts/lab.sh
Scripts/setup.sh --lab >/dev/null
bin=${LAB_BIN:-}
if [ -z "$bin" ]; then
    bin=$(Scripts/build-tools.sh)
fi
name=${NAME:-lab}
written=$(mktemp)
log=$(mktemp)
cleanup() {
    "$lab" down >/dev/null || true
    rm -f "$written" "$log"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
"$lab" down >/dev/null
"$lab" up 2
a=$("$lab" hosts | sed -n 1p)
b=$("$lab" hosts | sed -n 2p)
if [ -n "${SHAPE:-}" ]; then
    # shellcheck disable=SC2086 # SHAPE is words on purpose: "rate 100mbit"
    "$lab" shape "$b" $SHAPE
fi
"$lab" exec "$a" "$bin/reflector" --name "bench-$name" --raw-echo-port 7101 --port 7100 >"$log" 2>&1 &
for _ in $(seq 100); do grep -q ' ready ' "$log" && break; sleep 0.1; done
grep ' ready ' "$log" || { echo "the reflector did not start:" >&2; cat "$log" >&2; exit 1; }

# shellcheck source=Scripts/bench-plan.sh
. Scripts/bench-plan.sh
run_prefix=("$lab" exec "$b")
target=(--reflector "bench-$name")
run_plan
mapfile -t files <"$written"
"$bin/test-runner" report "${files[@]}" --svg "results/runs/report-$name.svg" \
    --title "PeerConnectivity against raw TCP between two lab hosts ($LAB_LINK link, release build)"
