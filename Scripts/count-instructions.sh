#!/usr/bin/env bash
# Instructions a 64-byte round trip costs in user space, counted by valgrind's callgrind: the figure that
# repeats from run to run where the wall clock does not (a virtual machine without hardware counters, a
# shared host). Both ends run in one process (Benchmarks/RoundTripCounts: the RoundTrip64B benchmarks' pairs
# from a plain main); callgrind dumps its counters where the counted round trips begin and end, so set-up,
# warm-up and teardown stay out. The kernel's share of a round trip is not counted: raw TCP's figure is what
# a blocking socket's loop costs, the floor of the user-space part.
#
# Usage: Scripts/count-instructions.sh [--kinds "K1 K2 ..."] [--repeats N] [--keep DIR] [--output FILE]
#   --kinds    rawTCP eventLoop plain responder encrypted reconnection (default: all)
#   --repeats  runs of each kind (default 2): the figures of one build differ by a few hundredths of a percent
#   --keep     keep each run's counted part in DIR (KIND-RUN.out, for callgrind_annotate: where they go)
#   --output   write the figures as JSON
# Needs valgrind (Debian: apt-get install valgrind).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
kinds="rawTCP eventLoop plain responder encrypted reconnection"
repeats=2
keep=""
output=""
count=2000
while (($#)); do
    case "$1" in
    --kinds) kinds=$2; shift ;;
    --repeats) repeats=$2; shift ;;
    --keep) keep=$2; shift ;;
    --output) output=$2; shift ;;
    -h | --help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
    esac
    shift
done
command -v valgrind > /dev/null || { echo "valgrind is missing: apt-get install valgrind" >&2; exit 1; }

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
swift build --package-path Benchmarks -c release --product RoundTripCounts > "$scratch/build.log" 2>&1 ||
    { cat "$scratch/build.log" >&2; echo "the build of RoundTripCounts failed" >&2; exit 1; }
# valgrind 3.19 cannot read the DWARF 5 that Swift 6.3 writes: count on a copy without it (symbols stay).
cp Benchmarks/.build/release/RoundTripCounts "$scratch/RoundTripCounts"
strip --strip-debug "$scratch/RoundTripCounts"
[[ -n "$keep" ]] && mkdir -p "$keep"

# The instructions of one run's counted round trips: the second of the dumps made where they begin and end.
counted() {
    local kind=$1 file=$2
    valgrind --tool=callgrind --dump-before='*countedPhaseBoundary*' --callgrind-out-file="$file" \
        "$scratch/RoundTripCounts" "$kind" "$count" > "$file.log" 2>&1 || { cat "$file.log" >&2; return 1; }
    sed -n 's/^summary: //p' "$file.2"
}

figures="$scratch/figures.txt"
: > "$figures"
for kind in $kinds; do
    for run in $(seq 1 "$repeats"); do
        total=$(counted "$kind" "$scratch/$kind-$run.out")
        [[ -n "$total" ]] || { echo "$kind: callgrind made no dump of the counted round trips" >&2; exit 1; }
        per=$((total / count))
        echo "$kind run $run: $per instructions a round trip ($total for $count)"
        echo "$kind $run $per $total" >> "$figures"
        if [[ -n "$keep" ]]; then cp "$scratch/$kind-$run.out.2" "$keep/$kind-$run.out"; fi
    done
done

if [[ -n "$output" ]]; then
    python3 - "$figures" "$output" "$count" << 'PY'
import json, platform, subprocess, sys
figures, output, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
def run(*command):
    try:
        return subprocess.run(command, capture_output=True, text=True).stdout.strip()
    except OSError:
        return ""
cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
           platform.machine())
kinds = {}
for line in open(figures):
    kind, number, per, total = line.split()
    kinds.setdefault(kind, []).append({"run": int(number), "instructionsPerRoundTrip": int(per),
                                       "instructionsCounted": int(total)})
document = {
    "what": "user-space instructions a 64-byte round trip costs, both ends in one process, callgrind",
    "command": "Scripts/count-instructions.sh",
    "roundTripsCounted": count,
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
with open(output, "w") as file:
    json.dump(document, file, indent=2, sort_keys=True)
    file.write("\n")
PY
    echo "wrote $output"
fi
