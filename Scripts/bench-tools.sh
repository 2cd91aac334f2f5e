#!/usr/bin/env bash
# The benchmark tools against the well-known ones, side by side on loopback (127.0.0.1), release builds:
# the figures behind the first rows of the README's table. Each round runs, one after the other:
#   baselines    Scripts/bench-baselines.sh --repeats 1: iperf3 one stream, sockperf ping-pong 64 B,
#                ZeroMQ PUSH/PULL 1 MiB, ZeroMQ REQ/REP 64 B (DURATION s each)
#   library      the library alone, in one process (Benchmarks/, SessionBenchmarks): OneWay1MiB.plain and
#                RoundTrip64B.plain, p50 wall clock per message
#   test-runner  against a reflector (--connect, no DNS-SD), plain as the baselines are:
#                  bulk        --test bulk -t DURATION (one stream, one way: iperf3's figure)
#                  bulk-1mib   --test bulk --size 1048576 -t DURATION (1 MiB messages one way)
#                  rtt-64      --test data --size 64 (one in flight, 20,000 measured after 2,000)
#                  bulk-tls    --test bulk -t DURATION encrypted (TLS 1.3, the tools' default), for reference
# Every ratio is taken inside one round (the two figures measured minutes apart at most), then the
# script gives each ratio's range and median over the rounds. Unpinned by default; with PIN=split each end
# runs on a core of its own, as on two hosts: servers (the reflector, iperf3's, sockperf's) and the library's
# first event loop on CPU 0, clients and its second loop on CPU 1 (Scripts/loopback-tools.sh, pin_ends).
# Last, memory: a reflector (encryption required) serves 8 runners at once, each `--test bulk -t DURATION`;
# its peak RSS (VmHWM) is the figure.
#
# Usage: Scripts/bench-tools.sh [--rounds N] [--duration S] [--output PATH]
#   --rounds N     rounds (default 3)
#   --duration S   seconds of each timed run (default 10)
#   --output PATH  the summary document (default results/runs/bench-tools-<UTC date>.json); every run's own
#                  document lands beside it in a folder of the same name without .json
# Env: BIN, a folder holding release builds of reflector and test-runner (default: build them); PIN.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { echo "usage: $0 [--rounds N] [--duration SECONDS] [--output PATH]" >&2; exit 2; }
rounds=3 duration=10 output=results/runs/bench-tools-$(date -u +%Y-%m-%d).json
while [ $# -gt 0 ]; do
    case "$1" in
    --rounds) [ $# -ge 2 ] || usage; rounds=$2; shift 2 ;;
    --duration) [ $# -ge 2 ] || usage; duration=$2; shift 2 ;;
    --output) [ $# -ge 2 ] || usage; output=$2; shift 2 ;;
    *) usage ;;
    esac
done
[[ "$rounds" =~ ^[1-9][0-9]*$ && "$duration" =~ ^[1-9][0-9]*$ ]] || usage
log() { echo "bench-tools: $*" >&2; }
# shellcheck source=Scripts/loopback-tools.sh
. Scripts/loopback-tools.sh
pin_ends none

Scripts/setup.sh > /dev/null
tools_binaries
swift build --package-path Benchmarks -c release 2>&1 | grep -E "error:|Compiling|Build complete" | tail -1 >&2

runs=${output%.json}
mkdir -p "$runs"
rm -rf "$runs"/*.json "$runs"/library-*
work=$(mktemp -d)
cleanup() {
    stop_reflector
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# library ROUND: the library's own figures, its percentiles (TSV, microseconds per message) in $runs/library-ROUND/.
library() {
    local dir="$runs/library-$1" filter='(OneWay1MiB|RoundTrip64B)\.plain'
    mkdir -p "$dir"
    swift package --package-path Benchmarks --allow-writing-to-package-directory benchmark baseline update \
        bench-tools --filter "$filter" --no-progress >"$dir/benchmarks.txt" 2>&1
    swift package --package-path Benchmarks --allow-writing-to-directory "$dir" benchmark baseline read \
        bench-tools --filter "$filter" --format histogramPercentiles --path "$dir" --no-progress >/dev/null 2>&1
}

# runner NAME OPTIONS...: one test-runner run, its document in $runs/NAME.json.
runner() {
    local name=$1; shift
    "${client_pin[@]}" "$bin/test-runner" run --connect "127.0.0.1:$reflector_port" --name bench-tools --quiet \
        --output "$runs/$name.json" "$@" >&2
}

start_reflector "$work/reflector.log" --encryption optional
log "reflector on 127.0.0.1:$reflector_port (encryption optional: plain or TLS, as each runner asks); pinning: $pinning"
for round in $(seq "$rounds"); do
    log "round $round of $rounds: baselines"
    Scripts/bench-baselines.sh --repeats 1 --duration "$duration" --output "$runs/baselines-$round.json"
    log "round $round: the library alone (Benchmarks/)"
    library "$round"
    log "round $round: test-runner"
    runner "bulk-$round" --test bulk -t "$duration" -i 0 --encryption none
    runner "bulk-1mib-$round" --test bulk --size 1048576 -t "$duration" -i 0 --encryption none
    runner "rtt-64-$round" --test data --size 64 --count 20000 --warmup 2000 --encryption none
    runner "bulk-tls-$round" --test bulk -t "$duration" -i 0
done
stop_reflector

log "memory: 8 runners at once, each --test bulk -t $duration, encryption required"
start_reflector "$work/reflector.log" --encryption required
pids=()
for i in $(seq 8); do
    runner "memory-$i" --test bulk -t "$duration" -i 0 & pids+=($!)
done
peak=0
while kill -0 "${pids[0]}" 2>/dev/null; do
    hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$reflector_pid/status")
    [ "$hwm" -gt "$peak" ] && peak=$hwm
    sleep 0.5
done
memory_failed=0
for pid in "${pids[@]}"; do wait "$pid" || memory_failed=1; done
peak=$(awk '/^VmHWM:/ { print $2 }' "/proc/$reflector_pid/status")
stop_reflector
[ "$memory_failed" -eq 0 ] || { log "a memory runner failed"; exit 1; }

python3 - "$runs" "$rounds" "$duration" "$peak" "$output" "$pinning" <<'EOF'
import datetime, json, os, platform, socket, statistics, sys
runs, rounds, duration, peak_kib, output, pinning = (sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]),
                                                     sys.argv[5], sys.argv[6])
def load(name):
    with open(os.path.join(runs, name + ".json")) as f:
        return json.load(f)
def library_p50_microseconds(r, benchmark):
    path = os.path.join(runs, f"library-{r}", f"bench-tools.SessionBenchmarks.{benchmark}.wallClock.histogram.percentiles.tsv")
    with open(path) as f:
        rows = dict(line.split("\t") for line in f.read().splitlines()[1:])
    return float(rows["50"])
def bulk_rate(doc):
    forward = doc["bulk"]["forward"]
    if forward["corruptedStreams"] or forward["failedStreams"]:
        sys.exit(f"a bulk run lost or corrupted streams: {forward}")
    return forward["bytesPerSecond"]
figures = []
for r in range(1, rounds + 1):
    base = load(f"baselines-{r}")["baselines"]
    rtt = load(f"rtt-64-{r}")["results"][0]
    if rtt["echoed"] != rtt["sent"]:
        sys.exit(f"round {r}: {rtt['sent'] - rtt['echoed']} round trips lost")
    figures.append({
        "round": r,
        "iperf3BytesPerSecond": base["iperf3"]["median"]["bytesPerSecond"],
        "sockperfP50Microseconds": base["sockperf"]["median"]["p50Microseconds"],
        "zmqPushPullBytesPerSecond": base["zmq-push-pull"]["median"]["bytesPerSecond"],
        "zmqReqRepP50Microseconds": base["zmq-req-rep"]["median"]["p50Microseconds"],
        "library1MiBBytesPerSecond": (1 << 20) / library_p50_microseconds(r, "OneWay1MiB.plain") * 1e6,
        "libraryRoundTripP50Microseconds": library_p50_microseconds(r, "RoundTrip64B.plain"),
        "runnerBulkBytesPerSecond": bulk_rate(load(f"bulk-{r}")),
        "runnerBulk1MiBBytesPerSecond": bulk_rate(load(f"bulk-1mib-{r}")),
        "runnerRoundTripP50Microseconds": rtt["roundTrip"]["p50Nanoseconds"] / 1e3,
        "runnerBulkEncryptedBytesPerSecond": bulk_rate(load(f"bulk-tls-{r}")),
    })
# name: (numerator, denominator, "at least"/"at most", bound)
targets = {
    "runner 1 MiB one way / library alone 1 MiB one way": ("runnerBulk1MiBBytesPerSecond", "library1MiBBytesPerSecond", "at least", 0.9),
    "runner 1 MiB one way / ZeroMQ PUSH/PULL 1 MiB": ("runnerBulk1MiBBytesPerSecond", "zmqPushPullBytesPerSecond", "at least", 1.0),
    "runner 64 B round trip p50 / sockperf ping-pong p50": ("runnerRoundTripP50Microseconds", "sockperfP50Microseconds", "at most", 1.3),
    "runner 64 B round trip p50 / ZeroMQ REQ/REP p50": ("runnerRoundTripP50Microseconds", "zmqReqRepP50Microseconds", "at most", 1.0),
    "runner bulk -t, one stream / iperf3 -t, one stream": ("runnerBulkBytesPerSecond", "iperf3BytesPerSecond", "at least", 0.8),
}
ratios = []
for name, (numerator, denominator, sense, bound) in targets.items():
    values = [f[numerator] / f[denominator] for f in figures]
    median = statistics.median(values)
    met = median >= bound if sense == "at least" else median <= bound
    ratios.append({"name": name, "target": f"{sense} {bound}", "perRound": values, "min": min(values),
                   "max": max(values), "median": median, "met": met})
memory_mib = peak_kib / 1024
cpu_model = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                  if line.startswith("model name")), platform.machine())
tool = load("bulk-1")["tool"]
document = {
    "schemaVersion": 2,
    "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    "host": {"hostname": socket.gethostname(), "kernel": platform.release(), "cpuModel": cpu_model,
             "cpuCount": os.cpu_count()},
    "tool": tool,
    "plan": {"rounds": rounds, "durationSeconds": duration, "address": "127.0.0.1", "build": "release",
             "encryption": "none for every ratio (as the baselines); TLS 1.3 for runnerBulkEncrypted and memory",
             "runs": os.path.basename(runs) + "/", "pinning": pinning},
    "figures": figures,
    "ratios": ratios,
    "memory": {"runners": 8, "test": f"--test bulk -t {duration}, encryption required",
               "reflectorPeakRSSMiB": memory_mib, "target": "under 64", "met": memory_mib < 64},
}
with open(output, "w") as f:
    json.dump(document, f, indent=2)
    f.write("\n")
print(f"{'target':54} {'median':>8} {'range':>15}  goal")
for ratio in ratios:
    print(f"{ratio['name']:54} {ratio['median']:8.2f} {ratio['min']:7.2f}-{ratio['max']:<7.2f}  "
          f"{ratio['target']}: {'met' if ratio['met'] else 'NOT met'}")
print(f"{'reflector peak RSS, 8 runners at full speed (MiB)':54} {memory_mib:8.1f} {'':15}  under 64: "
      f"{'met' if memory_mib < 64 else 'NOT met'}")
print(f"written to {output}")
EOF
