#!/usr/bin/env bash
# Two builds' tools taking turns through Scripts/bench-transfers.sh (8 streams one way, 1 GiB in all; a 1 GiB resource
# with 100 probes a second beside it; plaintext and encrypted; iperf3 -P 8 in each round), PAIRS runs of each, 5
# rounds a run; then summarize.py compares each pair's medians. Run from the repository, as root:
#   BEFORE=DIR AFTER=DIR [PAIRS=3] [OUT=DIR] results/transfers-2026-12-02-write-turn/ab.sh
# DIR: folders holding release builds of reflector and test-runner. TMPDIR=/dev/shm is set for the runner's file.
set -euo pipefail
cd "$(dirname "$0")/../.."
: "${BEFORE:?a folder with the first build}" "${AFTER:?a folder with the second build}"
out=${OUT:-results/runs/transfers-ab-$(date -u +%F)}
for pair in $(seq 1 "${PAIRS:-3}"); do
    for side in before after; do
        bin=$BEFORE; [[ $side == after ]] && bin=$AFTER
        echo "pair $pair: $side ($bin)" >&2
        BIN=$bin TMPDIR=/dev/shm RESULTS_DIR=$out/$side Scripts/bench-transfers.sh 5 > /dev/null
    done
done
python3 "$(dirname "$0")/summarize.py" "$out" | tee "$out/ab.txt"
