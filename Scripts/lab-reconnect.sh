#!/usr/bin/env bash
# lab-reconnect.sh [SECONDS [WINDOW]]: reconnection in the lab. Two hosts, each with its own
# avahi-daemon, run `peer-demo mesh --reconnect WINDOW` (default 30 s) and send each other a numbered message
# every 50 ms (to a peer that is reconnecting too: the session keeps it). The second host's link is taken
# down for SECONDS (default 6) and brought back. Checks, with a PASS/FAIL table:
#   1. the two peers connect;
#   2. link down: each sees the other `connecting` (not notConnected) within the liveness timeout (3 s here);
#   3. link up: each sees the other `connected` again, and never `notConnected`; or, when the link stays
#      down longer than the liveness timeout plus WINDOW, each sees the other `notConnected` with
#      "reconnection failed" and the count of unconfirmed messages;
#   4. every message sent (each side logs `sent to=PEER n=K`) arrives exactly once and in order: nothing
#      lost, nothing doubled (only the last second's, still in flight when the logs are read, may be missing);
#      after a failed reconnection, every message not delivered is among the last ones reported unconfirmed.
# Prints the figures: the cut, the time from link up to connected, messages sent / delivered / duplicated /
# lost per direction. Brings its own lab up (prefix p2pr, 10.79.0.x) and always takes it down. Exits 1 on any FAIL.
set -euo pipefail
cd "$(dirname "$0")/.."
gap=${1:-6}
window=${2:-30}
if ! [[ $gap =~ ^[0-9]+$ && $window =~ ^[0-9]+$ ]] || ((gap < 1 || gap > 40 || window < 1 || window > 60)); then
    echo "usage: $0 [SECONDS [WINDOW]]   (1 <= SECONDS <= 40, the time the link stays down; 1 <= WINDOW <= 60)" >&2
    exit 2
fi
export LAB_PREFIX=p2pr LAB_DIR=/run/p2p-reconnect-lab LAB_SUBNET=10.79.0
liveness=3

Scripts/setup.sh --lab >/dev/null
swift build --product peer-demo 2>&1 | tail -n 1
bin=$(swift build --show-bin-path)
logs=$(mktemp -d /tmp/lab-reconnect.XXXXXX)
Scripts/lab.sh down >/dev/null 2>&1 || true
trap 'Scripts/lab.sh down >/dev/null 2>&1 || true' EXIT
Scripts/lab.sh up 2 >/dev/null
mapfile -t hosts < <(Scripts/lab.sh hosts)
first=${hosts[0]}
second=${hosts[1]}
echo "lab up: ${hosts[*]}; logs in $logs"

for host in "${hosts[@]}"; do
    invite=(--invite "$first")
    [[ $host == "$first" ]] && invite=(--invite nobody)
    Scripts/lab.sh exec "$host" env AVAHI_COMPAT_NOWARN=1 "$bin/peer-demo" mesh --name "$host" "${invite[@]}" \
        --liveness "$liveness" --reconnect "$window" --say-every 0.05 --duration $((gap + 60)) >"$logs/$host.log" 2>&1 &
done

results=()
failed=0
record() { # name, ok (0/1), detail
    local verdict=PASS
    if [[ $2 != 0 ]]; then verdict=FAIL; failed=1; fi
    results+=("$(printf '%-4s  %-58s %s' "$verdict" "$1" "$3")")
}
# The time of the first line of $1's log after time $2 that matches $3, or nothing.
first_after() { awk -v since="$2" -v pattern="$3" '$1 >= since && $0 ~ pattern { print $1; exit }' "$logs/$1.log"; }
# Waits (at most $1 s) until $2's log has a line after time $3 matching $4.
wait_for_line() {
    local deadline=$((SECONDS + $1))
    while ((SECONDS < deadline)); do
        [[ -n $(first_after "$2" "$3" "$4") ]] && return 0
        sleep 0.1
    done
    return 1
}

# 1. Connected.
if wait_for_line 60 "$first" 0 "state peer=$second connected" && wait_for_line 10 "$second" 0 "state peer=$first connected"; then
    record "the two peers connect" 0 ""
else
    record "the two peers connect" 1 "see $logs"
    printf '%s\n' "${results[@]}"
    exit 1
fi
sleep 3

# 2. Link down.
cut_at=$(date +%s.%N)
Scripts/lab.sh link "$second" down >/dev/null
ok=0
detail=""
for pair in "$first $second" "$second $first"; do
    read -r host peer <<<"$pair"
    if wait_for_line $((liveness + 5)) "$host" "$cut_at" "state peer=$peer connecting"; then
        at=$(first_after "$host" "$cut_at" "state peer=$peer connecting")
        detail+="$host after $(python3 -c "print(f'{$at - $cut_at:.2f}')") s; "
    else
        ok=1
        detail+="$host: no connecting; "
    fi
done
record "link down: each sees the other connecting" "$ok" "$detail(liveness $liveness s)"
sleep "$(python3 -c "print(max(0.0, $gap - ($(date +%s.%N) - $cut_at)))")"

# 3. Link up.
up_at=$(date +%s.%N)
Scripts/lab.sh link "$second" up >/dev/null
ok=0
detail=""
expired=$((gap > liveness + window))
for pair in "$first $second" "$second $first"; do
    if ((expired)); then
        read -r host peer <<<"$pair"
        line=$(grep "state peer=$peer notConnected" "$logs/$host.log" | head -n 1)
        if [[ $line == *"reconnection failed"* || $line == *"could not be re-established"* ]]; then
            detail+="$host: notConnected, $(grep -o 'unconfirmed=[0-9]*' <<<"$line"); "
        else
            ok=1
            detail+="$host: ${line:-no notConnected}; "
        fi
        continue
    fi
    read -r host peer <<<"$pair"
    if wait_for_line 40 "$host" "$up_at" "state peer=$peer connected"; then
        at=$(first_after "$host" "$up_at" "state peer=$peer connected")
        detail+="$host after $(python3 -c "print(f'{$at - $up_at:.2f}')") s; "
    else
        ok=1
        detail+="$host: not connected; "
    fi
    if grep -q "state peer=$peer notConnected" "$logs/$host.log"; then
        ok=1
        detail+="$host saw notConnected; "
    fi
done
gap_seconds=$(python3 -c "print(f'{$up_at - $cut_at:.2f}')")
if ((expired)); then
    record "link down $gap_seconds s > window: reported failed" "$ok" "$detail"
else
    record "link up (after $gap_seconds s): connected again, never notConnected" "$ok" "$detail"
fi

# 4. Exactly once, in order: let the stream run a few more seconds, then read the logs.
sleep 5
for pair in "$first $second" "$second $first"; do
    read -r sender receiver <<<"$pair"
    verdict=$(python3 - "$logs/$sender.log" "$logs/$receiver.log" "$sender" "$receiver" "$((expired))" "$up_at" <<'PY'
import re, sys
sender_log, receiver_log, sender, receiver, expired, up_at = sys.argv[1:]
expired, up_at = expired == "1", float(up_at)
# After a failed reconnection only the lines before the link came back count (the demo invites anew then).
cutoff = up_at if expired else float("inf")
unconfirmed = 0
for line in open(sender_log):
    m = re.search(r"state peer=" + re.escape(receiver) + r" notConnected.* unconfirmed=(\d+)", line)
    if m and expired:
        unconfirmed = int(m.group(1))
sent = []
last_time = 0.0
for line in open(sender_log):
    m = re.match(r"(\S+) sent to=(\S+) n=(\d+)$", line.strip())
    if m and m.group(2) == receiver and float(m.group(1)) < cutoff:
        sent.append((float(m.group(1)), int(m.group(3))))
received = []
for line in open(receiver_log):
    m = re.match(r"(\S+) recv from=(\S+) text=(\S+) #(\d+)$", line.strip())
    if m and m.group(2) == sender and float(m.group(1)) < cutoff:
        received.append(int(m.group(4)))
        last_time = max(last_time, float(m.group(1)))
# Each side numbers its messages to a peer 1, 2, 3, ... (a number is used again only after a failed send,
# which is logged as sendfail, not sent). The logs are read while both still run, so the receiver may be a
# message or two ahead of the sender's log, or behind it by what is in flight.
duplicated = len(received) - len(set(received))
in_order = received == list(range(1, len(received) + 1))
# Sent more than a second before the receiver's last line, yet not received: lost.
lost = [n for t, n in sent if t < last_time - 1.0 and n not in set(received)]
if expired:
    # Not delivered is fine for the last `unconfirmed` messages sent: those were reported failed.
    lost = [n for _, n in sent if n not in set(received) and n <= len(sent) - unconfirmed]
ok = in_order and duplicated == 0 and not lost and len(sent) > 0 and [n for _, n in sent] == list(range(1, len(sent) + 1))
extra = f", reported unconfirmed {unconfirmed}" if expired else ""
print(f"{0 if ok else 1}|sent {len(sent)}, delivered {len(received)}, duplicated {duplicated}, lost {len(lost)}{extra}, in order {in_order}")
PY
)
    record "$sender -> $receiver: exactly once, in order" "${verdict%%|*}" "${verdict#*|}"
done

printf '%s\n' "${results[@]}"
exit "$failed"
