#!/usr/bin/env bash
# A 1 GiB resource against its baselines, in one run on loopback: an rsync daemon moving one file
# whole (rsync://127.0.0.1, --whole-file), raw TCP one way and the library's resource transfer of the
# same size (iperf3 -n and test-runner --test resource against a reflector), the floor for any file sent over TCP here
# (Scripts/file-over-tcp.c: read, send, receive, write, nothing else), the same floor with the protocol's own
# check (BLOCK_HASH=xxh3: both ends take XXH3-64 of every 1 MiB block, as a resource's do between two peers of this
# version), and the hashes a block
# design could use. The floor, the floor with block hashes and the library take turns, ROUNDS rounds of one copy
# each, and all send the same file (the runner's --file), so that each reads the same cached pages and writes a
# new file of the same size; their ratios are taken within each round. The hashes:
# SHA-256 on one core (sha256sum, openssl speed), on two cores (two processes, one half each), and
# BLAKE2b (b2sum). Prints one table with MB/s (10^6 bytes a second) and the ratios the targets use
# (docs/design/RESOURCES-V2.md); writes every raw output to $RESULTS_DIR (default
# results/runs/resources-baseline-<UTC date>/run-<time>/).
#
#   Scripts/bench-resources.sh [SIZE]     SIZE in bytes or with K/M/G (binary), whole MiB; default 1G
#
# Environment: RESULTS_DIR, RSYNC_REPS (rsync copies, the median counts; default 3), ROUNDS (rounds of the two
# floors and the library, default 5), TIME_LIMIT
# (seconds for the whole run, default 900), TMPDIR (where the scratch directory goes; it needs about
# 4 x SIZE free). Everything stays on 127.0.0.1 and in one scratch directory, removed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."

size_arg=${1:-1G}
case "$size_arg" in
    *[Gg]) bytes=$(( ${size_arg%[Gg]} << 30 )) ;;
    *[Mm]) bytes=$(( ${size_arg%[Mm]} << 20 )) ;;
    *[Kk]) bytes=$(( ${size_arg%[Kk]} << 10 )) ;;
    *) bytes=$(( size_arg )) ;;
esac
if (( bytes <= 0 || bytes % (1 << 20) != 0 )); then
    echo "SIZE must be a positive whole number of MiB (got $size_arg)" >&2
    exit 2
fi
mib=$(( bytes >> 20 ))
half_mib=$(( mib / 2 ))
rsync_reps=${RSYNC_REPS:-3}
rounds=${ROUNDS:-5}
time_limit=${TIME_LIMIT:-900}
stamp=$(date -u +%Y-%m-%dT%H%M%SZ)
results=${RESULTS_DIR:-results/runs/resources-baseline-$(date -u +%F)}/run-$stamp
mkdir -p "$results"
results=$(cd "$results" && pwd)

if ! command -v rsync >/dev/null; then
    echo "installing rsync ..."
    if [ "$(id -u)" -eq 0 ]; then apt_get=(apt-get); else apt_get=(sudo apt-get); fi
    "${apt_get[@]}" install -y rsync >/dev/null || { "${apt_get[@]}" update >/dev/null && "${apt_get[@]}" install -y rsync >/dev/null; }
fi
for tool in rsync sha256sum b2sum openssl jq split timeout iperf3 ss; do
    command -v "$tool" >/dev/null || { echo "missing: $tool" >&2; exit 2; }
done
# A C compiler for the floor below: the system's, or the clang that comes with Swift.
compiler=$(command -v cc || command -v gcc || command -v clang) || { echo "missing: a C compiler (cc, gcc or clang)" >&2; exit 2; }

# shellcheck source=Scripts/loopback-tools.sh
. Scripts/loopback-tools.sh
scratch=$(mktemp -d "${TMPDIR:-/tmp}/bench-resources.XXXXXX")
cleanup() {
    stop_rsync_daemon
    stop_reflector
    rm -rf "$scratch"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
# The whole run is bounded: past TIME_LIMIT, the watchdog ends this script and so runs its cleanup.
start_watchdog "$time_limit"
trap 'kill $watchdog 2>/dev/null || true; cleanup' EXIT

now() { date +%s.%N; }
mbps() { jq -n --argjson b "$1" --argjson s "$2" '$b / $s / 1e6'; }
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# "low-high (median)" of ratios, two decimals each.
spread() { printf '%.2f-%.2f (%.2f)' "$(printf '%s\n' "$@" | sort -g | head -1)" "$(printf '%s\n' "$@" | sort -g | tail -1)" "$(median "$@")"; }

{
    echo "date: $stamp"
    echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD -- Sources Benchmarks 2>/dev/null || echo ' (with local changes)')"
    echo "size: $bytes bytes ($mib MiB)"
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //') x $(nproc)"
    echo "sha_ni: $(grep -qw sha_ni /proc/cpuinfo && echo yes || echo no)"
    echo "os: $(. /etc/os-release && echo "$PRETTY_NAME") (debian_version $(cat /etc/debian_version 2>/dev/null || echo -))"
    echo "kernel: $(uname -r)"
    echo "rsync: $(rsync --version | head -1)"
    echo "openssl: $(openssl version)"
    echo "scratch: $scratch ($(stat -f -c %T "$scratch"))"
    echo "free page reporting: $(page_reporting)"
    echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$results/host.txt"

echo "writing $mib MiB of random bytes ..."
mkdir -p "$scratch/module" "$scratch/pulled"
head -c "$bytes" /dev/urandom > "$scratch/module/file.bin"
sha256sum "$scratch/module/file.bin" > /dev/null  # into the page cache, as the test-runner's file is

# (d) Hashes first, on an otherwise quiet machine, with the file in the page cache.
echo "hashes ..."
hash_file() {  # name command...: seconds over the whole file
    local name=$1; shift
    local start end
    start=$(now); "$@" "$scratch/module/file.bin" > "$results/$name.txt"; end=$(now)
    echo "$end - $start" | bc -l
}
# coreutils' sha256sum is its own C code (no SHA-NI); openssl dgst uses the same kind of
# assembly as swift-crypto's BoringSSL, so it stands for what the library gets.
sha_seconds=$(hash_file sha256sum sha256sum)
ossl_seconds=$(hash_file openssl-dgst-sha256 openssl dgst -sha256)
b2_seconds=$(hash_file b2sum b2sum)
# XXH128 (what rsync 3.2+ checks a whole file with) when xxhsum is there (Debian: apt-get install xxhash).
xxh_seconds=0
if command -v xxhsum >/dev/null; then xxh_seconds=$(hash_file xxhsum-H2 xxhsum -H2); fi
split -n 2 -d "$scratch/module/file.bin" "$scratch/half."
cat "$scratch/half.00" "$scratch/half.01" > /dev/null
start=$(now)
sha256sum "$scratch/half.00" > "$results/sha256sum-half0.txt" &
first=$!
sha256sum "$scratch/half.01" > "$results/sha256sum-half1.txt"
wait "$first"
end=$(now)
sha_two_seconds=$(echo "$end - $start" | bc -l)
start=$(now)
openssl dgst -sha256 "$scratch/half.00" > "$results/openssl-dgst-sha256-half0.txt" &
first=$!
openssl dgst -sha256 "$scratch/half.01" > "$results/openssl-dgst-sha256-half1.txt"
wait "$first"
end=$(now)
ossl_two_seconds=$(echo "$end - $start" | bc -l)
rm -f "$scratch/half.00" "$scratch/half.01"
openssl speed -seconds 3 -evp sha256 -bytes 1048576 > "$results/openssl-speed-sha256.txt" 2>&1
openssl speed -seconds 3 -evp blake2b512 -bytes 1048576 > "$results/openssl-speed-blake2b512.txt" 2>&1 || true
# "1048576 bytes" column, in kB/s (1000 bytes): the last field of the result line.
openssl_sha=$(awk '/^sha256/ { v = $NF } END { sub(/k$/, "", v); print v * 1000 / 1e6 }' "$results/openssl-speed-sha256.txt")
openssl_b2=$(awk '/^BLAKE2b512|^blake2b512/ { v = $NF } END { sub(/k$/, "", v); print (v == "" ? 0 : v * 1000 / 1e6) }' \
    "$results/openssl-speed-blake2b512.txt")

# (a) rsync daemon on 127.0.0.1, the module a directory of the scratch one; the client pulls the file whole.
echo "rsync daemon ..."
start_rsync_daemon "$scratch/module" "$scratch/rsyncd.conf" "$results/rsyncd.log"
rsync_seconds=()
for rep in $(seq "$rsync_reps"); do
    rm -f "$scratch/pulled/file.bin"
    sync
    start=$(now)
    timeout 600 rsync --whole-file --stats "rsync://127.0.0.1:$rsync_port/bench/file.bin" "$scratch/pulled/" \
        > "$results/rsync-$rep.txt" 2>&1
    end=$(now)
    rsync_seconds+=("$(echo "$end - $start" | bc -l)")
    cmp -s "$scratch/module/file.bin" "$scratch/pulled/file.bin" || { echo "rsync copy $rep differs" >&2; exit 1; }
done
stop_rsync_daemon
rm -f "$scratch/pulled/file.bin"
rsync_median=$(median "${rsync_seconds[@]}")
rsync_first=${rsync_seconds[0]}

# (b) Raw TCP one way, the same bytes: iperf3 -n, one stream, 3 times (median).
echo "raw TCP one way (iperf3) ..."
iperf_port=$(free_port)
raw_seconds=()
for rep in 1 2 3; do
    iperf3 -s -1 -B 127.0.0.1 -p "$iperf_port" > /dev/null 2>&1 &
    server=$!
    for _ in $(seq 50); do ss -ltn "sport = :$iperf_port" | grep -q LISTEN && break; sleep 0.1; done
    timeout 600 iperf3 -c 127.0.0.1 -p "$iperf_port" -n "$bytes" -J > "$results/iperf3-$rep.json"
    wait "$server" || true
    raw_seconds+=("$(jq '.end.sum_received.seconds' "$results/iperf3-$rep.json")")
done
raw=$(mbps "$bytes" "$(median "${raw_seconds[@]}")")

# (c, e) The floor, a C program that reads the file and writes it to a socket and a child that reads the
# socket and writes a new file, 1 MiB at a time (no framing, no hash, no encryption); the floor with block
# hashes (BLOCK_HASH=xxh3); and the library, test-runner run --test resource --file against a reflector on
# 127.0.0.1 (release builds, plaintext), taking turns, each sending the module's file; the library once more
# with 100 probes a second beside it on the same session.
echo "file over TCP, the floor with and without block hashes, and test-runner (resource), $rounds rounds ..."
# -O3: the floor's hashes then run about as fast as the library's (its XXH64 at -O2 about 1.4 times slower).
"$compiler" -O3 -pthread -o "$scratch/file-over-tcp" Scripts/file-over-tcp.c
"$scratch/file-over-tcp" --self-test > /dev/null
tools_binaries 2> "$results/build.txt"
start_reflector "$results/reflector.log" --encryption none --resource-directory "$scratch/landing"
floor_copy() {  # ROUND [hashed]: the floor, or with "hashed" the floor with block hashes
    local name="file-over-tcp-$1" hash=0
    if [[ ${2:-} == hashed ]]; then name="file-over-tcp-hashed-$1"; hash=xxh3; fi
    rm -f "$scratch/pulled/file.bin"
    sync
    BLOCK_HASH=$hash "$scratch/file-over-tcp" "$scratch/module/file.bin" "$scratch/pulled/file.bin" > "$results/$name.txt"
    if [[ $hash != 0 ]]; then
        floor_hash_seconds+=("$(awk '{ print $2 }' "$results/$name.txt")")
    else
        floor_seconds+=("$(awk '{ print $2 }' "$results/$name.txt")")
    fi
    cmp -s "$scratch/module/file.bin" "$scratch/pulled/file.bin" || { echo "$name: the copy differs" >&2; exit 1; }
    rm -f "$scratch/pulled/file.bin"
}
resource_run() {  # NAME OPTIONS...
    local name=$1
    shift
    sync
    timeout 600 "$bin/test-runner" run --connect "127.0.0.1:$reflector_port" --test resource \
        --file "$scratch/module/file.bin" --encryption none --duration 600 --name bench-resources \
        --output "$results/$name.json" "$@" > "$results/$name.txt" 2>&1 || { cat "$results/$name.txt" >&2; exit 1; }
    jq -e '.resources.completed == 1' "$results/$name.json" > /dev/null || { echo "$name not confirmed" >&2; exit 1; }
}
# The round's library rate over a floor that took SECONDS.
over_floor() { jq -n --argjson l "${library_rates[-1]}" --argjson b "$bytes" --argjson s "$1" '$l / ($b / $s / 1e6)'; }
floor_seconds=()
floor_hash_seconds=()
library_rates=()
round_ratios=()
round_hash_ratios=()
for round in $(seq "$rounds"); do
    # The three take turns at going first: floor, hashed floor, library; then hashed, library, floor; ...
    case $(( round % 3 )) in
    1) floor_copy "$round"; floor_copy "$round" hashed; resource_run "resource-$round" ;;
    2) floor_copy "$round" hashed; resource_run "resource-$round"; floor_copy "$round" ;;
    0) resource_run "resource-$round"; floor_copy "$round"; floor_copy "$round" hashed ;;
    esac
    library_rates+=("$(jq '.resources.bytesPerSecond / 1e6' "$results/resource-$round.json")")
    round_ratios+=("$(over_floor "${floor_seconds[-1]}")")
    round_hash_ratios+=("$(over_floor "${floor_hash_seconds[-1]}")")
done
resource_run resource-beside-echo --beside-echo 100
stop_reflector
floor_median=$(median "${floor_seconds[@]}")
floor_hash_median=$(median "${floor_hash_seconds[@]}")
library=$(median "${library_rates[@]}")
library_echoes=$(jq '.resources.bytesPerSecond / 1e6' "$results/resource-beside-echo.json")
beside_p99=$(jq '.resources.besideEcho.duringTransfers.roundTrip.p99Nanoseconds / 1e6' "$results/resource-beside-echo.json")
ratio_median=$(median "${round_ratios[@]}")
hash_ratio_median=$(median "${round_hash_ratios[@]}")

sha=$(mbps "$bytes" "$sha_seconds")
sha_two=$(mbps "$bytes" "$sha_two_seconds")
ossl=$(mbps "$bytes" "$ossl_seconds")
ossl_two=$(mbps "$bytes" "$ossl_two_seconds")
b2=$(mbps "$bytes" "$b2_seconds")
rsync_mbps=$(mbps "$bytes" "$rsync_median")
floor=$(mbps "$bytes" "$floor_median")
floor_hash=$(mbps "$bytes" "$floor_hash_median")
rsync_first_mbps=$(mbps "$bytes" "$rsync_first")
xxh=$( (( $(echo "$xxh_seconds > 0" | bc) )) && mbps "$bytes" "$xxh_seconds" || echo 0)

jq -n \
    --arg date "$stamp" --arg commit "$(git rev-parse HEAD 2>/dev/null || echo unknown)" \
    --argjson bytes "$bytes" --arg cpu "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')" \
    --argjson cpus "$(nproc)" --arg rsyncVersion "$(rsync --version | head -1)" \
    --argjson rsyncSeconds "$(printf '%s\n' "${rsync_seconds[@]}" | jq -s .)" \
    --argjson rsync "$rsync_mbps" --argjson raw "$raw" --argjson library "$library" \
    --argjson libraryWithEchoes "$library_echoes" --argjson besideP99 "$beside_p99" --argjson sha "$sha" --argjson shaTwo "$sha_two" \
    --argjson rawSeconds "$(printf '%s\n' "${raw_seconds[@]}" | jq -s .)" \
    --arg testRunner "$("$bin/test-runner" --version 2>&1 | head -1)" --arg iperf3 "$(iperf3 --version | head -1)" \
    --argjson ossl "$ossl" --argjson osslTwo "$ossl_two" --argjson osslSeconds "$ossl_seconds" --argjson osslTwoSeconds "$ossl_two_seconds" \
    --argjson rsyncFirst "$rsync_first_mbps" --argjson xxh "$xxh" --argjson floor "$floor" \
    --argjson floorSeconds "$(printf '%s\n' "${floor_seconds[@]}" | jq -s .)" \
    --argjson floorHash "$floor_hash" --argjson floorHashSeconds "$(printf '%s\n' "${floor_hash_seconds[@]}" | jq -s .)" \
    --argjson roundHashRatios "$(printf '%s\n' "${round_hash_ratios[@]}" | jq -s .)" --argjson hashRatioMedian "$hash_ratio_median" \
    --argjson libraryRounds "$(printf '%s\n' "${library_rates[@]}" | jq -s .)" \
    --argjson roundRatios "$(printf '%s\n' "${round_ratios[@]}" | jq -s .)" --argjson rounds "$rounds" \
    --argjson ratioMedian "$ratio_median" \
    --argjson opensslSha "$openssl_sha" --argjson b2 "$b2" --argjson opensslB2 "$openssl_b2" \
    --argjson shaSeconds "$sha_seconds" --argjson shaTwoSeconds "$sha_two_seconds" --argjson b2Seconds "$b2_seconds" \
    '{date: $date, commit: $commit, bytes: $bytes, cpu: $cpu, cpus: $cpus, rsyncVersion: $rsyncVersion,
      testRunner: $testRunner, iperf3: $iperf3, encryption: "none", rounds: $rounds, floorBlockHash: "XXH3-64",
      libraryResourceByRound: $libraryRounds, libraryOverFileOverTCPFloorByRound: $roundRatios,
      libraryOverFloorWithBlockHashesByRound: $roundHashRatios,
      besideEchoP99Milliseconds: $besideP99,
      megabytesPerSecond: {rsyncDaemonWholeFile: $rsync, rsyncDaemonFirstCopy: $rsyncFirst, xxhsumXXH128OneCore: $xxh, rawTCPOneWay: $raw,
        fileOverTCPFloor: $floor, fileOverTCPFloorWithBlockHashes: $floorHash, libraryResource: $library,
        libraryResourceWithEchoes: $libraryWithEchoes, sha256sumOneCore: $sha, sha256sumTwoProcessesHalves: $shaTwo,
        opensslDgstSha256OneCore: $ossl, opensslDgstSha256TwoProcessesHalves: $osslTwo,
        opensslSpeedSha256_1MiB: $opensslSha, b2sumOneCore: $b2, opensslSpeedBlake2b512_1MiB: $opensslB2},
      seconds: {rsync: $rsyncSeconds, rawTCPOneWay: $rawSeconds, fileOverTCPFloor: $floorSeconds,
        fileOverTCPFloorWithBlockHashes: $floorHashSeconds, sha256sum: $shaSeconds, sha256sumTwoHalves: $shaTwoSeconds,
        opensslDgstSha256: $osslSeconds, opensslDgstSha256TwoHalves: $osslTwoSeconds, b2sum: $b2Seconds},
      ratios: {libraryOverRawTCP: ($library / $raw), libraryOverRsync: ($library / $rsync),
        libraryOverFileOverTCPFloor: $ratioMedian, libraryOverFloorWithBlockHashes: $hashRatioMedian,
        floorWithBlockHashesOverFloor: ($floorHash / $floor), fileOverTCPFloorOverRawTCP: ($floor / $raw),
        rawTCPOverRsync: ($raw / $rsync), sha256TwoCoresOverRawTCP: ($osslTwo / $raw),
        sha256TwoCoresOverLibrary: ($osslTwo / $library)},
      targets: {libraryAtLeast1GBps: ($library >= 1000), libraryAtLeastHalfRawTCP: ($library / $raw >= 0.5),
        libraryAtLeast4xRsync: ($library / $rsync >= 4), libraryAtLeastRsync: ($library >= $rsync),
        libraryAtLeast08xFloorEveryRound: ($roundRatios | min >= 0.8)}}' > "$results/summary.json"

{
    printf '\n%-52s %10s\n' "$mib MiB, loopback, $(nproc) CPUs, $stamp" "MB/s"
    printf '%-52s %10.0f\n' "rsync daemon, rsync:// --whole-file (median of $rsync_reps)" "$rsync_mbps"
    printf '%-52s %10.0f\n' "rsync daemon, first copy of the run" "$rsync_first_mbps"
    printf '%-52s %10.0f\n' "raw TCP one way (iperf3 -n, median of 3)" "$raw"
    printf '%-52s %10.0f\n' "file over TCP, the floor (C, median of $rounds)" "$floor"
    printf '%-52s %10.0f\n' "the floor with block hashes (XXH3-64, median of $rounds)" "$floor_hash"
    printf '%-52s %10.0f\n' "PeerConnectivity resource, plaintext (median of $rounds)" "$library"
    printf '%-52s %10s\n' "  over the floor, round by round: low-high (median)" \
        "$(spread "${round_ratios[@]}")"
    printf '%-52s %10s\n' "  over the floor with block hashes, round by round" \
        "$(spread "${round_hash_ratios[@]}")"
    printf '%-52s %10.0f\n' "PeerConnectivity resource, 100 probes/s beside it" "$library_echoes"
    printf '%-52s %10.2f\n' "  those probes' round trip p99, ms" "$beside_p99"
    printf '%-52s %10.0f\n' "SHA-256, sha256sum (coreutils, no SHA-NI), one core" "$sha"
    printf '%-52s %10.0f\n' "SHA-256, sha256sum x 2 processes, one half each" "$sha_two"
    printf '%-52s %10.0f\n' "SHA-256, openssl dgst, one core" "$ossl"
    printf '%-52s %10.0f\n' "SHA-256, openssl dgst x 2 processes, one half each" "$ossl_two"
    printf '%-52s %10.0f\n' "SHA-256, openssl speed -evp sha256, 1 MiB blocks" "$openssl_sha"
    printf '%-52s %10.0f\n' "BLAKE2b, b2sum, one core" "$b2"
    printf '%-52s %10.0f\n' "XXH128, xxhsum -H2, one core (0: not installed)" "$xxh"
    printf '%-52s %10.0f\n' "BLAKE2b-512, openssl speed, 1 MiB blocks" "$openssl_b2"
    echo
    jq -r '.ratios | to_entries[] | "\(.key): \(.value * 100 | round / 100)"' "$results/summary.json"
    jq -r '.targets | to_entries[] | "target \(.key): \(.value)"' "$results/summary.json"
    echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$results/table.txt"
echo "wrote $results"
