#!/usr/bin/env bash
# lab-mesh.sh [N]: the many-peers check in the lab. N hosts (default 8, at most 16), each with
# its own avahi-daemon, each running `peer-demo mesh` (advertise, browse, broadcast every second). The
# first host invites nobody; every other host invites only the first, so the rest of the mesh is the
# session's own doing (MEMBERS). Checks, with a PASS/FAIL table:
#   1. the N peers form one full mesh (every peer has N-1 members);
#   2. a broadcast reaches all (every peer receives from every other);
#   3. one host's link is cut: every other peer reports it notConnected within the liveness timeout
#      (3 s here) plus one keepalive, and they keep talking among themselves;
#   4. the link comes back: the host rejoins the mesh (peer-demo invites the first host again when it
#      sees it; the session's own reconnection is not built yet).
# Brings its own lab up (prefix p2pm, 10.78.0.x) and always takes it down. Exits 1 on any FAIL.
set -euo pipefail
cd "$(dirname "$0")/.."
count=${1:-8}
if ! [[ $count =~ ^[0-9]+$ ]] || ((count < 3 || count > 16)); then
    echo "usage: $0 [N]   (3 <= N <= 16)" >&2
    exit 2
fi
export LAB_PREFIX=p2pm LAB_DIR=/run/p2p-mesh-lab LAB_SUBNET=10.78.0
liveness=3

Scripts/setup.sh --lab >/dev/null
swift build --product peer-demo 2>&1 | tail -n 1
bin=$(swift build --show-bin-path)
logs=$(mktemp -d /tmp/lab-mesh.XXXXXX)
Scripts/lab.sh down >/dev/null 2>&1 || true
trap 'Scripts/lab.sh down >/dev/null 2>&1 || true' EXIT
Scripts/lab.sh up "$count" >/dev/null
mapfile -t hosts < <(Scripts/lab.sh hosts)
echo "lab up: ${hosts[*]}; logs in $logs"

for host in "${hosts[@]}"; do
    invite=(--invite "${hosts[0]}")
    [[ $host == "${hosts[0]}" ]] && invite=(--invite nobody)
    Scripts/lab.sh exec "$host" env AVAHI_COMPAT_NOWARN=1 "$bin/peer-demo" mesh --name "$host" "${invite[@]}" \
        --max-peers 16 --liveness "$liveness" --duration 150 >"$logs/$host.log" 2>&1 &
done

results=()
failed=0
record() { # name, ok (0/1), detail
    local verdict=PASS
    if [[ $2 != 0 ]]; then verdict=FAIL; failed=1; fi
    results+=("$(printf '%-4s  %-52s %s' "$verdict" "$1" "$3")")
}
# The last "members=K" a host logged.
members_of() { grep -o 'members=[0-9]*' "$logs/$1.log" | tail -n 1 | cut -d= -f2; }
# Waits (at most $1 s) until every host in the rest of the arguments has $2 members.
wait_for_members() {
    local limit=$1 want=$2 deadline=$((SECONDS + $1)) host ok
    shift 2
    while ((SECONDS < deadline)); do
        ok=1
        for host in "$@"; do [[ $(members_of "$host") == "$want" ]] || ok=0; done
        ((ok)) && return 0
        sleep 0.2
    done
    return 1
}

# 1. One full mesh.
start=$SECONDS
if wait_for_members 60 $((count - 1)) "${hosts[@]}"; then
    record "all $count peers in one mesh" 0 "after $((SECONDS - start)) s"
else
    record "all $count peers in one mesh" 1 "members: $(for h in "${hosts[@]}"; do printf '%s=%s ' "$h" "$(members_of "$h")"; done)"
fi

# 2. A broadcast reaches all: after 3 more seconds every host has heard from every other.
sleep 3
missing=""
for host in "${hosts[@]}"; do
    for other in "${hosts[@]}"; do
        [[ $host == "$other" ]] && continue
        grep -q "recv from=$other " "$logs/$host.log" || missing+=" $other->$host"
    done
done
record "every broadcast reaches every peer" "$([[ -z $missing ]] && echo 0 || echo 1)" "${missing:-$((count * (count - 1))) pairs}"

# 3. Cut the last host's link.
cut=${hosts[count - 1]}
rest=("${hosts[@]:0:count-1}")
cut_at=$(date +%s.%N)
Scripts/lab.sh link "$cut" down >/dev/null
if wait_for_members $((liveness + 10)) $((count - 2)) "${rest[@]}"; then
    slowest=0
    for host in "${rest[@]}"; do
        at=$(grep "state peer=$cut notConnected" "$logs/$host.log" | tail -n 1 | cut -d' ' -f1)
        slowest=$(python3 -c "print(max($slowest, ${at:-0} - $cut_at))")
    done
    within=$(python3 -c "print(0 if $slowest <= $liveness + 1.5 else 1)")
    record "cut $cut: others see it notConnected" "$within" "slowest after $(printf '%.2f' "$slowest") s (liveness ${liveness} s)"
else
    record "cut $cut: others see it notConnected" 1 "not all within $((liveness + 10)) s"
fi
sleep 3
mark=$(date +%s)
missing=""
for host in "${rest[@]}"; do
    for other in "${rest[@]}"; do
        [[ $host == "$other" ]] && continue
        awk -v since="$mark" -v from="$other" '$2 == "recv" && $1 >= since - 3 && index($3, "from=" from) == 1 { found = 1 } END { exit !found }' \
            "$logs/$host.log" || missing+=" $other->$host"
    done
done
record "the others keep talking among themselves" "$([[ -z $missing ]] && echo 0 || echo 1)" "${missing:-$(((count - 1) * (count - 2))) pairs after the cut}"

# 4. Link back: the host rejoins.
Scripts/lab.sh link "$cut" up >/dev/null
start=$SECONDS
if wait_for_members 45 $((count - 1)) "${hosts[@]}"; then
    record "link back: $cut rejoins the mesh" 0 "after $((SECONDS - start)) s"
else
    record "link back: $cut rejoins the mesh" 1 "members: $(for h in "${hosts[@]}"; do printf '%s=%s ' "$h" "$(members_of "$h")"; done)"
fi

printf '%s\n' "${results[@]}"
exit "$failed"
