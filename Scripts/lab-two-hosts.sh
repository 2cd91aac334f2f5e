#!/usr/bin/env bash
# lab-two-hosts.sh: the README's "Measure a link on two hosts", run in the lab (two network namespaces, each
# with its own avahi-daemon, on one bridge): the reflector on host A started as the README starts it, then
# on host B the README's test-runner commands, by DNS-SD and by address. The lab has no firewall, so the
# README's ufw lines are the one step left out. Passes when every command exits 0 and every document says what it should.
# Needs root.
# Env: LAB_BIN (folder holding reflector and test-runner; default: swift build -c release, as the README),
#      LAB_RESULTS (a folder to copy the documents to; default: not kept).
set -euo pipefail
cd "$(dirname "$0")/.."
export LAB_PREFIX=p2ptw LAB_DIR=/run/p2p-lab-two-hosts
lab=$(pwd)/Scripts/lab.sh
Scripts/setup.sh --lab > /dev/null
bin=${LAB_BIN:-}
if [ -z "$bin" ]; then
    swift build -c release --product reflector && swift build -c release --product test-runner
    bin=$(swift build -c release --show-bin-path)
fi
bin=$(cd "$bin" && pwd)
work=$(mktemp -d)
cleanup() {
    "$lab" down > /dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
"$lab" down > /dev/null
"$lab" up 2
a=$("$lab" hosts | sed -n 1p)
b=$("$lab" hosts | sed -n 2p)
address=$("$lab" addr "$a")

echo "== host A ($a, $address): the reflector, as the README starts it"
"$lab" exec "$a" timeout 300 "$bin/reflector" > "$work/reflector.log" 2>&1 &
for _ in $(seq 100); do grep -q ' ready ' "$work/reflector.log" && break; sleep 0.1; done
grep ' ready ' "$work/reflector.log" || { cat "$work/reflector.log" >&2; exit 1; }

# The README's commands on host B, in a folder of their own (results/runs/ is relative to it).
mkdir -p "$work/b"
failed=0
step() {
    echo "== host B ($b): $*"
    if ! (cd "$work/b" && "$lab" exec "$b" "$bin/test-runner" "$@"); then
        echo "FAILED: test-runner $*" >&2
        failed=1
    fi
}
step run --test bulk -t 10
step run --test bulk -t 10 -c "$address"
step run --size 64 --count 2000 -c "$address"

python3 - "$work/b/results/runs" "$address" <<'CHECK' || failed=1
import glob, json, sys
folder, address = sys.argv[1], sys.argv[2]
documents = [json.load(open(path)) for path in sorted(glob.glob(f"{folder}/*.json"))]
assert len(documents) == 3, f"{len(documents)} documents in {folder}"
bulk_dns, bulk_direct, data = documents
for name, doc in [("bulk by DNS-SD", bulk_dns), ("bulk by address", bulk_direct), ("data by address", data)]:
    assert doc.get("error") is None, f"{name}: {doc.get('error')}"
    assert doc["connection"]["remoteAddress"].startswith(address + ":"), f"{name}: {doc['connection']}"
    print(f"{name}: {doc['connection']['method']} to {doc['connection']['remoteAddress']} "
          f"via {doc['connection'].get('interface')}, {doc['connection']['linkSecurity']}")
assert bulk_dns["connection"]["method"] == "dns-sd" and bulk_direct["connection"]["method"] == "direct"
for name, doc in [("bulk by DNS-SD", bulk_dns), ("bulk by address", bulk_direct)]:
    forward = doc["bulk"]["forward"]
    assert forward["failedStreams"] == 0 and forward["corruptedStreams"] == 0, forward
    print(f"{name}: {forward['bytesPerSecond'] / 1e9:.2f} GB/s over {forward['seconds']:.1f} s")
result = data["results"][0]
assert result["echoed"] == 2000 and result["lost"] == 0, result
print(f"data: 64 B round trip p50 {result['roundTrip']['p50Nanoseconds'] / 1e3:.1f} us")
CHECK
if [ -n "${LAB_RESULTS:-}" ]; then
    mkdir -p "$LAB_RESULTS"
    cp "$work"/b/results/runs/*.json "$LAB_RESULTS"/
fi
[ "$failed" = 0 ] && echo "PASS: the README's two-host commands work in the lab" || { echo "FAIL"; exit 1; }
