#!/usr/bin/env bash
# Baselines on loopback (127.0.0.1) from well-known tools, to set beside the test-runner's figures taken on
# the same machine at the same time: what plain TCP, and a mature messaging library, reach here.
#
#   iperf3        one TCP stream, one direction, DURATION s: bytes/s at the receiver
#                 (the ceiling for the test-runner's 1 MiB throughput).
#   sockperf      TCP ping-pong, 64-byte messages, DURATION s: round trip p50/p90/p99 in us
#                 (the floor for the test-runner's 64 B round trip over raw TCP).
#   zmq-push-pull ZeroMQ PUSH -> PULL, 1 MiB messages, DURATION s (at most 100,000 messages): bytes/s
#                 at the receiver (Scripts/baselines/zmq-bench.c).
#   zmq-req-rep   ZeroMQ REQ <-> REP, 64-byte messages, DURATION s (at most 1,000,000 round trips) after
#                 1,000 warm-up round trips: round trip p50/p90/p99 in us, nearest rank.
#
# Pinned defaults (override through the environment or the options):
#   DURATION=10  seconds per run of every baseline (--duration S); iperf3 -t, sockperf -t, zmq-bench SECONDS
#   R=3          runs of each baseline (--repeats N); the baselines alternate: round 1 runs all four, then round 2...
#   PORT_BASE=15201  iperf3 on PORT_BASE, sockperf +1, zmq push/pull +2, zmq req/rep +3 (all on 127.0.0.1)
#   PIN=split: each server on CPU 0, each client on CPU 1 (Scripts/loopback-tools.sh, pin_ends); unpinned by
#   default (PIN=none), as the tools' loopback runs. No extra iperf3/sockperf tuning: their defaults.
# Output: one JSON document (schemaVersion 1) on stdout, or in PATH with --output PATH; progress on stderr.
# Per baseline: every run's figures, and the median over runs of each figure (the mean of the middle two
# when R is even). Needs root (or sudo) only to install the missing Debian packages.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { echo "usage: $0 [--output PATH] [--duration SECONDS] [--repeats N]" >&2; exit 2; }
output="" duration=${DURATION:-10} repeats=${R:-3} port_base=${PORT_BASE:-15201}
while [ $# -gt 0 ]; do
    case "$1" in
    --output) [ $# -ge 2 ] || usage; output=$2; shift 2 ;;
    --duration) [ $# -ge 2 ] || usage; duration=$2; shift 2 ;;
    --repeats) [ $# -ge 2 ] || usage; repeats=$2; shift 2 ;;
    *) usage ;;
    esac
done
[[ "$duration" =~ ^[1-9][0-9]*$ && "$repeats" =~ ^[1-9][0-9]*$ && "$port_base" =~ ^[1-9][0-9]*$ ]] || usage
iperf_port=$port_base sockperf_port=$((port_base + 1)) push_port=$((port_base + 2)) req_port=$((port_base + 3))
# Every client gets DURATION plus this much before timeout(1) kills it (connection, warm-up, report).
client_limit=$((duration + 30))
log() { echo "bench-baselines: $*" >&2; }
# shellcheck source=Scripts/loopback-tools.sh
. Scripts/loopback-tools.sh
pin_ends none

# 1. The Debian packages, only those missing (as Scripts/setup.sh does). iproute2 for ss (waiting for listeners).
packages=(iperf3 sockperf libzmq3-dev gcc libc6-dev iproute2 python3 coreutils)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    sudo_cmd=""; [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
    log "installing: ${missing[*]}"
    $sudo_cmd apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >&2
fi

# 2. The ZeroMQ client/server, in .build-baselines/ (ignored by git through .build-*/).
build=.build-baselines
mkdir -p "$build"
gcc -O2 -Wall -Wextra -std=c99 -o "$build/zmq-bench" Scripts/baselines/zmq-bench.c -lzmq
zmq_bench=$build/zmq-bench

# Background servers are stopped at exit, whatever happens. sockperf's server only notices SIGTERM when
# its blocking receive returns, so anything still alive 2 s after SIGTERM gets SIGKILL.
tmp=$(mktemp -d)
servers=() zmq_server=""
stop() {
    kill -TERM "$1" 2>/dev/null || return 0
    for _ in $(seq 20); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$1" 2>/dev/null || true
    wait "$1" 2>/dev/null || true
}
cleanup() {
    for pid in ${servers[@]+"${servers[@]}"} $zmq_server; do stop "$pid"; done
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Waits (at most 5 s) until something listens on 127.0.0.1:PORT; fails if the server PID has died.
wait_listening() {
    local port=$1 pid=$2 name=$3
    for _ in $(seq 50); do
        ss -Hltn "sport = :$port" | grep -q . && return 0
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    log "$name did not listen on port $port:"; cat "$tmp/$name.log" >&2; exit 1
}

# 3. The long-lived servers: iperf3 and sockperf serve one client after another.
"${server_pin[@]}" iperf3 --server --bind 127.0.0.1 --port "$iperf_port" >"$tmp/iperf3-server.log" 2>&1 &
servers+=($!)
wait_listening "$iperf_port" $! iperf3-server
"${server_pin[@]}" sockperf server --tcp -i 127.0.0.1 -p "$sockperf_port" >"$tmp/sockperf-server.log" 2>&1 &
servers+=($!)
wait_listening "$sockperf_port" $! sockperf-server

runs=$tmp/runs.jsonl
: >"$runs"

# iperf3: one stream (-P 1), client sends (no -R), JSON report (-J); the figure is the receiver's
# sum_received bits_per_second / 8 over the whole -t window (slow start included, as for a transfer).
run_iperf3() {
    timeout "$client_limit" "${client_pin[@]}" iperf3 --client 127.0.0.1 --port "$iperf_port" --time "$duration" \
        --parallel 1 --json >"$tmp/iperf3.json"
    python3 - "$tmp/iperf3.json" "$1" >>"$runs" <<'EOF'
import json, sys
end = json.load(open(sys.argv[1]))["end"]
received = end["sum_received"]
print(json.dumps({"baseline": "iperf3", "run": int(sys.argv[2]),
                  "bytesPerSecond": received["bits_per_second"] / 8, "bytes": received["bytes"],
                  "seconds": received["seconds"], "retransmits": end["sum_sent"].get("retransmits")}))
EOF
}

# sockperf: ping-pong (one message in flight), --tcp (default is UDP; TCP_NODELAY is its TCP default),
# -m 64, -t DURATION, --full-rtt (without it sockperf reports "latency" = RTT / 2). Its own warm-up
# (400 ms) is left out of the percentiles, which it prints as "percentile 50.000 = 12.418" in us.
run_sockperf() {
    timeout "$client_limit" "${client_pin[@]}" sockperf ping-pong --tcp -i 127.0.0.1 -p "$sockperf_port" -m 64 \
        -t "$duration" --full-rtt >"$tmp/sockperf.txt" 2>&1
    python3 - "$tmp/sockperf.txt" "$1" >>"$runs" <<'EOF'
import json, re, sys
text = re.sub(r"\x1b\[[0-9;]*m", "", open(sys.argv[1]).read())
if "Round trip is" not in text:
    sys.exit("sockperf: no round-trip summary (was --full-rtt honoured?):\n" + text)
figure = lambda p: float(re.search(r"percentile %s\.000 =\s*([0-9.]+)" % p, text).group(1))
print(json.dumps({"baseline": "sockperf", "run": int(sys.argv[2]),
                  "p50Microseconds": figure(50), "p90Microseconds": figure(90), "p99Microseconds": figure(99),
                  "samples": int(re.search(r"Total (\d+) observations", text).group(1))}))
EOF
}

# zmq-bench: a fresh server process per run (it reports, then stops at the client's end message or at
# DURATION + 10 s); the client is bounded by its own deadline and by timeout(1).
run_zmq() {
    local name=$1 server=$2 client=$3 port=$4 size=$5 count=$6 run=$7 endpoint="tcp://127.0.0.1:$4"
    "${server_pin[@]}" "$zmq_bench" "$server" "$endpoint" "$duration" >"$tmp/$name.out" 2>"$tmp/$name.log" &
    zmq_server=$!
    wait_listening "$port" "$zmq_server" "$name"
    timeout "$client_limit" "${client_pin[@]}" "$zmq_bench" "$client" "$endpoint" "$size" "$duration" "$count" >"$tmp/$name.client"
    wait "$zmq_server" || { zmq_server=""; log "$name server failed:"; cat "$tmp/$name.log" >&2; exit 1; }
    zmq_server=""  # reaped: its id must not be signalled at exit (it may belong to another process by then)
    # REQ/REP: the client measures the round trips; PUSH/PULL: the receiver (the server) measures bytes/s.
    local result=$tmp/$name.out
    [ "$client" = req ] && result=$tmp/$name.client
    python3 -c 'import json, sys; r = json.load(open(sys.argv[1]))
print(json.dumps({"baseline": sys.argv[2], "run": int(sys.argv[3]), **r}))' "$result" "$name" "$run" >>"$runs"
}

# 4. R rounds, each running the four baselines one after the other.
for run in $(seq "$repeats"); do
    log "round $run/$repeats: iperf3"; run_iperf3 "$run"
    log "round $run/$repeats: sockperf"; run_sockperf "$run"
    log "round $run/$repeats: zmq push/pull"; run_zmq zmq-push-pull pull push "$push_port" 1048576 100000 "$run"
    log "round $run/$repeats: zmq req/rep"; run_zmq zmq-req-rep rep req "$req_port" 64 1000000 "$run"
done

# 5. One JSON document: host, tool versions, parameters, and per baseline its runs and medians.
iperf3_version=$(iperf3 --version | head -n 1)
sockperf_version=$(sockperf --version 2>&1 | sed -n 's/^sockperf, version //p' | head -n 1)
zmq_version=$("$zmq_bench" version)
python3 - "$runs" "$iperf3_version" "$sockperf_version" "$zmq_version" "$duration" "$repeats" "$port_base" "$pinning" \
    >"$tmp/result.json" <<'EOF'
import datetime, json, os, platform, socket, statistics, sys
runs_path, iperf3_version, sockperf_version, zmq_version, duration, repeats, port_base, pinning = sys.argv[1:]
runs = [json.loads(line) for line in open(runs_path)]
cpu_model = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                  if line.startswith("model name")), platform.machine())
descriptions = {
    "iperf3": ("bytesPerSecond", "one TCP stream, client to server, -t %s" % duration),
    "sockperf": ("latency", "TCP ping-pong, 64 B, -t %s, --full-rtt" % duration),
    "zmq-push-pull": ("bytesPerSecond", "ZeroMQ PUSH/PULL over TCP, 1 MiB messages, %s s or 100000 messages" % duration),
    "zmq-req-rep": ("latency", "ZeroMQ REQ/REP over TCP, 64 B, %s s or 1000000 round trips, 1000 warm-up" % duration),
}
baselines = {}
for name, (kind, description) in descriptions.items():
    mine = [{k: v for k, v in r.items() if k != "baseline"} for r in runs if r["baseline"] == name]
    figures = ["bytesPerSecond"] if kind == "bytesPerSecond" else ["p50Microseconds", "p90Microseconds", "p99Microseconds"]
    baselines[name] = {"description": description, "runs": mine,
                       "median": {f: statistics.median(r[f] for r in mine) for f in figures}}
document = {
    "schemaVersion": 1,
    "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    "host": {"hostname": socket.gethostname(), "kernel": platform.release(), "cpuModel": cpu_model,
             "cpuCount": os.cpu_count()},
    "tools": {"iperf3": iperf3_version, "sockperf": sockperf_version, "zmq": zmq_version},
    "parameters": {"durationSeconds": int(duration), "repeats": int(repeats), "address": "127.0.0.1",
                   "ports": {"iperf3": int(port_base), "sockperf": int(port_base) + 1,
                             "zmqPushPull": int(port_base) + 2, "zmqReqRep": int(port_base) + 3},
                   "pushPullMessageBytes": 1048576, "pingPongMessageBytes": 64, "zmqHighWaterMark": 64,
                   "percentiles": "nearest rank (zmq-bench); sockperf's own", "coresPinned": pinning != "none",
                   "pinning": pinning},
    "baselines": baselines,
}
print(json.dumps(document, indent=2))
EOF
if [ -n "$output" ]; then
    cp "$tmp/result.json" "$output"
    log "written to $output"
else
    cat "$tmp/result.json"
fi
