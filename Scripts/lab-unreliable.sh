#!/usr/bin/env bash
# lab-unreliable.sh: unreliable mode over a lossy link, and over one that drops every datagram. Brings up a
# 2-host lab (its own: prefix p2pu, 10.81.0.x), runs `reflector --encryption none` on the first host and, on
# the second, `test-runner run --reflector NAME --test data --mode unreliable --size 256 --count 200
# --window 16 --timeout 1 --encryption none`:
#   - UNRELIABLE_RUNS times (20) with 10 % of the datagrams to the reflector dropped, and as many with 30 %
#     (nftables in the reflector's host, input hook: `udp dport != 5353 numgen random mod 100 < PCT drop`;
#     multicast DNS is spared so that the runner finds the reflector). PASS when every run completes (exit 0)
#     and none says UDP seems blocked: a lossy path is not a blocked one.
#   - once with every datagram to the reflector dropped: PASS when the run exits 1 within BLOCKED_LIMIT_S
#     (8 s from the runner's start, finding and inviting the reflector included), saying that UDP seems
#     blocked and which ports to open.
# Runs go UNRELIABLE_PARALLEL (5) at a time, each a runner of its own: the reflector takes 17 per address.
# Prints one PASS/FAIL line per check with its figures (loss counted by the runs, their time), takes the lab
# down whatever happens, and exits 1 if any check failed; 2 when it cannot run (not root, no nft). Needs
# root and nft (Scripts/setup.sh --lab).
# Env: LAB_BIN (folder with reflector and test-runner; default: swift build, debug), UNRELIABLE_RUNS (20),
#      UNRELIABLE_LOSSES ("10 30"), UNRELIABLE_PARALLEL (5), BLOCKED_LIMIT_S (8), UNRELIABLE_PREFIX (p2pu),
#      UNRELIABLE_DIR, UNRELIABLE_SUBNET (10.81.0), LAB_SKIP_SETUP (1: do not run Scripts/setup.sh --lab).
set -euo pipefail
cd "$(dirname "$0")/.."
export LAB_PREFIX=${UNRELIABLE_PREFIX:-p2pu} LAB_DIR=${UNRELIABLE_DIR:-/run/p2p-unreliable-lab}
export LAB_SUBNET=${UNRELIABLE_SUBNET:-10.81.0} AVAHI_COMPAT_NOWARN=1
runs=${UNRELIABLE_RUNS:-20}
read -r -a losses <<<"${UNRELIABLE_LOSSES:-10 30}"
parallel=${UNRELIABLE_PARALLEL:-5}
blocked_limit=${BLOCKED_LIMIT_S:-8}
name=lab-unreliable

# shellcheck source=Scripts/lab-two-host-prologue.sh
source Scripts/lab-two-host-prologue.sh
lab_binaries "$name" nft
lab_up "$name" 2

results=()
failed=0
record() { # name, ok (0/1), detail
    local verdict=PASS
    if [[ $2 != 0 ]]; then verdict=FAIL; failed=1; fi
    results+=("$(printf '%-4s  %-52s %s' "$verdict" "$1" "$3")")
    echo "${results[-1]}"
}
now() { date +%s.%N; }

reflector_host=${hosts[0]} runner_host=${hosts[1]}
"$lab" exec "$reflector_host" timeout 1800 "$bin/reflector" --name "$name" --port 7100 --encryption none \
    >"$logs/reflector.log" 2>&1 &
for _ in $(seq 100); do
    "$lab" exec "$reflector_host" ss -Hltn "sport = :7100" | grep -q . && break
    sleep 0.1
done

# Drops PCT % (1-100) of the datagrams that reach the reflector's host, multicast DNS spared; 0: none.
drop_udp() {
    ip netns exec "$reflector_host" nft delete table inet lab_unreliable 2>/dev/null || true
    local pct=$1 rule
    ((pct > 0)) || return 0
    rule="udp dport != 5353 drop"
    ((pct >= 100)) || rule="udp dport != 5353 numgen random mod 100 < $pct drop"
    ip netns exec "$reflector_host" nft -f - <<EOF
table inet lab_unreliable {
    chain input {
        type filter hook input priority filter; policy accept;
        $rule
    }
}
EOF
}

# One run: its output in LOG.log, its document in LOG.json, its exit status and seconds in LOG.status.
run_one() {
    local log=$1 started status=0
    started=$(now)
    timeout 120 "$lab" exec "$runner_host" "$bin/test-runner" run --reflector "$name" --test data \
        --mode unreliable --size 256 --count 200 --window 16 --timeout 1 --encryption none \
        --name "$(basename "$log")" --output "$log.json" >"$log.log" 2>&1 || status=$?
    echo "$status $(python3 -c "print(round($(now) - $started, 2))")" >"$log.status"
}

for pct in "${losses[@]}"; do
    drop_udp "$pct"
    for ((first = 1; first <= runs; first += parallel)); do
        batch=()
        for ((i = first; i < first + parallel && i <= runs; i++)); do
            run_one "$logs/loss-$pct-$i" &
            batch+=($!)
        done
        # These runs only: a bare `wait` would wait for the reflector too.
        wait "${batch[@]}"
    done
    drop_udp 0
    summary=$(python3 - "$logs" "$pct" "$runs" <<'EOF'
import json, os, re, sys
logs, pct, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
failed, blocked, lost, seconds = [], [], [], []
for i in range(1, runs + 1):
    base = os.path.join(logs, f"loss-{pct}-{i}")
    status, took = open(base + ".status").read().split()
    seconds.append(float(took))
    output = open(base + ".log").read()
    if re.search(r"seems blocked", output):
        blocked.append(i)
    if status != "0":
        failed.append(f"{i} (exit {status})")
        continue
    document = json.load(open(base + ".json"))
    lost.append(sum(result["lost"] for result in document["results"]))
lost.sort()
figures = f"lost of 200: {lost[0]}/{lost[len(lost) // 2]}/{lost[-1]} min/median/max" if lost else "no run completed"
print(f"{len(blocked)} {len(failed)} blocked={blocked or 'none'} failed={failed or 'none'} {figures}; "
      f"{max(seconds):.1f} s the longest run")
EOF
)
    read -r blocked_count failed_count detail <<<"$summary"
    record "$pct % of datagrams dropped: $runs runs, none blocked" "$((blocked_count > 0 ? 1 : 0))" "$detail"
    record "$pct % of datagrams dropped: every run completes" "$((failed_count > 0 ? 1 : 0))" "$detail"
done

drop_udp 100
run_one "$logs/blocked"
drop_udp 0
read -r status took <"$logs/blocked.status"
said=1
grep -q "UDP between the hosts seems blocked" "$logs/blocked.log" && grep -q "7449-7480" "$logs/blocked.log" && said=0
record "every datagram dropped: exit 1 with the hint" "$([[ $status == 1 && $said == 0 ]] && echo 0 || echo 1)" \
    "exit $status; $(grep -m1 -o 'no UDP answer[^:]*' "$logs/blocked.log" || echo 'no verdict in the output')"
record "every datagram dropped: reported within ${blocked_limit} s" \
    "$(python3 -c "import sys; sys.exit(0 if $took <= $blocked_limit else 1)" && echo 0 || echo 1)" \
    "$took s from the runner's start, finding and inviting the reflector included"

echo
echo "lab-unreliable: logs in $logs"
printf '%s\n' "${results[@]}"
if ((failed)); then
    echo "FAIL"
    exit 1
fi
echo "PASS"
