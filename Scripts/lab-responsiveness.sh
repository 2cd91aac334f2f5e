#!/usr/bin/env bash
# lab-responsiveness.sh: `test-runner --test responsiveness` against ground truth measured on the same link in
# the same run. Brings up a 2-host lab (its own: prefix p2pr, 10.82.0.x), shapes both hosts' eth0 with
# `tbf rate RATE burst 32kb latency BUFFER` (what each host sends), runs `reflector --encryption none` on the
# first host and, from the second, for each buffer (300 ms: a bloated one; 10 ms: a shallow one):
#   - the ground truth in each direction: `ping -i 0.05` to the reflector's host while `iperf3 -P 8` loads
#     that direction (-R for the download), for PHASE_S - 2 seconds from the load's first 2 s;
#   - `test-runner run --connect HOST --test responsiveness -t PHASE_S -O 2 -P 8 --encryption none
#     --not-sent-lowat 4096 -C cubic` (each loaded phase's first 2 s left out as well), with `ping -D -i 0.05`
#     beside it: ping's median within each loaded phase's counted intervals is printed too, to tell the tool's
#     load from its probes. iperf3 runs with the same -C.
# Checks (RESPONSIVENESS_CHECKS=strict, the default), each printed PASS/FAIL with its figures:
#   - the bloated buffer: the download and upload phases' udp probes' round trip p50 (datagrams, as ping's;
#     the foreign probes on their TCP connection are printed beside) within 25 % of ping's median under
#     iperf3's load in that direction;
#   - the shallow buffer: the same within 5 ms;
#   - the shallow buffer's RPM in the download and upload phases at least 5x the bloated one's.
# RESPONSIVENESS_CHECKS=sanity (the test suite's, on a machine that may be loaded) checks instead that every
# phase has probes of every kind back and an RPM, and that the loaded round trip is at least 50 ms and 3x the
# idle one with the bloated buffer and under 100 ms with the shallow one, the self probes' too; it runs no
# iperf3 or ping.
# Writes a summary (the figures, the commands, the tool's version) to RESPONSIVENESS_OUT when set, and keeps
# every document in the logs folder. Takes the lab down whatever happens; exits 1 if a check failed, 2 when it
# cannot run (not root, no iperf3, ping or tc). Needs root and Scripts/setup.sh --lab. About 2 minutes.
# Env: LAB_BIN (folder with reflector and test-runner; default: swift build, debug), RESPONSIVENESS_RATE
#      (20mbit), RESPONSIVENESS_BUFFERS ("300ms 10ms"), RESPONSIVENESS_PHASE_S (8), RESPONSIVENESS_FLOWS (8),
#      RESPONSIVENESS_CHECKS (strict|sanity),
#      RESPONSIVENESS_LOWAT (the runner's --not-sent-lowat, 4096; empty: the runner's default),
#      RESPONSIVENESS_CONGESTION (-C for iperf3 and the tool: cubic where the kernel has it; empty: the kernel's
#      default), RESPONSIVENESS_OUT,
#      RESPONSIVENESS_SHAPE_AT (hosts: each host's eth0; switch: the switch's port toward each host),
#      RESPONSIVENESS_PREFIX (p2pr), RESPONSIVENESS_DIR, RESPONSIVENESS_SUBNET (10.82.0),
#      LAB_SKIP_SETUP (1: do not run Scripts/setup.sh --lab).
set -euo pipefail
cd "$(dirname "$0")/.."
export LAB_PREFIX=${RESPONSIVENESS_PREFIX:-p2pr} LAB_DIR=${RESPONSIVENESS_DIR:-/run/p2p-responsiveness-lab}
export LAB_SUBNET=${RESPONSIVENESS_SUBNET:-10.82.0} AVAHI_COMPAT_NOWARN=1
rate=${RESPONSIVENESS_RATE:-20mbit}
read -r -a buffers <<<"${RESPONSIVENESS_BUFFERS:-300ms 10ms}"
phase=${RESPONSIVENESS_PHASE_S:-8}
checks=${RESPONSIVENESS_CHECKS:-strict}
flows=${RESPONSIVENESS_FLOWS:-8}
# 4 KiB: on a 20 Mbit/s link shared by 8 flows, each flow's 16 KiB (the runner's default) is about 50 ms in each of
# the kernel's and the library's buffers, ahead of every self probe.
lowat=${RESPONSIVENESS_LOWAT-4096}
# cubic: a loss-based sender fills a bloated buffer, as most of a link's traffic does (bbr keeps it emptier, and
# the two buffers' RPMs closer); the kernel's own where it has no cubic.
available=$(cat /proc/sys/net/ipv4/tcp_available_congestion_control 2>/dev/null || true)
congestion=${RESPONSIVENESS_CONGESTION-$([[ " $available " == *" cubic "* ]] && echo cubic || true)}
congestion_flag=()
[[ -n $congestion ]] && congestion_flag=(-C "$congestion")

# shellcheck source=Scripts/lab-two-host-prologue.sh
source Scripts/lab-two-host-prologue.sh
lab_prologue lab-responsiveness "$checks" iperf3 ping

shape() { # BUFFER: the same tbf on both hosts' eth0
    if [[ ${RESPONSIVENESS_SHAPE_AT:-hosts} == switch ]]; then
        for port in port1 port2; do
            ip netns exec "${LAB_PREFIX}sw" tc qdisc replace dev "$port" root tbf rate "$rate" burst 32kb latency "$1"
        done
        return
    fi
    for host in "$reflector_host" "$runner_host"; do
        "$lab" exec "$host" tc qdisc replace dev eth0 root tbf rate "$rate" burst 32kb latency "$1"
    done
}

# Ping under iperf3's load in one direction: ping's round trips (ms, one a line) in LOG.ping, iperf3's JSON in
# LOG.iperf3.json. The pings start 2 s into the load and end 1 s before it.
ground_truth() { # LOG, download|upload
    local reverse=()
    [[ $2 == download ]] && reverse=(-R)
    "$lab" exec "$runner_host" timeout 60 iperf3 -c "$address" -p 5201 -P "$flows" -t $((phase + 1)) \
        "${reverse[@]}" "${congestion_flag[@]}" -J >"$1.iperf3.json" 2>&1 &
    local load=$!
    sleep 2
    "$lab" exec "$runner_host" ping -n -i 0.05 -w $((phase - 2)) "$address" 2>&1 |
        sed -n 's/.*time=\([0-9.]*\) ms.*/\1/p' >"$1.ping" || true
    wait "$load" || true
}

commands=()
for buffer in "${buffers[@]}"; do
    shape "$buffer"
    for direction in download upload; do
        if [[ $checks == sanity ]]; then
            : >"$logs/$buffer-$direction.ping" # no ground truth to compare with: only the tool's own figures
        else
            ground_truth "$logs/$buffer-$direction" "$direction"
        fi
    done
    run=("$bin/test-runner" run --connect "$address:7100" --test responsiveness -t "$phase" -O 2 -P "$flows"
        --encryption none --name "lab-$buffer" --output "$logs/$buffer.json")
    [[ -n $lowat ]] && run+=(--not-sent-lowat "$lowat")
    run+=("${congestion_flag[@]}")
    commands+=("tc qdisc replace dev eth0 root tbf rate $rate burst 32kb latency $buffer (both hosts); ${run[*]##*/}")
    # Strict mode also pings during the tool's own run (-D: each reply's time), to tell the tool's load from its
    # probes: where the foreign probes read above ping under iperf3, do they under the tool's load too?
    pinger=
    if [[ $checks != sanity ]]; then
        "$lab" exec "$runner_host" timeout 300 ping -D -n -i 0.05 "$address" >"$logs/$buffer-ours.ping" 2>&1 &
        pinger=$!
    fi
    "$lab" exec "$runner_host" timeout 300 "${run[@]}" --timestamps >"$logs/$buffer.log" 2>&1 || true
    if [[ -n $pinger ]]; then
        kill -INT "$pinger" 2>/dev/null || true # lab.sh exec execs: the pid is ping's
        wait "$pinger" || true
    fi
done

status=0
python3 - "$logs" "$rate" "$phase" "$flows" "${RESPONSIVENESS_OUT:-}" "$checks" "${buffers[@]}" <<'EOF' || status=$?
import json, os, statistics, sys
logs, rate, phase, flows, out, mode = sys.argv[1:7]
buffers = sys.argv[7:]
checks, summary, failed = [], {"rate": rate, "phaseSeconds": float(phase), "flows": int(flows), "buffers": {}}, False

def check(name, ok, detail):
    global failed
    failed |= not ok
    line = f"{'PASS' if ok else 'FAIL'}  {name:<60} {detail}"
    checks.append(line)
    print(line, flush=True)

def ping_under_ours(buffer, document, phase):
    """Ping's median during the tool's own load in `phase`: its replies (ping -D) inside that phase's intervals
    that count (not omitted), placed in time by the runner's timestamped interval lines."""
    import datetime, re
    try:
        log = open(os.path.join(logs, f"{buffer}.log")).read()
        replies = open(os.path.join(logs, f"{buffer}-ours.ping")).read()
    except OSError:
        return None
    line = re.search(r"^(\S+Z) \[\s*([0-9.]+)-\s*([0-9.]+) s\]", log, re.M)
    if not line:
        return None
    stamp = datetime.datetime.strptime(line.group(1), "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc)
    origin = stamp.timestamp() - float(line.group(3))
    windows = [(origin + i["startSeconds"], origin + i["endSeconds"]) for i in document.get("intervals") or []
               if i.get("phase") == phase and not i.get("omitted")]
    times = [float(t) for at, t in re.findall(r"^\[([0-9.]+)\].*time=([0-9.]+) ms", replies, re.M)
             if any(a <= float(at) < b for a, b in windows)]
    return (statistics.median(times), len(times)) if times else None

rpm = {}
for buffer in buffers:
    entry = summary["buffers"][buffer] = {}
    try:
        document = json.load(open(os.path.join(logs, f"{buffer}.json")))
    except Exception as error:
        check(f"{buffer} buffer: the run wrote its document", False, str(error))
        continue
    summary["tool"] = document["tool"]
    entry["error"] = document.get("error")
    phases = {p["name"]: p for p in (document.get("responsiveness") or {}).get("phases", [])}
    for direction in ("download", "upload"):
        pings = [float(v) for v in open(os.path.join(logs, f"{buffer}-{direction}.ping")).read().split()]
        try:
            iperf = json.load(open(os.path.join(logs, f"{buffer}-{direction}.iperf3.json")))
            iperf_bps = iperf["end"]["sum_received"]["bits_per_second"]
        except Exception:
            iperf_bps = None
        p = phases.get(direction)
        ping_ms = statistics.median(pings) if pings else None
        ours_ms = p["foreign"]["roundTrip"]["p50Nanoseconds"] / 1e6 if p and p["foreign"]["answered"] else None
        self_ms = p["self"]["roundTrip"]["p50Nanoseconds"] / 1e6 if p and p["self"]["answered"] else None
        udp = (p or {}).get("udp") or {}
        udp_ms = udp["roundTrip"]["p50Nanoseconds"] / 1e6 if udp.get("answered") else None
        load = p.get(direction) if p else None
        entry[direction] = {
            "pingMedianMilliseconds": ping_ms, "pings": len(pings), "iperf3BitsPerSecond": iperf_bps,
            "foreignP50Milliseconds": ours_ms, "selfP50Milliseconds": self_ms, "udpP50Milliseconds": udp_ms,
            "udpLost": udp["sent"] - udp["answered"] if udp else None,
            "loadBitsPerSecond": load["bytesPerSecond"] * 8 if load else None,
            "rpm": p.get("rpm") if p else None,
        }
        rpm.setdefault(direction, {})[buffer] = p.get("rpm") if p else None
        ours_ping = ping_under_ours(buffer, document, direction) if mode != "sanity" else None
        entry[direction]["pingUnderToolLoadMedianMilliseconds"] = ours_ping[0] if ours_ping else None
        truth = (f", ping {ping_ms:.1f} ms under iperf3 -P {flows} ({len(pings)} pings)" if ping_ms is not None else "")
        if ours_ping:
            truth += f", {ours_ping[0]:.1f} ms under the tool's load ({ours_ping[1]})"
        udp_text = (f"udp p50 {udp_ms:.1f} ms ({udp['sent'] - udp['answered']} of {udp['sent']} lost), "
                    if udp_ms is not None else "no udp probes, ")
        figures = (f"{udp_text}foreign p50 {ours_ms:.1f} ms{truth}; self p50 {self_ms or 0:.1f} ms; load "
                   f"{(load or {}).get('bytesPerSecond', 0) * 8 / 1e6:.1f} Mbit/s"
                   + (f", iperf3 {iperf_bps / 1e6:.1f}" if iperf_bps else "")
                   if ours_ms is not None else "no figure (see the logs)")
        idle = phases.get("idle")
        idle_ms = idle["foreign"]["roundTrip"]["p50Nanoseconds"] / 1e6 if idle and idle["foreign"]["answered"] else None
        if mode == "sanity":
            # Bounds with room: the queue a 300 ms buffer holds under load is far above any delay of a loaded
            # machine's scheduling, and a 10 ms one (about 16 ms measured) far below 100 ms.
            answered = bool(p and p["foreign"]["answered"] and p["self"]["answered"] and udp_ms and p.get("rpm"))
            check(f"{buffer} buffer, {direction}: probes of every kind back, an RPM", answered, figures)
            if buffer == buffers[0]:
                ok = ours_ms is not None and idle_ms is not None and ours_ms >= max(50, 3 * idle_ms)
                check(f"{buffer} buffer, {direction}: the queue seen (>= 50 ms, >= 3x idle)", ok,
                      f"{figures}; idle {idle_ms or 0:.2f} ms")
            else:
                ok = ours_ms is not None and ours_ms < 100
                check(f"{buffer} buffer, {direction}: loaded round trip under 100 ms", ok, figures)
                # The self probes' flow keeps its unsent bytes at the low watermark (about 35 ms measured;
                # 90-140 ms when the kernel alone bounded them).
                ok = self_ms is not None and self_ms < 100
                check(f"{buffer} buffer, {direction}: self probes under 100 ms", ok, figures)
        # The link's loaded round trip, as ping measures it, is the udp probes' (a lost one is lost, as a ping):
        # the foreign probes on their TCP connection are printed beside (a loss there holds up those behind).
        elif buffer == buffers[0]:
            ok = udp_ms is not None and ping_ms is not None and abs(udp_ms - ping_ms) <= 0.25 * ping_ms
            check(f"{buffer} buffer, {direction}: loaded round trip within 25 % of ping's", ok, figures)
        else:
            ok = udp_ms is not None and ping_ms is not None and abs(udp_ms - ping_ms) <= 5
            check(f"{buffer} buffer, {direction}: loaded round trip within 5 ms of ping's", ok, figures)
# The RPM weighs the self probes half, and they vary from run to run with each flow's share of the link: the
# sanity checks leave it to the strict ones.
if len(buffers) >= 2 and mode != "sanity":
    for direction, by_buffer in rpm.items():
        bloated, shallow = by_buffer.get(buffers[0]), by_buffer.get(buffers[1])
        ok = bool(bloated and shallow and shallow >= 5 * bloated)
        check(f"{direction}: RPM with {buffers[1]} at least 5x with {buffers[0]}", ok,
              f"RPM {shallow or 0:.0f} against {bloated or 0:.0f}")
summary["checks"] = checks
summary["checkMode"] = mode
if out:
    with open(out, "w") as f:
        json.dump(summary, f, indent=2, sort_keys=True)
        f.write("\n")
sys.exit(1 if failed else 0)
EOF
echo
echo "lab-responsiveness: logs in $logs"
printf '%s\n' "${commands[@]}"
if ((status)); then
    echo "FAIL"
    exit 1
fi
echo "PASS"
