#!/usr/bin/env bash
# The library's encrypted messages against TLS 1.3 over raw TCP, on loopback: ROUNDS rounds (default 5), each
# `test-runner run --test data|raw-tcp --size 64,1048576 --count 3000 --window 4 --encryption none|required` against
# one reflector (encryption optional), the four taking turns; then summarize.py. Release builds in BIN (default
# .build/release). Run from the repository: results/tls-baseline-2026-12-02/rounds.sh (OUT=DIR for another folder).
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${BIN:-.build/release}
out=${OUT:-results/tls-baseline-2026-12-02}
mkdir -p "$out"
# shellcheck source=Scripts/loopback-tools.sh
. Scripts/loopback-tools.sh
log=$(mktemp)
trap 'stop_reflector; rm -f "$log"' EXIT
start_reflector "$log" --encryption optional
port=$reflector_port
for round in $(seq 1 "${ROUNDS:-5}"); do
    for test in data raw-tcp; do
        for encryption in none required; do
            "$bin/test-runner" run -c "127.0.0.1:$port" --test "$test" --size 64,1048576 --count 3000 --window 4 \
                --encryption "$encryption" --output "$out/$test-$encryption-$round.json" > /dev/null
        done
    done
done
python3 "$(dirname "$0")/summarize.py" "$out" | tee "$out/summary.txt"
