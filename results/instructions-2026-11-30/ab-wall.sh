#!/usr/bin/env bash
# The wall clock and CPU time of the same round trips, before and after, alternating: each build's
# RoundTripCounts (release) runs KIND with COUNT round trips; /usr/bin/time gives elapsed, user and system
# seconds and voluntary context switches of the whole process (both ends and the set-up).
# Usage: BEFORE=FILE AFTER=FILE ab-wall.sh ROUNDS COUNT "KINDS" > OUT
set -euo pipefail
rounds=${1:-5}
count=${2:-20000}
kinds=${3:-"responder plain runner"}
echo "# $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(uname -r), $(date -u +%FT%TZ)"
echo "round kind build elapsed_s user_s system_s voluntary_switches"
for round in $(seq 1 "$rounds"); do
    for kind in $kinds; do
        for build in before after; do
            binary=$BEFORE
            [[ $build == after ]] && binary=$AFTER
            figures=$( { /usr/bin/time -f "%e %U %S %w" "$binary" "$kind" "$count" > /dev/null; } 2>&1 | tail -1)
            echo "$round $kind $build $figures"
        done
    done
done
