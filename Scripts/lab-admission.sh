#!/usr/bin/env bash
# lab-admission.sh: one IPv6 /64 that floods a reflector does not lock other sources out. In a network
# namespace of its own (unshare --net: nothing of the machine's network is touched, nothing is left behind),
# whose loopback holds fd00:1::1 to fd00:1::28 (40 addresses of one /64) and fd00:2::1:
#   - a reflector (--no-dnssd, --encryption none) with ADMISSION_PLACES places (8), as many per source;
#   - ADMISSION_FLOODERS runners (10), each from its own address of fd00:1::/64 (a runner that dials
#     fd00:1::N is seen from fd00:1::N), sending a message every half second: busy enough that the idle
#     timeout never frees their places. They take every place; the rest are declined as busy.
#   - then, at once, a runner from fd00:2::1 and one from 127.0.0.1 (a 2 s data test each): PASS when each completes
#     (exit 0) within ADMISSION_LIMIT_S (15 s from its start), having taken the place of the /64's
#     longest-held runner; that runner exits 1 saying it was evicted for a newcomer, and the reflector logs
#     each eviction.
# Prints one PASS/FAIL line per check with its figures and exits 1 if any failed; 2 when it cannot run here
# (not root, no unshare or ip, no network namespaces).
# Env: LAB_BIN (folder with reflector and test-runner; default: swift build, debug), ADMISSION_PLACES (8),
#      ADMISSION_FLOODERS (10), ADMISSION_LIMIT_S (15).
set -euo pipefail
cd "$(dirname "$0")/.."
places=${ADMISSION_PLACES:-8}
flooders=${ADMISSION_FLOODERS:-10}
limit=${ADMISSION_LIMIT_S:-15}

if [[ -z ${ADMISSION_IN_NAMESPACE:-} ]]; then
    [[ $(id -u) == 0 ]] || { echo "lab-admission.sh needs root (a network namespace)" >&2; exit 2; }
    for tool in unshare ip python3; do
        command -v "$tool" >/dev/null || { echo "lab-admission.sh needs $tool" >&2; exit 2; }
    done
    unshare --net true 2>/dev/null || { echo "this machine does not allow new network namespaces" >&2; exit 2; }
    bin=${LAB_BIN:-}
    if [[ -z $bin ]]; then
        swift build --product reflector 2>&1 | tail -n 1
        swift build --product test-runner 2>&1 | tail -n 1
        bin=$(swift build --show-bin-path)
    fi
    export LAB_BIN
    LAB_BIN=$(cd "$bin" && pwd)
    exec env ADMISSION_IN_NAMESPACE=1 unshare --net -- "$0" "$@"
fi

bin=$LAB_BIN
[[ -x $bin/reflector && -x $bin/test-runner ]] || { echo "no reflector/test-runner in $bin" >&2; exit 2; }
logs=$(mktemp -d /tmp/lab-admission.XXXXXX)
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT
trap 'exit 130' INT TERM

ip link set lo up
for host in $(seq 1 40); do ip -6 addr add "fd00:1::$(printf %x "$host")/64" dev lo nodad; done
ip -6 addr add fd00:2::1/64 dev lo nodad
port=7447

results=()
failed=0
record() { # name, ok (0/1), detail
    local verdict=PASS
    if [[ $2 != 0 ]]; then verdict=FAIL; failed=1; fi
    results+=("$(printf '%-4s  %-58s %s' "$verdict" "$1" "$3")")
    echo "${results[-1]}"
}
now() { date +%s.%N; }
since() { python3 -c "print(round($(now) - $1, 2))"; }

"$bin/reflector" --no-dnssd --no-raw-echo --port "$port" --udp-ports ephemeral --encryption none \
    --name admission --max-runners "$places" --max-runners-per-address "$places" --invitation-rate 1000 \
    >"$logs/reflector.log" 2>&1 &
pids+=($!)
for _ in $(seq 200); do
    grep -q "^.*ready " "$logs/reflector.log" && break
    sleep 0.1
done

# A runner from ADDRESS (it dials the reflector there, so the reflector sees it from there).
runner() { # log name, address, extra options...
    local log=$1 address=$2
    shift 2
    "$bin/test-runner" run --connect "$address:$port" --test data --encryption none --size 64 --warmup 0 \
        --name "$log" --output "$logs/$log.json" "$@" >"$logs/$log.log" 2>&1
}

# The flood: each runner sends a message every half second for up to 120 s.
for host in $(seq 1 "$flooders"); do
    runner "flood-$host" "[fd00:1::$(printf %x "$host")]" --count 240 --delay-ms 500 --timeout 5 --duration 120 &
    pids+=($!)
done
# Every place held by the /64: the reflector says so once it declines the first flooder past them.
for _ in $(seq 600); do
    (($(grep -c "^.*connected runner=" "$logs/reflector.log" || true) >= places)) && break
    sleep 0.1
done
served=$(grep -c "^.*connected runner=" "$logs/reflector.log" || true)
record "fd00:1::/64 floods: it holds every place" "$((served >= places ? 0 : 1))" \
    "$served runners of $flooders served, $(grep -c "busy: declined" "$logs/reflector.log" || true) declined"

# Both newcomers at once, each holding its place for about 2 s: each must take one of the /64's.
newcomer() { # address
    local name started status=0
    name=newcomer-$(echo "$1" | tr -dc '0-9a-f')
    started=$(now)
    timeout 60 bash -c "$(declare -f runner); bin='$bin' port=$port logs='$logs' runner '$name' '$1' \
        --count 20 --delay-ms 100 --timeout 5" || status=$?
    echo "$status $(since "$started")" >"$logs/$name.status"
}
newcomers=("[fd00:2::1]" "127.0.0.1")
for address in "${newcomers[@]}"; do newcomer "$address" & done
for address in "${newcomers[@]}"; do
    while [[ ! -s $logs/newcomer-$(echo "$address" | tr -dc '0-9a-f').status ]]; do sleep 0.1; done
done
for address in "${newcomers[@]}"; do
    read -r status took <"$logs/newcomer-$(echo "$address" | tr -dc '0-9a-f').status"
    ok=$([[ $status == 0 ]] && python3 -c "import sys; sys.exit(0 if $took <= $limit else 1)" && echo 0 || echo 1)
    record "a runner from $address is served while the /64 floods" "$ok" "exit $status after $took s (limit $limit s)"
done

evictions=$(grep -c "evicting runner=[^ ]*flood-" "$logs/reflector.log" || true)
record "the reflector logs each eviction" "$((evictions == 2 ? 0 : 1))" \
    "$(grep -m1 -o "evicting runner=.*" "$logs/reflector.log" || echo "no eviction logged")"
sleep 2
told=$(grep -l "evicted this runner for a newcomer" "$logs"/flood-*.log 2>/dev/null | wc -l)
record "each evicted runner says it was evicted for a newcomer" "$((told == 2 ? 0 : 1))" \
    "$told runner(s) say so; $(grep -h -m1 -o "the reflector evicted.*" "$logs"/flood-*.log | head -n 1)"

echo
echo "lab-admission: logs in $logs"
printf '%s\n' "${results[@]}"
if ((failed)); then
    echo "FAIL"
    exit 1
fi
echo "PASS"
