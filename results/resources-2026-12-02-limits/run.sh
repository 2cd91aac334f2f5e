#!/usr/bin/env bash
# Received files and the page cache where the free run is none or shared: a reflector in a control group with
# a memory limit, against the same reflector outside it, taking turns; then CONCURRENT runners sending a large file each
# to one reflector at the same moment. Each transfer's advice to the kernel is counted with strace (only
# fadvise64 traced, through a seccomp filter, so the other calls run untraced), and the kernel's dirty pages are
# sampled every 100 ms.
#
#   BIN=.build/release [ROUNDS=3] [SIZE=1G] [LIMIT=768M] [CONCURRENT=3] [PARTS="limits concurrent"] \
#       [DISK=/var/tmp] [OUT=DIR] \
#       results/resources-2026-12-02-limits/run.sh
#
# Needs root, strace and a cgroup v1 memory controller at /sys/fs/cgroup/memory (or cgroup v2 at /sys/fs/cgroup).
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${BIN:-.build/release}
rounds=${ROUNDS:-3}
size=${SIZE:-1G}
limit=${LIMIT:-768M}
concurrent=${CONCURRENT:-3}
parts=${PARTS:-limits concurrent}
out=${OUT:-results/runs/resources-limits-$(date -u +%F)}
mkdir -p "$out"
source_dir=$(mktemp -d /dev/shm/limits.XXXXXX)
landing_dir=$(mktemp -d "${DISK:-/var/tmp}/limits.XXXXXX")
own=$(sed -n 's/^[0-9]*:memory:\(.*\)$/\1/p' /proc/self/cgroup)
if [ -n "$own" ]; then
    group=/sys/fs/cgroup/memory${own%/}/peer-connectivity-limits
    mkdir -p "$group"
    echo "$(numfmt --from=iec "$limit")" > "$group/memory.limit_in_bytes"
else
    group=/sys/fs/cgroup$(sed -n 's/^0::\(.*\)$/\1/p' /proc/self/cgroup)
    group=${group%/}/peer-connectivity-limits
    mkdir -p "$group"
    echo "$(numfmt --from=iec "$limit")" > "$group/memory.max"
fi
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$source_dir" "$landing_dir"
    rmdir "$group" 2>/dev/null || true
}
trap cleanup EXIT
head -c "$(numfmt --from=iec "$size")" /dev/urandom > "$source_dir/a.bin"
for i in $(seq 2 "$concurrent"); do
    cp "$source_dir/a.bin" "$source_dir/$(printf "\\$(printf '%03o' $((96 + i)))").bin"
done
{
    echo "date: $(date -u +%FT%TZ)"
    echo "commit: $(git rev-parse HEAD)"
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc) CPUs; $(uname -r)"
    echo "memory: $(free -b | awk '/^Mem:/ { printf "%.1f GiB", $2 / 2^30 }')"
    echo "disk: $(findmnt -n -o SOURCE,FSTYPE,OPTIONS --target "$landing_dir")"
    echo "dirty: ratio $(sysctl -n vm.dirty_ratio), background $(sysctl -n vm.dirty_background_ratio)"
    echo "limited group: $group, $limit"
    echo "binaries: $bin: $("$bin/reflector" --version 2>&1 | head -1)"
} | tee "$out/about.txt"

# start_reflector NAME [GROUP]: starts a reflector under strace (fadvise64 only), in GROUP when given.
start_reflector() {
    local name=$1 into=${2:-}
    local log="$out/$name.reflector.log"
    (
        [ -z "$into" ] || echo "$BASHPID" > "$into/cgroup.procs"
        exec strace -f --seccomp-bpf -e trace=fadvise64 -c -o "$out/$name.fadvise.txt" \
            "$bin/reflector" --no-dnssd --bind 127.0.0.1 --port 0 --raw-echo-port 0 --udp-ports ephemeral \
            --encryption none --resource-directory "$landing_dir"
    ) > "$log" 2>&1 &
    reflector_pid=$!
    pids+=("$reflector_pid")
    for _ in $(seq 100); do grep -q ' ready ' "$log" && break; sleep 0.1; done
    port=$(sed -n 's/.* ready .* port=\([0-9]*\) .*/\1/p' "$log")
    [ -n "$port" ] || { echo "the reflector did not start:" >&2; cat "$log" >&2; exit 1; }
}

stop_reflector() {
    kill -INT "$(pgrep -P "$reflector_pid" reflector || echo "$reflector_pid")" 2>/dev/null || true
    wait "$reflector_pid" 2>/dev/null || true
    rm -rf "${landing_dir:?}"/* "${landing_dir:?}"/.[!.]* 2>/dev/null || true
}

# sample_dirty FILE: the kernel's dirty and writeback pages (MB) every 100 ms until killed.
sample_dirty() {
    while :; do
        awk '/^nr_dirty |^nr_writeback / { v[$1] = $2 * 4096 / 1e6 } END { printf "%.0f %.0f\n", v["nr_dirty"], v["nr_writeback"] }' \
            /proc/vmstat
        sleep 0.1
    done > "$1"
}

# send NAME FILE: one resource from a runner to the reflector on $port.
send() {
    timeout 600 "$bin/test-runner" run --connect "127.0.0.1:$port" --test resource --file "$2" \
        --encryption none --duration 600 --output "$out/$1.json" > "$out/$1.txt" 2>&1 \
        || { cat "$out/$1.txt" >&2; return 1; }
    jq -e '.resources.completed == 1' "$out/$1.json" > /dev/null || { echo "$1 not confirmed" >&2; return 1; }
}

report() {  # NAME...
    local name
    for name in "$@"; do
        printf '%-22s %6.0f MB/s  reflector fadvise64 calls %s\n' "$name" "$(jq '.resources.bytesPerSecond / 1e6' "$out/$name.json")" \
            "$(awk '/fadvise64/ { print $4 }' "$out/${name%-[a-z]}.fadvise.txt" | head -1 | grep . || echo 0)"
    done
}

order="unlimited limited"
[[ " $parts " == *" limits "* ]] && for round in $(seq "$rounds"); do
    for side in $order; do
        name="$side-$round"
        into=""
        if [[ $side == limited ]]; then
            into=$group
            echo 0 > "$group/memory.max_usage_in_bytes" 2>/dev/null || true
            echo 0 > "$group/memory.failcnt" 2>/dev/null || true
        fi
        sync
        start_reflector "$name" "$into"
        sample_dirty "$out/$name.dirty.txt" &
        sampler=$!
        send "$name" "$source_dir/a.bin"
        kill "$sampler"
        stop_reflector
        report "$name"
        if [[ $side == limited && -f $group/memory.max_usage_in_bytes ]]; then
            printf '    group: peak %.0f MB, limit hits %s, %s\n' \
                "$(awk '{ print $1 / 1e6 }' "$group/memory.max_usage_in_bytes")" "$(cat "$group/memory.failcnt")" \
                "$(grep oom_kill "$group/memory.oom_control" | tr '\n' ' ')"
        fi
        printf '    dirty MB peak %s, writeback MB peak %s\n' "$(sort -k1 -n "$out/$name.dirty.txt" | tail -1 | cut -d' ' -f1)" \
            "$(sort -k2 -n "$out/$name.dirty.txt" | tail -1 | cut -d' ' -f2)"
    done
    order=$(echo "$order" | awk '{ print $2, $1 }')
done | tee "$out/transfers.txt"

[[ " $parts " == *" concurrent "* ]] && for round in $(seq "$rounds"); do
    name="concurrent-$round"
    sync
    start_reflector "$name"
    sample_dirty "$out/$name.dirty.txt" &
    sampler=$!
    senders=() names=()
    started=$(date +%s.%N)
    for i in $(seq "$concurrent"); do
        letter=$(printf "\\$(printf '%03o' $((96 + i)))")
        send "$name-$letter" "$source_dir/$letter.bin" &
        senders+=($!) names+=("$name-$letter")
    done
    for pid in "${senders[@]}"; do wait "$pid"; done
    ended=$(date +%s.%N)
    kill "$sampler"
    stop_reflector
    report "${names[@]}"
    printf '    all %s: %.0f MB/s from the first start to the last end\n' "$concurrent" \
        "$(echo "$concurrent * $(numfmt --from=iec "$size") / ($ended - $started) / 1000000" | bc -l)"
    printf '    dirty MB peak %s, writeback MB peak %s\n' "$(sort -k1 -n "$out/$name.dirty.txt" | tail -1 | cut -d' ' -f1)" \
        "$(sort -k2 -n "$out/$name.dirty.txt" | tail -1 | cut -d' ' -f2)"
done | tee "$out/concurrent.txt"
