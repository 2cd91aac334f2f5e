#!/usr/bin/env bash
# lab-udp.sh: `test-runner --test bulk -u -b RATE` against ground truth on the same link in the same run.
# Brings up a 2-host lab (its own: prefix p2pd, 10.83.0.x), shapes both hosts' eth0 with `tbf rate RATE
# burst 32kb latency 50ms` (what each host sends), runs `reflector --encryption none` on the first host and,
# from the second, each for UDP_TIME_S seconds with UDP_LENGTH-byte datagrams:
#   - `test-runner run --connect HOST --test bulk -u -b 10M -l 1400 --encryption none`: half the link;
#   - the same with `-b 40M`: twice the link, so the shaper drops what does not fit;
#   - `iperf3 -c HOST -u -b 10M -l 1400` and `-b 40M`, the ground truth (strict mode only);
#   - `test-runner run --connect HOST --test bulk -t 3 --encryption none`, a TCP stream, to see how it prints.
# Checks (UDP_CHECKS=strict, the default), each printed PASS/FAIL with its figures:
#   - 10M: received within 3 % of 10 Mbit/s, loss under 1 %;
#   - 40M: received within 10 % of the link's rate, and loss within 3 points of iperf3's at 40M;
#   - the TCP bulk's rates print in Mbit/s (the unit that fits a 20 Mbit/s link).
# UDP_CHECKS=sanity (the test suite's, on a machine that may be loaded, debug builds) checks the same without
# iperf3. The rates count each datagram's bytes (its 16-byte header included, as iperf3's -l), not the
# UDP, IP and Ethernet headers the shaper counts too: 1400 bytes of payload take 1442 on the link, so 20 Mbit/s
# of link carries 19.4 Mbit/s of datagrams.
# Writes a summary (the figures, the commands, the tool's version) to UDP_OUT when set, and keeps every
# document in the logs folder. Takes the lab down whatever happens; exits 1 if a check failed, 2 when it cannot
# run (not root, no iperf3 or tc). Needs root and Scripts/setup.sh --lab. About a minute.
# Env: LAB_BIN (folder with reflector and test-runner; default: swift build, debug), UDP_RATE (20mbit),
#      UDP_TIME_S (10), UDP_LENGTH (1400), UDP_CHECKS (strict|sanity), UDP_OUT, UDP_PREFIX (p2pd), UDP_DIR,
#      UDP_SUBNET (10.83.0), LAB_SKIP_SETUP (1: do not run Scripts/setup.sh --lab).
set -euo pipefail
cd "$(dirname "$0")/.."
export LAB_PREFIX=${UDP_PREFIX:-p2pd} LAB_DIR=${UDP_DIR:-/run/p2p-udp-lab}
export LAB_SUBNET=${UDP_SUBNET:-10.83.0} AVAHI_COMPAT_NOWARN=1
rate=${UDP_RATE:-20mbit}
seconds=${UDP_TIME_S:-10}
length=${UDP_LENGTH:-1400}
checks=${UDP_CHECKS:-strict}

# shellcheck source=Scripts/lab-two-host-prologue.sh
source Scripts/lab-two-host-prologue.sh
lab_prologue lab-udp "$checks" iperf3
for host in "$reflector_host" "$runner_host"; do
    "$lab" exec "$host" tc qdisc replace dev eth0 root tbf rate "$rate" burst 32kb latency 50ms
done

commands=("tc qdisc replace dev eth0 root tbf rate $rate burst 32kb latency 50ms (both hosts)")
for bitrate in 10M 40M; do
    run=("$bin/test-runner" run --connect "$address:7100" --test bulk -u -b "$bitrate" -l "$length" -t "$seconds"
        --encryption none --name "lab-udp-$bitrate" --output "$logs/udp-$bitrate.json")
    commands+=("${run[*]##*/}")
    "$lab" exec "$runner_host" timeout 120 "${run[@]}" >"$logs/udp-$bitrate.log" 2>&1 || true
    if [[ $checks != sanity ]]; then
        truth=(iperf3 -c "$address" -p 5201 -u -b "$bitrate" -l "$length" -t "$seconds" -J)
        commands+=("${truth[*]}")
        "$lab" exec "$runner_host" timeout 120 "${truth[@]}" >"$logs/iperf3-$bitrate.json" 2>&1 || true
    fi
done
tcp=("$bin/test-runner" run --connect "$address:7100" --test bulk -t 3 --encryption none --name lab-udp-tcp
    --output "$logs/tcp.json")
commands+=("${tcp[*]##*/}")
"$lab" exec "$runner_host" timeout 120 "${tcp[@]}" >"$logs/tcp.log" 2>&1 || true

status=0
python3 - "$logs" "$rate" "$seconds" "$length" "$checks" "${UDP_OUT:-}" <<'EOF' || status=$?
import json, os, re, sys
logs, rate, seconds, length, mode, out = sys.argv[1:7]
link = float(re.match(r"([0-9.]+)mbit", rate).group(1)) * 1e6
checks, failed = [], False
summary = {"rate": rate, "seconds": float(seconds), "length": int(length), "checkMode": mode, "runs": {}}

def check(name, ok, detail):
    global failed
    failed |= not ok
    line = f"{'PASS' if ok else 'FAIL'}  {name:<60} {detail}"
    checks.append(line)
    print(line, flush=True)

def ours(bitrate):
    try:
        document = json.load(open(os.path.join(logs, f"udp-{bitrate}.json")))
        summary["tool"] = document["tool"]
        return document["bulk"]["datagrams"]
    except Exception as error:
        return {"error": str(error)}

def iperf(bitrate):
    try:
        end = json.load(open(os.path.join(logs, f"iperf3-{bitrate}.json")))["end"]["sum"]
        return {"bitsPerSecond": end["bits_per_second"], "lostPercent": end["lost_percent"],
                "jitterMilliseconds": end["jitter_ms"], "packets": end["packets"]}
    except Exception:
        return None

def figures(result, truth):
    if "error" in result:
        return f"no document ({result['error']})"
    text = (f"sent {result['sentBitsPerSecond'] / 1e6:.2f} Mbit/s, received {result['receivedBitsPerSecond'] / 1e6:.2f}, "
            f"lost {result['lostPercent']:.2f} %, jitter {result['jitterNanoseconds'] / 1e6:.3f} ms")
    if truth:
        text += (f"; iperf3 received {truth['bitsPerSecond'] / 1e6:.2f} Mbit/s, lost {truth['lostPercent']:.2f} %, "
                 f"jitter {truth['jitterMilliseconds']:.3f} ms")
    return text

for bitrate in ("10M", "40M"):
    result, truth = ours(bitrate), iperf(bitrate)
    summary["runs"][bitrate] = {"ours": result, "iperf3": truth}
    detail = figures(result, truth)
    ok = "error" not in result
    if bitrate == "10M":
        ok = ok and abs(result["receivedBitsPerSecond"] - 10e6) <= 0.03 * 10e6 and result["lostPercent"] < 1
        check("-u -b 10M: received within 3 % of 10 Mbit/s, loss under 1 %", ok, detail)
    else:
        ok = ok and abs(result["receivedBitsPerSecond"] - link) <= 0.10 * link
        check(f"-u -b 40M: received within 10 % of the link's {link / 1e6:.0f} Mbit/s", ok, detail)
        if mode != "sanity":
            ok = "error" not in result and truth is not None and abs(result["lostPercent"] - truth["lostPercent"]) <= 3
            check("-u -b 40M: loss within 3 points of iperf3's", ok, detail)
tcp = open(os.path.join(logs, "tcp.log")).read()
lines = [line for line in tcp.splitlines() if "bit/s" in line or "B/s" in line]
check("TCP bulk at the link's rate prints Mbit/s", any("Mbit/s" in line for line in lines)
      and not any("Gbit/s" in line or "GB/s" in line for line in lines), (lines or ["no rate printed"])[-1].strip())
summary["checks"] = checks
if out:
    with open(out, "w") as f:
        json.dump(summary, f, indent=2, sort_keys=True)
        f.write("\n")
sys.exit(1 if failed else 0)
EOF
echo
echo "lab-udp: logs in $logs"
printf '%s\n' "${commands[@]}"
if ((status)); then
    echo "FAIL"
    exit 1
fi
echo "PASS"
