#!/usr/bin/env bash
# The main job on one host: a reflector and a test-runner against each other, release builds, then a short
# table. What it runs (each result as JSON in results/demo/):
#   bulk      10 s of throughput, one stream one way (as iperf3 -t 10), a report every second
#   data      64-byte round trips, one in flight (latency), 2,000 measured
#   raw-tcp   the same round trips over plain TCP (the baseline); the two alternate over 5 rounds
#             (data-N, raw-tcp-N), the ratio taken within each round, since one pair moves with the host
#   unreliable  the same as UDP datagrams (loss, reorder, jitter)
#   stream, resource  4 echoed streams of 4 MiB, a 16 MiB file twice confirmed by SHA-256
#   folder    a folder of 1,000 small files confirmed file by file, with 100 probes a second beside it
# Encryption is required (the tools' default), except for the raw baseline's pair: data and raw-tcp run
# plain there too (--encryption none) so that they compare like with like.
# During the round trips the reflector runs on CPU 0 and the runner on CPU 1, each end on a core of its own as
# on two hosts (with both unpinned, a round trip took 25 or 70 us by whether the scheduler put the two on one
# core); the other tests, which use more threads a side, run unpinned.
# The tools are built by Scripts/build-tools.sh: in release without Swift's run-time exclusivity checks, which
# it explains (EXCLUSIVITY=checked keeps them).
# Env: CONFIGURATION (release, the default; debug builds faster but measures several times slower and then
# prints no ratio), DEMO_SECONDS (the bulk test's seconds, default 10), PIN=none (no pinning).
set -euo pipefail
cd "$(dirname "$0")/.."
configuration=${CONFIGURATION:-release}
seconds=${DEMO_SECONDS:-10}
cat <<INTRO
== PeerConnectivity demo: reflector and test-runner on this host
   1. set up: Debian packages (avahi-daemon and the DNS-SD library), dbus and avahi-daemon
   2. build reflector and test-runner ($configuration; the first release build takes about 10 minutes on 2 cores)
   3. run: bulk throughput ${seconds} s, 64-byte round trips (PeerConnectivity and plain TCP, 5 rounds), unreliable,
      echoed streams, a resource, a folder; about $((seconds + 25)) s
   4. print a short table; every run's JSON lands in results/demo/
INTRO
Scripts/setup.sh
export AVAHI_COMPAT_NOWARN=1
echo "== building reflector and test-runner ($configuration)"
started=$(date +%s)
bin=$(CONFIGURATION=$configuration Scripts/build-tools.sh)
echo "   built in $(( $(date +%s) - started )) s"
service="pcb-demo-$$"
service=${service:0:15}
out=results/demo
# shellcheck source=Scripts/loopback-tools.sh
. Scripts/loopback-tools.sh
pin_ends split
mkdir -p "$out"
rm -f "$out"/*.json
log=$(mktemp)

# Ephemeral ports: the fixed defaults (7447...) may be taken by a reflector already running here.
# Encryption optional: each runner's own --encryption decides (required by default, none for the pair
# compared with plain TCP).
"$bin/reflector" --service "$service" --name demo-reflector --port 0 --raw-echo-port 0 --udp-ports ephemeral \
    --encryption optional >"$log" 2>&1 &
reflector=$!
trap 'kill "$reflector" 2>/dev/null || true; rm -f "$log"' EXIT
for _ in $(seq 100); do grep -q ' ready ' "$log" && break; sleep 0.1; done
grep ' ready ' "$log" || { echo "the reflector did not start:" >&2; cat "$log" >&2; exit 1; }

target=(--service "$service" --reflector demo-reflector --name demo)
run() {
    local label=$1; shift
    echo "== $label"
    "$bin/test-runner" run "${target[@]}" "$@" --output "$out/$label.json" | sed 's/^/   /'
}
run bulk --test bulk -t "$seconds"
echo "== data and raw-tcp: 64-byte round trips, plain, 5 alternating rounds (pinning $pinning)"
pin_server_for_a_while "$reflector"
for round in 1 2 3 4 5; do
    # The first of the two goes first in odd rounds, second in even ones.
    order=(data raw-tcp)
    (( round % 2 )) || order=(raw-tcp data)
    for test in "${order[@]}"; do
        "${client_pin[@]}" "$bin/test-runner" run "${target[@]}" --test "$test" --size 64 --count 2000 --warmup 200 \
            --encryption none --quiet --output "$out/$test-$round.json"
    done
done
unpin_server "$reflector"
run unreliable --mode unreliable --size 64,1024,16384 --count 1000 --warmup 100 --timeout 1
run stream --test stream --streams 4 --bytes 4194304
run resource --test resource --bytes 16777216 --count 2
run folder --test folder --files 1000 --beside-echo 100

kill -TERM "$reflector"
wait "$reflector" || true
python3 - "$out" "$configuration" "$pinning" <<'TABLE'
import json, sys
out, configuration, pinning = sys.argv[1], sys.argv[2], sys.argv[3]
def load(name):
    with open(f"{out}/{name}.json") as f: return json.load(f)
bulk = load("bulk")
rate = bulk["bulk"]["forward"]["bytesPerSecond"]
def p50(name): return load(name)["results"][0]["roundTrip"]["p50Nanoseconds"] / 1e3
ours = [p50(f"data-{r}") for r in range(1, 6)]
base = [p50(f"raw-tcp-{r}") for r in range(1, 6)]
ratios = sorted(o / b for o, b in zip(ours, base))
unreliable = load("unreliable")["results"]
print()
checks = "" if bulk["tool"].get("exclusivityChecks", True) else ", exclusivity checks off"
print(f"== results ({configuration} build{checks}, loopback, this host; JSON in {out}/)")
print(f"   throughput, one stream, encrypted (TLS 1.3)    {rate / 1e9:6.2f} GB/s ({rate * 8 / 1e9:.1f} Gbit/s)")
print(f"   64-byte round trip p50, PeerConnectivity      {min(ours):6.1f}-{max(ours):.1f} us (5 rounds, {pinning})")
print(f"   64-byte round trip p50, plain TCP             {min(base):6.1f}-{max(base):.1f} us")
if configuration == "release":
    print(f"     ratio round by round {ratios[0]:.2f}-{ratios[-1]:.2f}, median {ratios[2]:.2f}")
else:
    print("     no ratio: debug build")
for result in unreliable:
    jitter = result.get("jitterNanoseconds", 0) / 1e3
    print(f"   unreliable {result['size']:>6} B: {result['echoed']}/{result['sent']} echoed, p50 "
          f"{result['roundTrip']['p50Nanoseconds'] / 1e3:.1f} us, jitter {jitter:.1f} us")
stream, resource = load("stream")["streams"], load("resource")["resources"]
print(f"   streams: {stream['completed']}/{stream['streamCount']} echoed intact; "
      f"resources: {resource['completed']}/{resource['planned']} confirmed by SHA-256")
folder = load("folder")["resources"]
beside = folder["besideEcho"]
print(f"   folder of {folder['files']} files: {folder['filesPerSecond']:,.0f} files/s, "
      f"{folder['completed']}/{folder['planned']} confirmed file by file")
print(f"   a message's round trip beside it, p99       {beside['duringTransfers']['roundTrip']['p99Nanoseconds'] / 1e6:6.2f} ms"
      f" (idle {beside['idle']['roundTrip']['p99Nanoseconds'] / 1e6:.2f} ms)")
TABLE
