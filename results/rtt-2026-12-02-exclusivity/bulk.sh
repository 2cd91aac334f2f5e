#!/usr/bin/env bash
# One stream of bulk one way (test-runner run --test bulk -t 5 -i 0), plaintext and encrypted (TLS 1.3), against a
# reflector of the same build on 127.0.0.1 (--encryption optional), release builds with Swift's run-time exclusivity
# checks and without them taking turns; unpinned. Prints each run's rate in MB/s and, last, each kind's rate without
# the checks over the rate with them, round by round.
#
# Usage: [ROUNDS=N] [CHECKED=DIR] [UNCHECKED=DIR] OUT=DIR results/rtt-2026-12-02-exclusivity/bulk.sh
#   CHECKED, UNCHECKED: as tools.sh. Writes OUT/BUILD-KIND-ROUND.json and OUT/rounds.txt.
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${ROUNDS:-5}
out=${OUT:?OUT=DIR}
mkdir -p "$out"
checked=${CHECKED:-$(EXCLUSIVITY=checked Scripts/build-tools.sh)}
unchecked=${UNCHECKED:-$(Scripts/build-tools.sh)}
# shellcheck source=Scripts/loopback-tools.sh
. Scripts/loopback-tools.sh
trap stop_reflector EXIT
one() { # BUILD FOLDER KIND ROUND: prints the run's rate in MB/s
    bin=$2
    local encryption=none
    [ "$3" = tls ] && encryption=required
    start_reflector "$out/reflector.log" --encryption optional
    "$bin/test-runner" run --connect "127.0.0.1:$reflector_port" --name exclusivity --quiet \
        --output "$out/$1-$3-$4.json" --test bulk -t 5 -i 0 --encryption "$encryption" >&2
    stop_reflector
    rm -f "$out/reflector.log"
    python3 -c "import json,sys; print(round(json.load(open(sys.argv[1]))['bulk']['forward']['bytesPerSecond']/1e6))" \
        "$out/$1-$3-$4.json"
}
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //') x $(nproc); commit: $(git rev-parse --short HEAD)" | tee "$out/rounds.txt"
for r in $(seq "$rounds"); do
    if ((r % 2)); then order="checked unchecked"; else order="unchecked checked"; fi
    for kind in plain tls; do
        for build in $order; do
            folder=$checked
            [ "$build" = unchecked ] && folder=$unchecked
            echo "round $r $kind $build $(one "$build" "$folder" "$kind" "$r")"
        done
    done
done | tee -a "$out/rounds.txt"
python3 - "$out/rounds.txt" <<'PY' | tee -a "$out/rounds.txt"
import collections, statistics, sys
rate = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    f = line.split()
    if f[0] == "round":
        rate[(int(f[1]), f[2])][f[3]] = float(f[4])
for kind in ("plain", "tls"):
    ratios = [v["unchecked"] / v["checked"] for (r, k), v in sorted(rate.items()) if k == kind]
    print(f"{kind}: unchecked over checked {min(ratios):.2f}-{max(ratios):.2f} (median {statistics.median(ratios):.2f})")
PY
