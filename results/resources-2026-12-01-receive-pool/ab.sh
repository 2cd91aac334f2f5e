#!/usr/bin/env bash
# Two builds of the reflector receiving the same 1 GiB resource in turns (before, after, before, ...): its rate, its
# CPU over the transfer by thread (../resources-2026-12-01/threads.py: the event loop that reads the socket, the file
# queue that writes and hashes) and the page faults the reflector takes over the run (/proc/PID/stat minflt; its start
# and the tool's SHA-256 of the file afterwards fault in a few thousand pages either way). One test-runner, AFTER's,
# sends for both. ROUNDS rounds (default 8), loopback, ENCRYPTION none (the default) or required (TLS 1.3), the file and
# the landing folder in SCRATCH (default /dev/shm/receive-pool: tmpfs); with PIN=split the reflector runs on CPU 0 and
# the runner on CPU 1, as on two hosts of one core each (unpinned by default). One line a run, and the medians,
# written to OUT/summary.txt (default this folder). With BESIDE=RATE the runner sends RATE small probes a second on the
# same session through each transfer (--beside-echo), and each line ends with their round trips. Each line ends with the
# sender's read and hash seconds (summed over its threads), as the runner prints them.
#
#   BEFORE=DIR AFTER=DIR results/resources-2026-12-01-receive-pool/ab.sh    (each DIR a release build's bin folder)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
before=${BEFORE:?"BEFORE: the bin folder of the release build to compare against"}
after=${AFTER:?"AFTER: the bin folder of the release build under test"}
rounds=${ROUNDS:-8}
encryption=${ENCRYPTION:-none}
beside=${BESIDE:-}
out=${OUT:-$here}
scratch=${SCRATCH:-/dev/shm/receive-pool}
for tool in jq python3 timeout; do command -v "$tool" >/dev/null || { echo "missing: $tool" >&2; exit 2; }; done
mkdir -p "$scratch" "$out"
# shellcheck source=../../Scripts/loopback-tools.sh
. "$here/../../Scripts/loopback-tools.sh"
trap 'stop_reflector; rm -rf "$scratch"' EXIT
pin_ends none
dd if=/dev/urandom of="$scratch/file" bs=1M count=1024 status=none
{
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //') x $(nproc); kernel $(uname -r)"
    for side in before after; do
        dir=${!side}
        echo "$side: $("$dir/reflector" --version 2>/dev/null | head -1); built in the tree at $(git -C "$dir" rev-parse --short HEAD 2>/dev/null || echo "(not in a git tree)")"
    done
    echo "pinning: $pinning"
    echo "encryption: $encryption; scratch: $(stat -f -c %T "$scratch"); free page reporting order: $(cat /sys/module/page_reporting/parameters/page_reporting_order 2>/dev/null || echo none)"
} | tee "$out/summary.txt"
run() {  # LABEL BIN
    local label=$1
    bin=$2  # start_reflector's
    rm -rf "$scratch/landing"; mkdir -p "$scratch/landing"
    start_reflector "$scratch/reflector.log" --encryption "$encryption" --resource-directory "$scratch/landing"
    python3 "$here/../resources-2026-12-01/threads.py" "$reflector_pid" "$scratch/landing" > "$scratch/threads.txt" &
    local poller=$!
    TMPDIR=$scratch timeout 600 "${client_pin[@]}" "$after/test-runner" run --connect "127.0.0.1:$reflector_port" --test resource \
        --file "$scratch/file" --encryption "$encryption" --duration 600 --name receive-pool --output "$scratch/run.json" \
        ${beside:+--beside-echo "$beside"} > "$scratch/runner.txt" 2>&1
    wait "$poller"
    local stat faults
    read -r -a stat < "/proc/$reflector_pid/stat"
    faults=${stat[9]}
    stop_reflector
    local probes=""
    [ -z "$beside" ] || probes="; probes beside:$(sed -n 's/.*same session: round trip\(.*\); idle before.*/\1/p' "$scratch/runner.txt")"
    # The sender's own read and hash seconds, summed over its threads (the runner's summary line).
    local sender
    sender=$(sed -n 's/.*; read \([0-9.]*\) s, hash \([0-9.]*\) s (summed over threads).*/; sender read \1 s, hash \2 s/p' "$scratch/runner.txt" | head -1)
    echo "$label MB/s $(jq '.resources.bytesPerSecond / 1e6 | floor' "$scratch/run.json"); faults $faults; $(cat "$scratch/threads.txt")$probes$sender"
}
for round in $(seq "$rounds"); do
    { echo "round $round: $(run before "$before")"; echo "round $round: $(run after "$after")"; } | tee -a "$out/summary.txt"
done
python3 - "$out/summary.txt" <<'PY' | tee -a "$out/summary.txt"
import re, statistics, sys
runs = {"before": [], "after": []}
for line in open(sys.argv[1]):
    m = re.match(r"round \d+: (\w+) MB/s (\d+); faults (\d+); transfer [\d.]+ s; reflector ([\d.]+) s CPU \((.*?)\)", line)
    if m:
        threads = dict((n, float(v)) for n, v in re.findall(r"([\w.#-]+) ([\d.]+)", m.group(5)))
        loop = sum(v for n, v in threads.items() if n.startswith("NIO-"))
        probes = re.search(r"probes beside: p50 ([\d.]+) ms, p99 ([\d.]+) ms", line)
        runs[m.group(1)].append((int(m.group(2)), int(m.group(3)), float(m.group(4)), loop) + (
            (float(probes.group(1)), float(probes.group(2))) if probes else ()))
rates = [a[0] / b[0] for b, a in zip(runs["before"], runs["after"])]
print(f"rate after/before, round by round: {min(rates):.2f}-{max(rates):.2f} (median {statistics.median(rates):.2f})")
for label, values in runs.items():
    med = lambda i: statistics.median(v[i] for v in values)
    print(f"{label}: medians {med(0):.0f} MB/s, {med(1):.0f} faults, reflector {med(2):.2f} CPU s over the transfer,"
          f" its event loop {med(3):.2f}"
          + (f"; probes beside, p50 {med(4):.2f} ms, p99 {med(5):.2f} ms" if all(len(v) > 4 for v in values) else ""))
PY
