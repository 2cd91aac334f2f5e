#!/usr/bin/env bash
# Instructions a 64-byte round trip costs in user space, counted by valgrind's callgrind: the figure that
# repeats from run to run where the wall clock does not (a virtual machine without hardware counters, a
# shared host). Both ends run in one process (Benchmarks/Counting/RoundTripCounts: the RoundTrip64B benchmarks' pairs
# from a plain main, and the tools' runner against their reflector); callgrind dumps its counters where the
# counted round trips begin and end, so set-up (whose P-256 keys take a random number of tries) stays out, and
# each kind runs at 1,000 and 3,000 round trips: the difference over 2,000 leaves out what a run does once
# around them too (the runner's warm-up phase and its document). The kernel's share of a round trip is not
# counted: raw TCP's figure is what a blocking socket's loop costs, the floor of the user-space part.
# The kind `resource` counts a resource instead (one session sending a file to another, plaintext, on /dev/shm):
# one of 16 MiB and one of 48 MiB after a warm-up of 4 MiB, the difference over 32 MiB the instructions a MiB
# costs at both ends (reading and hashing it, framing, checking and writing it), the kernel's copies left out.
# Its figure moves by up to a tenth from run to run where the round trips' hold still: SwiftNIO copies each
# receive buffer it adds to a connection's pool once (docs/design/DATA-PATH.md, "Receive pool"), and how many it
# adds while a transfer's chunks wait for the file queue depends on the threads' timing.
#
# Usage: Scripts/count-instructions.sh [--kinds "K1 K2 ..."] [--repeats N] [--keep DIR] [--output FILE]
#                                     [--note TEXT] [--binary PATH]
#   --kinds    rawTCP eventLoop plain responder encrypted reconnection runner resource (default: all)
#   --repeats  runs of each kind (default 2): one build's figures differ by under 0.1 % (the runner's, whose
#              timers tick by the clock, by a few percent)
#   --keep     keep each run's counted parts in DIR (KIND-COUNT-RUN.out, callgrind's format with its names written
#              out; results/rtt-2026-12-02/functions.py sums them by function)
#   --output   write the figures as JSON
#   --note     a line for the JSON saying what ran, when the tree is not its commit's
#   --binary   count this RoundTripCounts instead of building one (a build made with other flags, say
#              `swift build --package-path Benchmarks -c release --product RoundTripCounts -Xswiftc ...`)
# Needs valgrind (Debian: apt-get install valgrind).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
kinds="rawTCP eventLoop plain responder encrypted reconnection runner resource"
repeats=2
keep=""
output=""
note=""
binary=""
low=1000
high=3000
while (($#)); do
    case "$1" in
    --kinds) kinds=$2; shift ;;
    --repeats) repeats=$2; shift ;;
    --keep) keep=$2; shift ;;
    --output) output=$2; shift ;;
    --note) note=$2; shift ;;
    --binary) binary=$2; shift ;;
    -h | --help) sed -n '2,28p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
    esac
    shift
done
command -v valgrind > /dev/null || { echo "valgrind is missing: apt-get install valgrind" >&2; exit 1; }

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
if [[ -z "$binary" ]]; then
    swift build --package-path Benchmarks -c release --product RoundTripCounts > "$scratch/build.log" 2>&1 ||
        { cat "$scratch/build.log" >&2; echo "the build of RoundTripCounts failed" >&2; exit 1; }
    binary=Benchmarks/.build/release/RoundTripCounts
fi
# valgrind 3.19 cannot read the DWARF 5 that Swift 6.3 writes: count on a copy without it (symbols stay).
cp "$binary" "$scratch/RoundTripCounts"
strip --strip-debug "$scratch/RoundTripCounts"
[[ -n "$keep" ]] && mkdir -p "$keep"

# The instructions of one run's counted round trips: the second of the dumps made where they begin and end.
counted() {
    local kind=$1 count=$2 file=$3
    # Names uncompressed: a kept dump names its functions itself, not by reference to the dump before it.
    valgrind --tool=callgrind --dump-before='*countedPhaseBoundary*' --compress-strings=no --compress-pos=no \
        --callgrind-out-file="$file" \
        "$scratch/RoundTripCounts" "$kind" "$count" > "$file.log" 2>&1 || { cat "$file.log" >&2; return 1; }
    sed -n 's/^summary: //p' "$file.2"
}

figures="$scratch/figures.txt"
: > "$figures"
for kind in $kinds; do
    lo=$low hi=$high unit="a round trip"
    [[ $kind == resource ]] && lo=16 hi=48 unit="a MiB"
    for run in $(seq 1 "$repeats"); do
        a=$(counted "$kind" "$lo" "$scratch/$kind-$lo-$run.out")
        b=$(counted "$kind" "$hi" "$scratch/$kind-$hi-$run.out")
        [[ -n "$a" && -n "$b" ]] || { echo "$kind: callgrind made no dump of the counted part" >&2; exit 1; }
        per=$(((b - a) / (hi - lo)))
        echo "$kind run $run: $per instructions $unit ($a for $lo, $b for $hi)"
        echo "$kind $run $per $a $b" >> "$figures"
        if [[ -n "$keep" ]]; then
            cp "$scratch/$kind-$lo-$run.out.2" "$keep/$kind-$lo-$run.out"
            cp "$scratch/$kind-$hi-$run.out.2" "$keep/$kind-$hi-$run.out"
        fi
    done
done

if [[ -n "$output" ]]; then
    python3 - "$figures" "$output" "$low" "$high" "$note" << 'PY'
import json, platform, subprocess, sys
figures, output, low, high, note = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
def run(*command):
    try:
        return subprocess.run(command, capture_output=True, text=True).stdout.strip()
    except OSError:
        return ""
cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
           platform.machine())
kinds = {}
for line in open(figures):
    kind, number, per, a, b = line.split()
    per_key = "instructionsPerMebibyte" if kind == "resource" else "instructionsPerRoundTrip"
    kinds.setdefault(kind, []).append({"run": int(number), per_key: int(per),
                                       "countedAtLow": int(a), "countedAtHigh": int(b)})
document = {
    "what": "user-space instructions a 64-byte round trip (a MiB of a resource, kind resource) costs, both ends in one "
    + "process, callgrind",
    "command": "Scripts/count-instructions.sh",
    "roundTrips": {"low": low, "high": high},
    "resourceMebibytes": {"low": 16, "high": 48},
    "warmup": 200,
    "commit": run("git", "rev-parse", "HEAD"),
    "dirty": bool(run("git", "status", "--porcelain", "--untracked-files=no")),
    "build": "release",
    "swift": run("swift", "--version").splitlines()[0] if run("swift", "--version") else "",
    "valgrind": run("valgrind", "--version"),
    "cpu": cpu,
    "kernel": platform.release(),
    "kinds": kinds,
}
if note:
    document["note"] = note
with open(output, "w") as file:
    json.dump(document, file, indent=2, sort_keys=True)
    file.write("\n")
PY
    echo "wrote $output"
fi
