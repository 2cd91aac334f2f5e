#!/usr/bin/env bash
# lab-many.sh: many runners against one reflector at once, as iperf3's server refuses. Brings up a lab of
# MANY_HOSTS + 1 hosts (its own: prefix p2pm, 10.84.0.x), shapes each runner host's eth0 with `tbf rate RATE
# burst 32kb latency 50ms` (equal links into the reflector's host), runs `reflector --encryption none` on the
# first host with room for every runner, and starts MANY_PER_HOST runners on each other host at once:
#   `test-runner run --connect HOST --test bulk -t MANY_TIME_S --encryption none --name hN-rM`.
# Checks, each printed PASS/FAIL with its figures:
#   - every runner completes (exit 0, a document without an error, every byte checked);
#   - every document names, as the reflector told it, every other runner it was served beside, and only
#     runners of this run (strict: all the others, since they all ran at once; sanity: at least one);
#   - the shares are fair: Jain's index of the runners' throughputs, (sum x)^2 / (n sum x^2), at least 0.9
#     (sanity: printed, and at least 0.5, as debug builds on a loaded machine may not keep up with the links).
# MANY_CHECKS=strict (default: 8 hosts of 8 runners, 10 s, 40mbit links) or sanity (the test suite's: 2 hosts
# of 3 runners, 4 s, 10mbit). Writes a summary (every runner's throughput, the index, the commands, the tool's
# version) to MANY_OUT when set, and keeps every document in the logs folder. Takes the lab down whatever
# happens; exits 1 if a check failed, 2 when it cannot run (not root, no tc). Needs root and
# Scripts/setup.sh --lab.
# Env: LAB_BIN (folder with reflector and test-runner; default: swift build, debug), MANY_CHECKS, MANY_HOSTS,
#      MANY_PER_HOST, MANY_TIME_S, MANY_RATE, MANY_OUT, MANY_PREFIX (p2pm), MANY_DIR, MANY_SUBNET (10.84.0),
#      LAB_SKIP_SETUP (1: do not run Scripts/setup.sh --lab).
set -euo pipefail
cd "$(dirname "$0")/.."
export LAB_PREFIX=${MANY_PREFIX:-p2pm} LAB_DIR=${MANY_DIR:-/run/p2p-many-lab}
export LAB_SUBNET=${MANY_SUBNET:-10.84.0} AVAHI_COMPAT_NOWARN=1
checks=${MANY_CHECKS:-strict}
if [[ $checks == sanity ]]; then
    hosts_wanted=${MANY_HOSTS:-2} per_host=${MANY_PER_HOST:-3} seconds=${MANY_TIME_S:-4} rate=${MANY_RATE:-10mbit}
else
    hosts_wanted=${MANY_HOSTS:-8} per_host=${MANY_PER_HOST:-8} seconds=${MANY_TIME_S:-10} rate=${MANY_RATE:-40mbit}
fi
runners=$((hosts_wanted * per_host))

# shellcheck source=Scripts/lab-two-host-prologue.sh
source Scripts/lab-two-host-prologue.sh
lab_binaries lab-many tc
lab_up lab-many $((hosts_wanted + 1))
reflector_host=${hosts[0]}
address=$("$lab" addr "$reflector_host")
# Room for every runner, and every invitation at once (the advertiser's default takes 8 a second).
"$lab" exec "$reflector_host" timeout 600 "$bin/reflector" --no-dnssd --name lab-many --port 7100 \
    --encryption none --max-runners "$runners" --max-runners-per-address "$per_host" \
    --invitation-rate 10000 >"$logs/reflector.log" 2>&1 &
for _ in $(seq 100); do
    "$lab" exec "$reflector_host" ss -Hltn "sport = :7100" | grep -q . && break
    sleep 0.1
done
for host in "${hosts[@]:1}"; do
    "$lab" exec "$host" tc qdisc replace dev eth0 root tbf rate "$rate" burst 32kb latency 50ms
done

command=("$bin/test-runner" run --connect "$address:7100" --test bulk -t "$seconds" --encryption none)
pids=()
for h in $(seq "$hosts_wanted"); do
    for r in $(seq "$per_host"); do
        name="h$h-r$r"
        "$lab" exec "${hosts[$h]}" timeout $((seconds + 120)) "${command[@]}" --name "$name" \
            --output "$logs/$name.json" >"$logs/$name.log" 2>&1 &
        pids+=($!)
    done
done
failed_runs=0
for pid in "${pids[@]}"; do wait "$pid" || failed_runs=$((failed_runs + 1)); done

status=0
python3 - "$logs" "$checks" "$runners" "$rate" "$seconds" "${MANY_OUT:-}" "${command[*]##*/} --name hN-rM" \
    <<'EOF' || status=$?
import glob, json, os, sys
logs, mode, count, rate, seconds, out, command = sys.argv[1:8]
count = int(count)
checks, failed = [], False

def check(name, ok, detail):
    global failed
    failed |= not ok
    line = f"{'PASS' if ok else 'FAIL'}  {name:<58} {detail}"
    checks.append(line)
    print(line, flush=True)

documents, problems = {}, []
for path in sorted(glob.glob(os.path.join(logs, "h*-r*.json"))):
    name = os.path.basename(path)[:-5]
    try:
        documents[name] = json.load(open(path))
    except (OSError, ValueError) as error:
        problems.append(f"{name}: {error}")
rates = {}
for name, document in documents.items():
    forward = (document.get("bulk") or {}).get("forward") or {}
    if document.get("error") or not forward or forward.get("corruptedStreams") or forward.get("failedStreams"):
        problems.append(f"{name}: {document.get('error') or 'no forward bulk, or streams failed'}")
    else:
        rates[name] = forward["bytesPerSecond"] * 8
complete = len(rates) == count and not problems
check(f"all {count} runners complete", complete,
      f"{len(rates)} of {count} completed" + (f"; {problems[:3]}" if problems else ""))

everyone = {f"test-runner-{name}" for name in documents}
named, strangers, counts = 0, [], []
for name, document in documents.items():
    connection = document.get("connection") or {}
    others = {entry.rsplit(" (", 1)[0] for entry in connection.get("sharedWith") or []}
    counts.append(connection.get("sharedWithCount") or 0)
    strangers += sorted(others - everyone)
    wanted = everyone - {f"test-runner-{name}"}
    if (others == wanted) if mode != "sanity" else (others and others <= wanted):
        named += 1
check("every document names the runners it shared the reflector with", named == count and not strangers,
      f"{named} of {count} documents; others named per document {min(counts or [0])}-{max(counts or [0])}"
      + (f"; strangers {strangers[:3]}" if strangers else ""))

values = list(rates.values())
jain = sum(values) ** 2 / (len(values) * sum(v * v for v in values)) if values else 0.0
total = sum(values)
least = min(values) if values else 0
most = max(values) if values else 0
detail = (f"Jain's index {jain:.3f} over {len(values)} runners; each {least / 1e6:.2f}-{most / 1e6:.2f} Mbit/s, "
          f"{total / 1e6:.1f} Mbit/s in all")
check(f"the shares are fair (Jain's index >= {0.5 if mode == 'sanity' else 0.9})",
      jain >= (0.5 if mode == "sanity" else 0.9), detail)

version = next(iter(documents.values()), {}).get("tool")
summary = {"checkMode": mode, "runners": count, "rate": rate, "seconds": float(seconds), "command": command,
           "bitsPerSecond": rates, "jainIndex": jain, "tool": version, "checks": checks}
if out:
    with open(out, "w") as f:
        json.dump(summary, f, indent=2, sort_keys=True)
        f.write("\n")
sys.exit(1 if failed else 0)
EOF
echo
echo "lab-many: logs in $logs; $failed_runs runner process(es) exited non-zero"
echo "tc qdisc replace dev eth0 root tbf rate $rate burst 32kb latency 50ms (each runner host); $runners x ${command[*]##*/} --name hN-rM"
if ((status != 0)); then echo FAIL; exit 1; fi
echo PASS
