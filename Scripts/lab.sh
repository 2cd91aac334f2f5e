#!/usr/bin/env bash
# lab.sh: a lab of N hosts on this machine, so that peers, the reflector and the test runner can run on
# different "hosts" with their own IP address, avahi-daemon and (shaped) link. Needs root.
#
#   lab.sh up N                  N hosts p2pA, p2pB, ... (1 <= N <= 26) at 10.77.0.1, 10.77.0.2, ...
#   lab.sh down                  stop everything in the lab, unmount, delete (safe when nothing is up)
#   lab.sh exec HOST CMD...      run CMD inside HOST (its network, its dbus/avahi, its host name), same cwd
#   lab.sh shape HOST rate R     limit HOST's link to R (tc units: 20mbit, 500kbit) in each direction
#   lab.sh shape HOST loss PCT [in|out]   drop PCT % of the frames in each direction of HOST's link, or
#                                only of those to HOST (in) or from it (out)
#   lab.sh shape HOST delay MS [JITTER_MS]   one-way delay of HOST's link, each direction (LAB_LINK=hub)
#   lab.sh shape HOST clear      remove all shaping from HOST's link
#   lab.sh link HOST down|up     cut HOST's link (the host sees no carrier, nothing gets through) or restore it
#   lab.sh status | hosts | addr HOST
#
# How it is built (docs/LAB.md has the details and measured figures):
# - A host is a network namespace plus a mount and a UTS namespace kept alive by files under $LAB_DIR/ns.
#   The mount namespace has its own tmpfs on /run/dbus and /run/avahi-daemon, so each host runs its own
#   dbus-daemon and avahi-daemon without touching the machine's (Scripts/start-avahi.sh keeps working).
#   `ip netns exec` would make a fresh mount namespace on every call, hence nsenter on the kept files.
# - The hosts' eth0 are joined in a switch namespace (p2psw), never to the machine's own network:
#   LAB_LINK=bridge (default): veth pairs on a kernel bridge; fast (Gbit/s), no delay possible.
#   LAB_LINK=hub: TAP devices and Scripts/lab-hub.py, a user-space switch that can delay frames
#   (this kernel has no netem); about 1 Gbit/s at most, at the cost of one CPU core at that speed.
# - Rate limits are done inside each host (tbf on eth0, and on an ifb device for what it receives), for
#   both link kinds. Loss is done in the switch (nftables on the bridge, or the hub), so that a sender
#   does not notice it, as with radio loss. Delay and jitter need the hub.
#
# Env: LAB_LINK (bridge|hub, read by `up`), LAB_DIR (/run/p2p-lab), LAB_PREFIX (p2p), LAB_SUBNET (10.77.0),
#      LAB_IPV6 (1: avahi also uses IPv6 link-local addresses; 0: IPv4 only), LAB_PYTHON.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
dir=${LAB_DIR:-/run/p2p-lab}
prefix=${LAB_PREFIX:-p2p}
subnet=${LAB_SUBNET:-10.77.0}
switch=${prefix}sw
ns_dir=$dir/ns
hub_socket=$dir/hub.sock
python=${LAB_PYTHON:-$(command -v /usr/bin/python3 || command -v python3 || echo python3)}
letters=({A..Z})

die() { echo "lab: $*" >&2; exit 1; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }

hosts() { cat "$dir/hosts" 2>/dev/null || true; }
link_kind() { cat "$dir/link" 2>/dev/null || echo none; }

# The number of HOST (1 for the first), or die: every command that takes a host checks it here.
host_number() {
    local n
    n=$(grep -n -x -F -- "$1" "$dir/hosts" 2>/dev/null | cut -d: -f1 || true)
    [ -s "$dir/hosts" ] || die "the lab is not up (lab.sh up N)"
    [ -n "$n" ] || die "no host '$1' in the lab (hosts: $(hosts | xargs echo))"
    echo "$n"
}

# Run a command inside HOST: its network, mount (dbus, avahi) and UTS (host name) namespaces.
in_host() {
    local h=$1
    shift
    nsenter --net="/run/netns/$h" --mount="$ns_dir/$h.mnt" --uts="$ns_dir/$h.uts" --wd="$PWD" -- "$@"
}

avahi_ready() {  # Avahi server state 2 = RUNNING
    in_host "$1" dbus-send --system --print-reply=literal --reply-timeout=500 \
        --dest=org.freedesktop.Avahi / org.freedesktop.Avahi.Server.GetState 2>/dev/null | grep -q 'int32 2'
}

hub() { "$python" "$here/lab-hub.py" ctl "$hub_socket" "$@"; }

# Namespaces that belong to a lab with this prefix, whether or not $dir still describes them.
lab_namespaces() { ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^${prefix}([A-Z]|sw)$" || true; }

up_failed() {
    if [ "$1" -ne 0 ]; then
        echo "lab: up failed, cleaning up" >&2
        cmd_down >&2
    fi
}

cmd_up() {
    local n=${1:-}
    [[ "$n" =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] && [ "$n" -le 26 ] || die "usage: lab.sh up N (1 <= N <= 26)"
    [ "$(id -u)" -eq 0 ] || die "needs root"
    local kind=${LAB_LINK:-bridge}
    [ "$kind" = bridge ] || [ "$kind" = hub ] || die "LAB_LINK must be bridge or hub, not '$kind'"
    local tool
    for tool in ip tc nsenter unshare dbus-daemon dbus-send avahi-daemon; do
        command -v "$tool" >/dev/null || die "$tool is missing: run Scripts/setup.sh --lab"
    done

    if [ -s "$dir/hosts" ]; then  # already up: fine if it is the lab asked for and it works
        local have h
        have=$(hosts | wc -l)
        [ "$have" -eq "$n" ] && [ "$(link_kind)" = "$kind" ] ||
            die "a lab of $have hosts (LAB_LINK=$(link_kind)) is up: run lab.sh down first"
        for h in $(hosts); do avahi_ready "$h" || die "$h is not working: run lab.sh down, then up"; done
        echo "lab already up ($kind): $(hosts | xargs echo)"
        return
    fi
    [ -z "$(lab_namespaces)" ] || die "leftovers of an earlier lab ($(lab_namespaces | xargs echo)): run lab.sh down"

    local started
    started=$(now_ms)
    # Whatever fails from here on, do not leave half a lab behind.
    trap 'up_failed $?' EXIT
    trap 'exit 130' INT TERM  # interrupted: clean up too

    mkdir -p "$ns_dir"
    echo "$kind" > "$dir/link"
    # A namespace can only be kept alive by a bind mount onto a file on a private mount.
    mountpoint -q "$ns_dir" || mount --bind "$ns_dir" "$ns_dir"
    mount --make-private "$ns_dir"
    mkdir -p /run/dbus /run/avahi-daemon  # mount points for the hosts' own tmpfs (exist already with avahi)

    ip netns add "$switch"
    local i h
    if [ "$kind" = hub ]; then
        local taps=()
        for i in $(seq "$n"); do taps+=("tap$i"); done
        # nice -10: with the CPUs busy (a build, the benchmark itself), a delayed frame then still leaves
        # within about 0.5 ms of its time; at nice 0 one in ten pings came 4-8 ms late under load.
        setsid nsenter --net="/run/netns/$switch" -- nice -n -10 "$python" "$here/lab-hub.py" serve \
            "$hub_socket" "${taps[@]}" > "$dir/hub.log" 2>&1 < /dev/null &
        echo $! > "$dir/hub.pid"
        for _ in $(seq 100); do grep -q READY "$dir/hub.log" && break; sleep 0.05; done
        grep -q READY "$dir/hub.log" || { cat "$dir/hub.log" >&2; die "the hub did not start"; }
    else
        # No multicast snooping: mDNS must reach every host, as on a Wi-Fi network. Bridged packets
        # need not go through the switch's (empty) iptables: these settings are per namespace.
        ip -n "$switch" link add br0 type bridge mcast_snooping 0
        ip -n "$switch" link set br0 up
        ip netns exec "$switch" sysctl -qw net.bridge.bridge-nf-call-iptables=0 \
            net.bridge.bridge-nf-call-ip6tables=0 net.bridge.bridge-nf-call-arptables=0 2> /dev/null || true
    fi

    for i in $(seq "$n"); do
        h=$prefix${letters[$((i - 1))]}
        mkdir -p "$dir/$h"
        ip netns add "$h"
        echo "$h" >> "$dir/hosts"  # from now on `down` knows about it
        if [ "$kind" = hub ]; then  # the hub keeps the TAP's file descriptor when the device moves
            ip -n "$switch" link set "tap$i" netns "$h"
            ip -n "$h" link set "tap$i" name eth0
        else
            ip -n "$h" link add eth0 type veth peer name "port$i" netns "$switch"
            ip -n "$switch" link set "port$i" master br0 up
        fi
        # Readable MACs (02:70:63 = locally administered, "pc") make captures easier to follow.
        ip -n "$h" link set eth0 address "$(printf '02:70:63:00:00:%02x' "$i")"
        ip -n "$h" addr add "$subnet.$i/24" dev eth0
        if [ "${LAB_IPV6:-1}" = 1 ]; then  # link-local address usable at once, no 1-2 s duplicate check
            ip netns exec "$h" sysctl -qw net.ipv6.conf.eth0.accept_dad=0
        else
            ip netns exec "$h" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
        fi
        ip -n "$h" link set lo up
        ip -n "$h" link set eth0 up

        # Mount + UTS namespaces kept by files; private, so the tmpfs never shows on the machine's /run.
        # The copies of the lab's own namespace handles are dropped inside: a host has no use for them,
        # and they would keep the other hosts' namespaces referenced.
        touch "$ns_dir/$h.mnt" "$ns_dir/$h.uts"
        # shellcheck disable=SC2016  # $1 and $2 are expanded by that inner sh
        unshare --mount="$ns_dir/$h.mnt" --uts="$ns_dir/$h.uts" --propagation private sh -c '
            mount -t tmpfs tmpfs /run/dbus && mount -t tmpfs tmpfs /run/avahi-daemon && hostname "$1"
            umount -l "$2" 2> /dev/null; umount -l /run/netns 2> /dev/null; true' sh "${h,,}" "$ns_dir"
        # Only eth0 (not lo: a service would be found twice), no wide-area, no workstation records.
        printf '%s\n' '[server]' "host-name=${h,,}" 'allow-interfaces=eth0' \
            "use-ipv6=$([ "${LAB_IPV6:-1}" = 1 ] && echo yes || echo no)" \
            '[wide-area]' 'enable-wide-area=no' '[publish]' 'publish-workstation=no' 'publish-hinfo=no' \
            > "$dir/$h/avahi.conf"
        in_host "$h" dbus-daemon --system --fork > /dev/null
        setsid nsenter --net="/run/netns/$h" --mount="$ns_dir/$h.mnt" --uts="$ns_dir/$h.uts" -- \
            avahi-daemon -f "$dir/$h/avahi.conf" --no-drop-root --no-chroot --no-rlimits \
            > "$dir/$h/avahi.log" 2>&1 < /dev/null &
    done

    # The daemons start in parallel (about 1 s each); wait for all of them, 15 s at most.
    local deadline=$(($(now_ms) + 15000))
    for h in $(hosts); do
        until avahi_ready "$h"; do
            [ "$(now_ms)" -lt "$deadline" ] || { cat "$dir/$h/avahi.log" >&2; die "avahi-daemon in $h not ready"; }
            sleep 0.05
        done
    done
    trap - EXIT INT TERM
    echo "lab up ($kind) in $(($(now_ms) - started)) ms: $(hosts | xargs echo)"
}

cmd_down() {
    local namespaces pids h
    namespaces=$(lab_namespaces)
    # 1. Every process in a lab namespace was started through the lab (daemons, hub, lab.sh exec):
    #    ask them to stop, give them 3 s, then kill what is left. Never this script itself.
    local signal deadline killed="" p
    for signal in TERM KILL; do
        deadline=$(($(now_ms) + 3000))
        while :; do
            pids=$(for h in $namespaces; do ip netns pids "$h" 2>/dev/null || true; done | grep -v -x "$$" || true)
            [ -n "$pids" ] || break
            [ "$(now_ms)" -lt "$deadline" ] || break
            killed="$killed $pids"
            # shellcheck disable=SC2086  # one pid per word
            kill -"$signal" $pids 2>/dev/null || true
            sleep 0.1
        done
        [ -n "$pids" ] || break
    done
    [ -z "$pids" ] || echo "lab: processes still alive after KILL: ${pids//$'\n'/ }" >&2
    # The daemons were reparented to init when they forked; give it 2 s to reap them, so that nothing,
    # not even a zombie, is left when down returns.
    deadline=$(($(now_ms) + 2000))
    for p in $(echo "$killed" | tr ' ' '\n' | sort -u); do
        while [ -e "/proc/$p" ] && [ "$(now_ms)" -lt "$deadline" ]; do sleep 0.05; done
    done
    # 2. The mounts that keep the namespaces alive, deepest first (a few rounds: mounts can be stacked).
    local mounts m
    for _ in 1 2 3; do
        mounts=$(awk -v d="$dir" '$5 == d || index($5, d "/") == 1 {print $5}' /proc/self/mountinfo | sort -r)
        [ -n "$mounts" ] || break
        for m in $mounts; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; done
    done
    # 3. The network namespaces (their veth, ifb and TAP devices go with them), then the state.
    for h in $namespaces; do ip netns del "$h" 2>/dev/null || true; done
    rm -rf "$dir"
    if [ -n "$namespaces" ]; then echo "lab down"; else echo "lab down (nothing was up)"; fi
}

# tc rate (20mbit, 1.5Mbit, 800kbit, 1gbit, 100000bit) -> bits per second, or nothing if not understood.
rate_bits() {
    local r=${1,,}
    [[ "$r" =~ ^([0-9]+)(\.[0-9]+)?(bit|kbit|mbit|gbit)$ ]] || return 0
    awk -v v="${BASH_REMATCH[1]}${BASH_REMATCH[2]}" -v u="${BASH_REMATCH[3]}" \
        'BEGIN { m = (u == "gbit") ? 1e9 : (u == "mbit") ? 1e6 : (u == "kbit") ? 1e3 : 1; printf "%d\n", v * m }'
}

shape_rate() {  # tbf on eth0 for what HOST sends; what it receives goes through ifb0 and a second tbf
    local h=$1 rate=$2 bits burst
    bits=$(rate_bits "$rate")
    [ -n "$bits" ] && [ "$bits" -ge 8000 ] || die "rate '$rate': give it as tc does, at least 8kbit (20mbit, 500kbit)"
    # Bucket: 10 ms worth of data and at least 32 KiB (the 4 ms kernel tick at 20 Mbit/s is 10 KB).
    # Queue: 100 ms worth, enough for one TCP flow to fill the link at 40 ms round trip.
    burst=$((bits / 8 / 100))
    [ "$burst" -ge 32768 ] || burst=32768
    in_host "$h" tc qdisc replace dev eth0 root tbf rate "$rate" burst "$burst" latency 100ms
    in_host "$h" ip link show ifb0 > /dev/null 2>&1 || in_host "$h" ip link add ifb0 type ifb
    in_host "$h" ip link set ifb0 up
    in_host "$h" tc qdisc replace dev ifb0 root tbf rate "$rate" burst "$burst" latency 100ms
    if ! in_host "$h" tc qdisc show dev eth0 ingress | grep -q ingress; then
        in_host "$h" tc qdisc add dev eth0 handle ffff: ingress
        in_host "$h" tc filter add dev eth0 parent ffff: protocol all u32 match u32 0 0 \
            action mirred egress redirect dev ifb0
    fi
}

# Loss in the switch, on the frames to and from HOST's port: a drop inside the host (nftables egress,
# tc) is reported to the sender (sendto fails with ENOBUFS), which a lossy radio link never does.
shape_loss() {
    local h=$1 i=$2 pct=$3 direction=$4 per10k
    [[ "$pct" =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "loss '$pct': give a percentage, 0 to 100"
    per10k=$(awk -v p="$pct" 'BEGIN { printf "%d\n", p * 100 + 0.5 }')
    [ "$per10k" -le 10000 ] || die "loss '$pct': at most 100"
    if [ "$(link_kind)" = hub ]; then
        hub loss "$i" "$pct" "$direction" > /dev/null
        return
    fi
    command -v nft > /dev/null || die "nft is missing: run Scripts/setup.sh --lab"
    # The bridge's forward hook sees each copy of a flooded frame once per output port, so every
    # receiver of an mDNS packet draws its own loss. Creating the table, deleting it and creating it
    # again in one transaction replaces it atomically.
    ip netns exec "$switch" nft -f - <<EOF
table bridge loss_$h
delete table bridge loss_$h
table bridge loss_$h {
    chain forward {
        type filter hook forward priority 0;
        $([ "$direction" = in ] || echo "iifname \"port$i\" numgen random mod 10000 < $per10k drop")
        $([ "$direction" = out ] || echo "oifname \"port$i\" numgen random mod 10000 < $per10k drop")
    }
}
EOF
}

cmd_shape() {
    [ $# -ge 2 ] || die "usage: lab.sh shape HOST rate R | loss PCT [in|out] | delay MS [JITTER_MS] | clear"
    local h=$1 what=$2 i
    i=$(host_number "$h")
    shift 2
    case "$what" in
    rate)
        [ $# -eq 1 ] || die "usage: lab.sh shape HOST rate R"
        shape_rate "$h" "$1"
        echo "$1" > "$dir/$h/rate" ;;
    loss)
        [ $# -ge 1 ] && [ $# -le 2 ] || die "usage: lab.sh shape HOST loss PCT [in|out]"
        case "${2:-both}" in in | out | both) ;; *) die "loss: in or out, not '$2'" ;; esac
        shape_loss "$h" "$i" "$1" "${2:-both}"
        echo "$1%${2:+ $2}" > "$dir/$h/loss" ;;
    delay)
        [ $# -ge 1 ] && [ $# -le 2 ] || die "usage: lab.sh shape HOST delay MS [JITTER_MS]"
        [ "$(link_kind)" = hub ] ||
            die "delay needs the hub (this kernel has no netem): lab.sh down; LAB_LINK=hub lab.sh up N"
        hub delay "$i" "$@" > /dev/null
        echo "${1}ms${2:+ +-${2}ms}" > "$dir/$h/delay" ;;
    clear)
        in_host "$h" tc qdisc del dev eth0 root 2> /dev/null || true
        in_host "$h" tc qdisc del dev eth0 ingress 2> /dev/null || true
        in_host "$h" ip link del ifb0 2> /dev/null || true
        if [ "$(link_kind)" = hub ]; then
            hub delay "$i" 0 > /dev/null
            hub loss "$i" 0 > /dev/null
        else
            ip netns exec "$switch" nft delete table bridge "loss_$h" 2> /dev/null || true
        fi
        rm -f "$dir/$h/rate" "$dir/$h/loss" "$dir/$h/delay" ;;
    *) die "shape: unknown '$what' (rate, loss, delay, clear)" ;;
    esac
}

cmd_link() {
    if [ $# -ne 2 ] || { [ "$2" != down ] && [ "$2" != up ]; }; then die "usage: lab.sh link HOST down|up"; fi
    local i
    i=$(host_number "$1")
    # Cut at the switch side, like walking out of Wi-Fi range: HOST's eth0 stays configured but loses
    # its carrier, and nothing gets through in either direction. (`lab.sh exec HOST ip link set eth0
    # down` is the other case: the host itself turns its interface off.)
    if [ "$(link_kind)" = hub ]; then
        hub link "$i" "$2" > /dev/null
    else
        ip -n "$switch" link set "port$i" "$2"
    fi
}

cmd_status() {
    if [ ! -s "$dir/hosts" ]; then
        echo "lab: not up"
        [ -z "$(lab_namespaces)" ] || echo "leftover namespaces: $(lab_namespaces | xargs echo) (run lab.sh down)"
        return
    fi
    local kind h i=0 state avahi shaping
    kind=$(link_kind)
    echo "lab: $(hosts | wc -l) hosts, LAB_LINK=$kind, state in $dir"
    printf '%-6s %-12s %-9s %-15s %s\n' HOST ADDRESS AVAHI LINK SHAPING
    for h in $(hosts); do
        i=$((i + 1))
        state=$(ip -n "$h" -o link show eth0 2> /dev/null | sed -n 's/^[^<]*<\([^>]*\)>.*/\1/p')
        case ",$state," in
        ,,) state=missing ;;
        *,NO-CARRIER,*) state="cut" ;;
        *,UP,*) state=up ;;
        *) state=down ;;
        esac
        if avahi_ready "$h"; then avahi=ready; else avahi=NOT-READY; fi
        shaping=$(for f in rate loss delay; do
            if [ -s "$dir/$h/$f" ]; then echo "$f $(cat "$dir/$h/$f")"; fi
        done | paste -sd, - | sed 's/,/, /g')
        printf '%-6s %-12s %-9s %-15s %s\n' "$h" "$subnet.$i" "$avahi" "$state" "${shaping:--}"
    done
    if [ "$kind" = hub ]; then
        local pid
        pid=$(cat "$dir/hub.pid" 2> /dev/null || true)
        if [ -n "$pid" ] && kill -0 "$pid" 2> /dev/null; then
            echo "hub: pid $pid, cpu $(ps -o times= -p "$pid" | xargs) s"
            hub stats | sed 's/^/  /'
        else
            echo "hub: NOT RUNNING (the hosts have no link): run lab.sh down, then up"
        fi
    fi
}

case "${1:-}" in
up) shift; cmd_up "$@" ;;
down) cmd_down ;;
exec)
    [ $# -ge 3 ] || die "usage: lab.sh exec HOST CMD..."
    host_number "$2" > /dev/null
    h=$2
    shift 2
    # exec: the command's exit status and signals are the caller's, no shell in between.
    exec nsenter --net="/run/netns/$h" --mount="$ns_dir/$h.mnt" --uts="$ns_dir/$h.uts" --wd="$PWD" -- "$@" ;;
shape) shift; cmd_shape "$@" ;;
link) shift; cmd_link "$@" ;;
status) cmd_status ;;
hosts) hosts ;;
addr)
    [ $# -eq 2 ] || die "usage: lab.sh addr HOST"
    i=$(host_number "$2")
    echo "$subnet.$i" ;;
*) sed -n '2,13s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
esac
