#!/usr/bin/env bash
# Folders: files a second for a folder of many small files over loopback, the library
# against an rsync daemon in the same run. The folder: FILES files of 1-64 KiB (sizes and bytes from a
# fixed seed), 100 to a folder, two levels deep. Each run copies it with rsync (rsync://127.0.0.1,
# -r --whole-file, into an empty folder, checked against the source with diff -r) and with the library
# (test-runner run --test folder --folder TREE against a reflector on 127.0.0.1: sendResource of the
# directory, release builds, ENCRYPTION none by default; the reflector confirms every file's path, size and
# SHA-256), alternating; CPU time of both ends is recorded too (steadier than the wall clock on a shared
# machine). Prints a table and writes JSON to $RESULTS_DIR (default
# results/runs/folders-<UTC date>/run-<time>/). The target: the library at no less than half of rsync's files/s.
#
#   Scripts/bench-folders.sh [RUNS]      RUNS: runs of each, alternating (default 3)
#
# Environment: FILES (default 10000), SEED (default 22), ENCRYPTION (none, the default, or required: TLS 1.3),
# BIN (a folder holding release builds of reflector and test-runner; default: build them), RESULTS_DIR,
# TIME_LIMIT (seconds for the whole run, default 900), TMPDIR (where the scratch directory goes; it needs
# about (2 + RUNS) x 330 MB free;
# TMPDIR=/dev/shm puts it on tmpfs, where the file system's state does not decide the figures: ext4 creates
# files far slower for minutes after many have been deleted, as earlier runs leave it). Everything
# stays on 127.0.0.1 and in one scratch directory, removed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."

runs=${1:-3}
files=${FILES:-10000}
seed=${SEED:-22}
time_limit=${TIME_LIMIT:-900}
encryption=${ENCRYPTION:-none}
if ! [[ "$runs" =~ ^[1-9][0-9]*$ ]] || ! [[ "$files" =~ ^[1-9][0-9]*$ ]]; then
    echo "RUNS and FILES must be positive whole numbers" >&2
    exit 2
fi
[[ "$encryption" == none || "$encryption" == required ]] || { echo "ENCRYPTION must be none or required" >&2; exit 2; }
stamp=$(date -u +%Y-%m-%dT%H%M%SZ)
results=${RESULTS_DIR:-results/runs/folders-$(date -u +%F)}/run-$stamp
mkdir -p "$results"
results=$(cd "$results" && pwd)

if ! command -v rsync >/dev/null; then
    echo "installing rsync ..."
    if [ "$(id -u)" -eq 0 ]; then apt_get=(apt-get); else apt_get=(sudo apt-get); fi
    "${apt_get[@]}" install -y rsync >/dev/null || { "${apt_get[@]}" update >/dev/null && "${apt_get[@]}" install -y rsync >/dev/null; }
fi
for tool in rsync jq python3 timeout diff bc /usr/bin/time; do
    command -v "$tool" >/dev/null || { echo "missing: $tool" >&2; exit 2; }
done

# shellcheck source=Scripts/loopback-tools.sh
. Scripts/loopback-tools.sh
scratch=$(mktemp -d "${TMPDIR:-/tmp}/bench-folders.XXXXXX")
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
ticks=$(getconf CLK_TCK)
# CPU seconds of the rsync daemon's finished children (it forks one per connection and reaps it).
daemon_cpu() { awk -v t="$ticks" '{ print ($16 + $17) / t }' "/proc/$daemon_pid/stat"; }
# User + system seconds written by /usr/bin/time -f "%U %S" (a process and the children it waited for).
time_cpu() { awk '{ print $1 + $2 }' "$1"; }

{
    echo "date: $stamp"
    echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD -- Sources Benchmarks 2>/dev/null || echo ' (with local changes)')"
    echo "files: $files of 1-64 KiB, seed $seed"
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //') x $(nproc)"
    echo "os: $(. /etc/os-release && echo "$PRETTY_NAME")"
    echo "kernel: $(uname -r)"
    echo "file system of the scratch directory: $(stat -f -c %T "$scratch")"
    echo "free page reporting: $(page_reporting)"
    echo "rsync: $(rsync --version | head -1)"
    echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$results/host.txt"

echo "writing the folder ..."
mkdir -p "$scratch/module"
python3 - "$scratch/module/tree" "$files" "$seed" <<'EOF'
import os, random, sys
root, count, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(seed)
for index in range(count):
    folder = os.path.join(root, "d%02d" % (index // 1000), "e%02d" % (index // 100 % 10))
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "f%05d.bin" % index), "wb") as file:
        file.write(rng.randbytes(rng.randint(1024, 65536)))
EOF
bytes=$(du -s --block-size=1 --apparent-size "$scratch/module/tree" | cut -f1)
sync

echo "building reflector and test-runner (release) ..."
tools_binaries 2> "$results/build.txt"
# The reflector receives each copy into a folder of the scratch one, confirms it and deletes it.
start_reflector "$results/reflector.log" --encryption "$encryption" --resource-directory "$scratch/landing"

start_rsync_daemon "$scratch/module" "$scratch/rsyncd.conf" "$results/rsyncd.log"

rsync_seconds=()
library_seconds=()
rsync_cpu=()
library_cpu=()
for run in $(seq "$runs"); do
    # Every copy goes to a folder of its own and stays until the end: removing 10,000 files just before a
    # run slows the next file creations in the same file system (ext4 skips recently deleted inodes).
    echo "run $run of $runs: rsync ..."
    mkdir -p "$scratch/copies/rsync-$run"
    sync
    daemon_before=$(daemon_cpu)
    start=$(now)
    /usr/bin/time -f "%U %S" -o "$results/rsync-$run.time" timeout 600 rsync -r --whole-file --stats \
        "rsync://127.0.0.1:$rsync_port/bench/tree" "$scratch/copies/rsync-$run/" > "$results/rsync-$run.txt" 2>&1
    end=$(now)
    rsync_seconds+=("$(echo "$end - $start" | bc -l)")
    sleep 0.5  # the daemon reaps its child
    rsync_cpu+=("$(echo "$(time_cpu "$results/rsync-$run.time") + $(daemon_cpu) - $daemon_before" | bc -l)")
    diff -r -q "$scratch/module/tree" "$scratch/copies/rsync-$run/tree" > /dev/null ||
        { echo "rsync copy $run differs" >&2; exit 1; }

    echo "run $run of $runs: library ..."
    sync
    reflector_cpu_before=$(awk -v t="$ticks" '{ print ($14 + $15) / t }' "/proc/$reflector_pid/stat")
    /usr/bin/time -f "%U %S" -o "$results/library-$run.time" \
        timeout 600 "$bin/test-runner" run --connect "127.0.0.1:$reflector_port" --test folder \
        --folder "$scratch/module/tree" --encryption "$encryption" --duration 600 --name folders \
        --output "$results/library-$run.json" > "$results/library-$run.txt" 2>&1 ||
        { cat "$results/library-$run.txt" >&2; exit 1; }
    jq -e --argjson files "$files" '.resources.completed == 1 and .resources.files == $files' \
        "$results/library-$run.json" > /dev/null || { echo "library copy $run not confirmed" >&2; exit 1; }
    library_seconds+=("$(jq '.resources.transfers[0].transferNanoseconds / 1e9' "$results/library-$run.json")")
    reflector_cpu=$(echo "$(awk -v t="$ticks" '{ print ($14 + $15) / t }' "/proc/$reflector_pid/stat") - $reflector_cpu_before" | bc -l)
    library_cpu+=("$(echo "$(time_cpu "$results/library-$run.time") + $reflector_cpu" | bc -l)")
done
stop_rsync_daemon

seconds_json() { printf '%s\n' "$@" | jq -s .; }
jq -n \
    --arg date "$stamp" --arg commit "$(git rev-parse HEAD 2>/dev/null || echo unknown)" \
    --argjson files "$files" --argjson bytes "$bytes" --argjson seed "$seed" --arg encryption "$encryption" \
    --arg testRunner "$("$bin/test-runner" --version 2>&1 | head -1)" \
    --arg cpu "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')" --argjson cpus "$(nproc)" \
    --arg rsyncVersion "$(rsync --version | head -1)" \
    --argjson rsync "$(seconds_json "${rsync_seconds[@]}")" --argjson library "$(seconds_json "${library_seconds[@]}")" \
    --argjson rsyncCPU "$(seconds_json "${rsync_cpu[@]}")" --argjson libraryCPU "$(seconds_json "${library_cpu[@]}")" \
    '{schemaVersion: 1, date: $date, commit: $commit, files: $files, bytes: $bytes, seed: $seed, cpu: $cpu,
      cpus: $cpus, rsyncVersion: $rsyncVersion, rsyncOptions: "-r --whole-file", encryption: $encryption,
      testRunner: $testRunner,
      seconds: {rsync: $rsync, library: $library},
      cpuSeconds: {rsync: $rsyncCPU, library: $libraryCPU,
        note: "both ends, user + system: rsync client and daemon child; the library: the test-runner (start-up, hashing the source and listing included) and the reflector over the run (its hashing of the received tree included)"},
      filesPerSecond: {rsync: [$rsync[] | $files / .], library: [$library[] | $files / .]},
      ratios: [range($library | length) | ($rsync[.] / $library[.])]}
     | def median: sort | .[(length - 1) / 2 | floor];
       .filesPerSecondMedian = {rsync: (.filesPerSecond.rsync | median), library: (.filesPerSecond.library | median)}
     | .filesPerSecondBest = {rsync: (.filesPerSecond.rsync | max), library: (.filesPerSecond.library | max)}
     | .libraryOverRsync = {min: (.ratios | min), max: (.ratios | max),
         ofMedians: (.filesPerSecondMedian.library / .filesPerSecondMedian.rsync),
         ofBests: (.filesPerSecondBest.library / .filesPerSecondBest.rsync)}
     | .targets = {libraryAtLeastHalfOfRsyncFilesPerSecondInEveryRun: (.ratios | min >= 0.5),
         libraryAtLeastHalfOfRsyncFilesPerSecondMedians: (.libraryOverRsync.ofMedians >= 0.5)}' \
    > "$results/summary.json"

{
    printf '\n%d files of 1-64 KiB (%.0f MB), loopback, %d CPUs, %s\n' "$files" "$(echo "$bytes / 1000000" | bc -l)" \
        "$(nproc)" "$stamp"
    printf '%-5s %16s %16s %8s %14s %14s\n' "run" "rsync files/s" "library files/s" "ratio" "rsync CPU s" "library CPU s"
    jq -r '.filesPerSecond as $f | .cpuSeconds as $c | range($f.rsync | length) as $i
        | "\($i + 1) \($f.rsync[$i] | round) \($f.library[$i] | round) \(.ratios[$i] * 100 | round / 100)"
          + " \($c.rsync[$i] * 100 | round / 100) \($c.library[$i] * 100 | round / 100)"' \
        "$results/summary.json" | while read -r run r l ratio rc lc; do
            printf '%-5s %16s %16s %8s %14s %14s\n' "$run" "$r" "$l" "$ratio" "$rc" "$lc"
        done
    jq -r 'def r: . * 100 | round / 100;
        "median files/s: rsync \(.filesPerSecondMedian.rsync | round), library \(.filesPerSecondMedian.library | round);"
          + " best: rsync \(.filesPerSecondBest.rsync | round), library \(.filesPerSecondBest.library | round)",
        "library / rsync files/s: \(.libraryOverRsync.min | r)-\(.libraryOverRsync.max | r) by run,"
          + " \(.libraryOverRsync.ofMedians | r) of the medians, \(.libraryOverRsync.ofBests | r) of the bests",
        (.targets | to_entries[] | "target \(.key): \(.value)")' "$results/summary.json"
    echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$results/table.txt"
echo "wrote $results"
