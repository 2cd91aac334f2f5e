# lab-two-host-prologue.sh: the start the lab checks against ground truth share (lab-responsiveness.sh,
# lab-udp.sh), sourced, not run. `lab_prologue NAME CHECKS TOOL...` checks root and the tools (the TOOLs only in
# strict mode, CHECKS != sanity), finds or builds reflector and test-runner (LAB_BIN, else `swift build`, debug),
# brings up a 2-host lab whose teardown is trapped, starts `reflector --encryption none` on port 7100 of the
# first host, and `iperf3 -s` on 5201 in strict mode, and waits until they listen. It sets bin, lab, logs,
# reflector_host, runner_host and address. Exits 2 when it cannot run.
lab_prologue() {
    local name=$1 checks=$2 tool port
    shift 2
    [[ $(id -u) == 0 ]] || { echo "$name.sh needs root (network namespaces)" >&2; exit 2; }
    [[ ${LAB_SKIP_SETUP:-0} == 1 ]] || Scripts/setup.sh --lab >/dev/null
    local needed=(tc)
    [[ $checks == sanity ]] || needed+=("$@") # the ground truth
    for tool in "${needed[@]}"; do
        command -v "$tool" >/dev/null || { echo "$tool is missing: run Scripts/setup.sh --lab" >&2; exit 2; }
    done
    bin=${LAB_BIN:-}
    if [[ -z $bin ]]; then
        swift build --product reflector 2>&1 | tail -n 1
        swift build --product test-runner 2>&1 | tail -n 1
        bin=$(swift build --show-bin-path)
    fi
    bin=$(cd "$bin" && pwd)
    [[ -x $bin/reflector && -x $bin/test-runner ]] || { echo "no reflector/test-runner in $bin" >&2; exit 2; }
    lab=$(pwd)/Scripts/lab.sh
    logs=$(mktemp -d "/tmp/$name.XXXXXX")
    "$lab" down >/dev/null 2>&1 || true
    trap '"$lab" down >/dev/null 2>&1 || true' EXIT
    trap 'exit 130' INT TERM

    "$lab" up 2 >/dev/null
    mapfile -t hosts < <("$lab" hosts)
    reflector_host=${hosts[0]} runner_host=${hosts[1]}
    address=$("$lab" addr "$reflector_host")
    "$lab" exec "$reflector_host" timeout 1800 "$bin/reflector" --no-dnssd --name "$name" --port 7100 \
        --encryption none >"$logs/reflector.log" 2>&1 &
    local ports=(7100)
    if [[ $checks != sanity ]]; then
        "$lab" exec "$reflector_host" timeout 1800 iperf3 -s -p 5201 >"$logs/iperf3-server.log" 2>&1 &
        ports+=(5201)
    fi
    local waited all
    for waited in $(seq 100); do
        all=1
        for port in "${ports[@]}"; do
            "$lab" exec "$reflector_host" ss -Hltn "sport = :$port" | grep -q . || { all=0; break; }
        done
        ((all)) && break
        sleep 0.1
    done
}
