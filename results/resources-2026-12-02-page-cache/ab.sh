#!/usr/bin/env bash
# Two builds' reflectors taking turns at receiving a resource into a folder on the disk, from one test-runner
# (AFTER's) sending a file kept on tmpfs, so that only the receiver touches the disk. Each round sends every SIZE
# once to each build, the order turning each round; `sync` before each transfer, the received file removed after.
# Prints one line a transfer (round, size, build, MB/s, the reflector's CPU seconds over the transfer and the
# tool's SHA-256 of the received file after it) and the after/before ratios round by round. Run from the
# repository, as root:
#   BEFORE=DIR AFTER=DIR [ROUNDS=4] [SIZES="1G 4G"] [DISK=/var/tmp] [OUT=DIR] results/resources-2026-12-02-page-cache/ab.sh
# DIR: folders holding release builds of reflector and test-runner. Needs the largest SIZE free on /dev/shm and
# on DISK. Everything stays on 127.0.0.1; the scratch folders are removed at the end.
set -euo pipefail
cd "$(dirname "$0")/../.."
: "${BEFORE:?a folder with the first build}" "${AFTER:?a folder with the second build}"
rounds=${ROUNDS:-4}
sizes=${SIZES:-1G 4G}
out=${OUT:-results/runs/resources-page-cache-$(date -u +%F)}
mkdir -p "$out"
source_dir=$(mktemp -d /dev/shm/page-cache-ab.XXXXXX)
landing_dir=$(mktemp -d "${DISK:-/var/tmp}/page-cache-ab.XXXXXX")
reflector_pid=""
cleanup() {
    [ -z "$reflector_pid" ] || kill "$reflector_pid" 2>/dev/null || true
    rm -rf "$source_dir" "$landing_dir"
}
trap cleanup EXIT
for size in $sizes; do
    head -c "$(numfmt --from=iec "$size")" /dev/urandom > "$source_dir/$size.bin"
done
{
    echo "date: $(date -u +%FT%TZ)"
    echo "commit: $(git rev-parse HEAD)"
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc) CPUs; $(uname -r)"
    echo "disk: $(findmnt -n -o SOURCE,FSTYPE,OPTIONS --target "$landing_dir")"
    echo "free page reporting: order $(cat /sys/module/page_reporting/parameters/page_reporting_order 2>/dev/null || echo none)"
    echo "before: $BEFORE: $("$BEFORE/reflector" --version 2>&1 | head -1)"
    echo "after: $AFTER: $("$AFTER/reflector" --version 2>&1 | head -1)"
} | tee "$out/about.txt"
transfer() {  # ROUND SIZE SIDE
    local round=$1 size=$2 side=$3 bin=$BEFORE log port cpu_before cpu_after name
    [[ $side == after ]] && bin=$AFTER
    name="$side-$size-$round"
    log="$out/$name.reflector.log"
    "$bin/reflector" --no-dnssd --bind 127.0.0.1 --port 0 --raw-echo-port 0 --udp-ports ephemeral \
        --encryption none --resource-directory "$landing_dir" > "$log" 2>&1 &
    reflector_pid=$!
    for _ in $(seq 100); do grep -q ' ready ' "$log" && break; sleep 0.1; done
    port=$(sed -n 's/.* ready .* port=\([0-9]*\) .*/\1/p' "$log")
    [ -n "$port" ] || { echo "the reflector did not start:" >&2; cat "$log" >&2; exit 1; }
    sync
    cpu_before=$(awk '{ print $14 + $15 }' "/proc/$reflector_pid/stat")
    timeout 600 "$AFTER/test-runner" run --connect "127.0.0.1:$port" --test resource --file "$source_dir/$size.bin" \
        --encryption none --duration 600 --output "$out/$name.json" > "$out/$name.txt" 2>&1 \
        || { cat "$out/$name.txt" >&2; exit 1; }
    cpu_after=$(awk '{ print $14 + $15 }' "/proc/$reflector_pid/stat")
    kill "$reflector_pid"
    wait "$reflector_pid" 2>/dev/null || true
    reflector_pid=""
    rm -rf "${landing_dir:?}"/* "${landing_dir:?}"/.[!.]* 2>/dev/null || true
    jq -e '.resources.completed == 1' "$out/$name.json" > /dev/null || { echo "$name not confirmed" >&2; exit 1; }
    printf 'round %s %s %-6s %6.0f MB/s  reflector CPU %.2f s\n' "$round" "$size" "$side" \
        "$(jq '.resources.bytesPerSecond / 1e6' "$out/$name.json")" \
        "$(echo "($cpu_after - $cpu_before) / $(getconf CLK_TCK)" | bc -l)"
}
order="before after"
for round in $(seq "$rounds"); do
    for size in $sizes; do
        for side in $order; do transfer "$round" "$size" "$side"; done
    done
    order=$(echo "$order" | awk '{ print $2, $1 }')
done | tee "$out/transfers.txt"
echo "after / before, round by round:" | tee "$out/ratios.txt"
for size in $sizes; do
    ratios=$(for round in $(seq "$rounds"); do
        jq -n --slurpfile a "$out/after-$size-$round.json" --slurpfile b "$out/before-$size-$round.json" \
            '$a[0].resources.bytesPerSecond / $b[0].resources.bytesPerSecond'
    done | sort -g)
    printf '%s: %s (median %s)\n' "$size" "$(echo $ratios | awk '{ printf "%.2f-%.2f", $1, $NF }')" \
        "$(echo "$ratios" | awk '{ v[NR] = $1 } END { printf "%.2f", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')"
done | tee -a "$out/ratios.txt"
