#!/usr/bin/env bash
# A 1 GiB resource cut at half and resumed, on loopback: ROUNDS rounds (default 3) of
# `test-runner run --test resource --bytes 1073741824 --interrupt-at 50`, plaintext then encrypted, against one
# reflector (encryption optional); prints each run's fraction of the bytes sent again after the resume and whether
# the reflector confirmed the file's SHA-256. Release builds in BIN (default .build/release); TMPDIR holds the
# runner's file. Run from the repository: results/resources-2026-12-02/interrupt/rounds.sh (OUT=DIR for another folder).
set -euo pipefail
cd "$(dirname "$0")/../../.."
bin=${BIN:-.build/release}
out=${OUT:-results/resources-2026-12-02/interrupt}
mkdir -p "$out"
# shellcheck source=Scripts/loopback-tools.sh
. Scripts/loopback-tools.sh
log=$(mktemp)
trap 'stop_reflector; rm -f "$log"' EXIT
start_reflector "$log" --encryption optional
port=$reflector_port
for round in $(seq 1 "${ROUNDS:-3}"); do
    for encryption in none required; do
        doc="$out/interrupt-50-$encryption-$round.json"
        "$bin/test-runner" run -c "127.0.0.1:$port" --test resource --bytes 1073741824 --interrupt-at 50 \
            --encryption "$encryption" --name "interrupt-50-$encryption" --output "$doc" > /dev/null
        python3 - "$doc" << 'PY'
import json, sys
d = json.load(open(sys.argv[1]))
r = d["resources"]
t = r["transfers"][0]
print(f"{sys.argv[1]}: {r['completed']} of {r['planned']} completed, sent again after the resume "
      f"{r['sentAfterResumeFraction']:.3f}, SHA-256 confirmed: {t.get('confirmedSHA256') == r['sha256']}, "
      f"{d['connection'].get('linkSecurity')}")
PY
    done
done | tee "$out/summary.txt"
