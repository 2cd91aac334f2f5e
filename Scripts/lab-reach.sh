#!/usr/bin/env bash
# lab-reach.sh [SCENARIO...]: network reach in the lab. Each scenario brings up
# its own lab of hosts (network namespaces, each with its own avahi-daemon; prefix p2pz, 10.80.0.x), runs
# `peer-demo mesh` on each host, the first inviting nobody and the others inviting only the first (so any
# other connection is made by the session's MEMBERS introductions), and takes the lab down again:
#   ipv6-only     2 hosts, IPv4 removed: only fd80::N/64 (and the link-local address) on the link
#   link-local    3 hosts, IPv4 removed, no global IPv6: fe80:: addresses only; B and C are introduced
#                 to each other by A with link-local addresses and must dial them on the right interface
#   no-nss-mdns   2 hosts whose /etc/nsswitch.conf (bind-mounted in the host's mount namespace) has no
#                 mdns: browse works, getent cannot resolve the peer's .local name, the invite must use
#                 the addresses DNS-SD itself gives (IPv6 link-local first, as Happy Eyeballs orders them)
#   ipv4-no-nss   the same on a link with IPv6 turned off in the hosts: the A records alone
# PASS when every host is connected to every other within 5 s of the last host's start, over the address
# family the scenario allows, and a broadcast crosses each pair. Prints one PASS/FAIL line per check with
# the figures, and exits 1 if any failed. Needs root.
# Env: LAB_BIN (folder with peer-demo; default: swift build --product peer-demo, debug), REACH_LIMIT_S (5),
#      REACH_PREFIX (p2pz: the lab's namespaces; another lets two runs share the machine), REACH_DIR,
#      LAB_SKIP_SETUP (1: do not run Scripts/setup.sh --lab, which may install packages).
set -euo pipefail
cd "$(dirname "$0")/.."
export LAB_PREFIX=${REACH_PREFIX:-p2pz} LAB_DIR=${REACH_DIR:-/run/p2p-reach-lab} LAB_SUBNET=10.80.0
limit=${REACH_LIMIT_S:-5}
scenarios=("$@")
((${#scenarios[@]})) || scenarios=(ipv6-only link-local no-nss-mdns ipv4-no-nss)
for scenario in "${scenarios[@]}"; do
    case $scenario in
        ipv6-only | link-local | no-nss-mdns | ipv4-no-nss) ;;
        *) echo "unknown scenario '$scenario' (ipv6-only, link-local, no-nss-mdns, ipv4-no-nss)" >&2; exit 2 ;;
    esac
done

[[ ${LAB_SKIP_SETUP:-0} == 1 ]] || Scripts/setup.sh --lab >/dev/null
bin=${LAB_BIN:-}
if [[ -z $bin ]]; then
    swift build --product peer-demo 2>&1 | tail -n 1
    bin=$(swift build --show-bin-path)
fi
bin=$(cd "$bin" && pwd)
lab=$(pwd)/Scripts/lab.sh
logs=$(mktemp -d /tmp/lab-reach.XXXXXX)
"$lab" down >/dev/null 2>&1 || true
trap '"$lab" down >/dev/null 2>&1 || true' EXIT
trap 'exit 130' INT TERM

results=()
failed=0
record() { # verdict line: name, ok (0/1), detail
    local verdict=PASS
    if [[ $2 != 0 ]]; then verdict=FAIL; failed=1; fi
    results+=("$(printf '%-4s  %-12s %-50s %s' "$verdict" "$scenario" "$1" "$3")")
    echo "${results[-1]}"
}
now() { date +%s.%N; }

# The hosts' addresses for the scenario, set before any peer starts (avahi follows address changes).
configure() {
    local n=0 host
    for host in "${hosts[@]}"; do
        n=$((n + 1))
        case $scenario in
            ipv6-only)
                ip -n "$host" addr del "$LAB_SUBNET.$n/24" dev eth0
                ip -n "$host" addr add "fd80::$n/64" dev eth0 nodad
                ;;
            link-local)
                ip -n "$host" addr del "$LAB_SUBNET.$n/24" dev eth0
                ;;
            no-nss-mdns | ipv4-no-nss)
                grep -v '^hosts:' /etc/nsswitch.conf >"$logs/nsswitch.conf"
                echo 'hosts:          files dns' >>"$logs/nsswitch.conf"
                "$lab" exec "$host" mount --bind "$logs/nsswitch.conf" /etc/nsswitch.conf
                ;;
        esac
    done
}

# Checks that the scenario's conditions hold before the peers start, so that a PASS means what it says.
precondition() {
    local first=${hosts[0]} second=${hosts[1]} addresses
    addresses=$("$lab" exec "$second" ip -o addr show dev eth0 | awk '{print $4}' | xargs echo)
    case $scenario in
        ipv6-only | link-local)
            local ok=0
            [[ $addresses != *"$LAB_SUBNET"* ]] || ok=1
            [[ $scenario != link-local || $addresses != *fd80* ]] || ok=1
            record "no IPv4 on the link" "$ok" "${second}: $addresses"
            ;;
        no-nss-mdns | ipv4-no-nss)
            # The name does not resolve through the system resolver, though avahi knows it.
            local getent avahi
            getent=$("$lab" exec "$second" timeout 5 getent hosts "${first,,}.local" || true)
            avahi=$("$lab" exec "$second" timeout 5 avahi-resolve -4 -n "${first,,}.local" 2>/dev/null || true)
            record "getent cannot resolve ${first,,}.local; avahi can" \
                "$([[ -z $getent && -n $avahi ]] && echo 0 || echo 1)" "getent='${getent}' avahi='${avahi}'"
            ;;
    esac
}

# The time of the first "state peer=OTHER connected" line in HOST's log, and the address it was over.
connected_line() { grep -m1 "state peer=$2 connected" "$logs/$scenario-$1.log" || true; }

run_scenario() {
    local count=2 host
    [[ $scenario == link-local ]] && count=3
    local ipv6=1
    [[ $scenario == ipv4-no-nss ]] && ipv6=0
    LAB_IPV6=$ipv6 "$lab" up "$count" >/dev/null
    mapfile -t hosts < <("$lab" hosts)
    configure
    sleep 1 # avahi withdraws the removed addresses' records and publishes the new ones
    precondition
    local started=""
    for host in "${hosts[@]}"; do
        local invite=(--invite "${hosts[0]}")
        [[ $host == "${hosts[0]}" ]] && invite=(--invite nobody)
        started=$(now)
        "$lab" exec "$host" env AVAHI_COMPAT_NOWARN=1 timeout 60 "$bin/peer-demo" mesh --name "$host" \
            "${invite[@]}" --liveness 3 --duration 30 >"$logs/$scenario-$host.log" 2>&1 &
    done
    # Every pair connected (both ends) within the limit after the last host started; at most 15 s of waiting.
    local deadline=$(($(date +%s) + 15)) pending
    while (($(date +%s) < deadline)); do
        pending=0
        for host in "${hosts[@]}"; do
            for other in "${hosts[@]}"; do
                [[ $host == "$other" ]] && continue
                [[ -n $(connected_line "$host" "$other") ]] || pending=1
            done
        done
        ((pending)) || break
        sleep 0.1
    done
    local slowest=0 line at via elapsed pairs=0 family_ok=0 vias=""
    for host in "${hosts[@]}"; do
        for other in "${hosts[@]}"; do
            [[ $host == "$other" ]] && continue
            line=$(connected_line "$host" "$other")
            if [[ -z $line ]]; then
                record "$host connected to $other" 1 "not within 15 s; log: $logs/$scenario-$host.log"
                continue
            fi
            pairs=$((pairs + 1))
            at=${line%% *}
            via=$(grep -o 'via=[^ ]*' <<<"$line" | cut -d= -f2)
            vias+="$host->$other:$via "
            elapsed=$(python3 -c "print(max(0.0, $at - $started))")
            slowest=$(python3 -c "print(max($slowest, $elapsed))")
            case $scenario in
                ipv6-only) [[ $via == fd80:* ]] || family_ok=1 ;;
                link-local) [[ $via == fe80:*%eth0 ]] || family_ok=1 ;;
                no-nss-mdns) [[ -n $via ]] || family_ok=1 ;;
                ipv4-no-nss) [[ $via == "$LAB_SUBNET".* ]] || family_ok=1 ;;
            esac
        done
    done
    local want=$((count * (count - 1)))
    record "all $want ends connected within ${limit} s" \
        "$([[ $pairs == "$want" ]] && python3 -c "import sys; sys.exit(0 if $slowest <= $limit else 1)" && echo 0 || echo 1)" \
        "slowest $(printf '%.2f' "$slowest") s after the last start"
    record "over the scenario's addresses" "$family_ok" "$vias"
    sleep 2 # a broadcast every second
    local missing=""
    for host in "${hosts[@]}"; do
        for other in "${hosts[@]}"; do
            [[ $host == "$other" ]] && continue
            grep -q "recv from=$other " "$logs/$scenario-$host.log" || missing+=" $other->$host"
        done
    done
    record "a broadcast crosses every pair" "$([[ -z $missing ]] && echo 0 || echo 1)" "${missing:-$want pairs}"
    "$lab" down >/dev/null
}

for scenario in "${scenarios[@]}"; do
    run_scenario
done
echo
echo "lab-reach: logs in $logs"
printf '%s\n' "${results[@]}"
if ((failed)); then
    echo "FAIL"
    exit 1
fi
echo "PASS"
