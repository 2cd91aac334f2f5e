# lab-two-host-prologue.sh: the start the lab checks share, sourced, not run.
# `lab_binaries NAME TOOL...` checks root and the TOOLs (after Scripts/setup.sh --lab unless LAB_SKIP_SETUP=1),
# and finds or builds reflector and test-runner (LAB_BIN, else `swift build`, debug); it sets bin.
# `lab_up NAME N` brings up an N-host lab whose teardown is trapped, with a logs folder; it sets lab, logs and
# hosts. `lab_prologue NAME CHECKS TOOL...` (lab-responsiveness.sh, lab-udp.sh) does both for 2 hosts (the TOOLs
# only in strict mode, CHECKS != sanity), starts `reflector --encryption none` on port 7100 of the first host,
# and `iperf3 -s` on 5201 in strict mode, and waits until they listen. It sets reflector_host, runner_host and
# address as well. Each exits 2 when it cannot run.
lab_binaries() {
    local name=$1 tool
    shift
    [[ $(id -u) == 0 ]] || { echo "$name.sh needs root (network namespaces)" >&2; exit 2; }
    [[ ${LAB_SKIP_SETUP:-0} == 1 ]] || Scripts/setup.sh --lab >/dev/null
    for tool in "$@"; do
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
}

lab_up() {
    local name=$1 count=$2
    lab=$(pwd)/Scripts/lab.sh
    logs=$(mktemp -d "/tmp/$name.XXXXXX")
    "$lab" down >/dev/null 2>&1 || true
    trap '"$lab" down >/dev/null 2>&1 || true' EXIT
    trap 'exit 130' INT TERM
    "$lab" up "$count" >/dev/null
    mapfile -t hosts < <("$lab" hosts)
}

lab_prologue() {
    local name=$1 checks=$2 port
    shift 2
    local needed=(tc)
    [[ $checks == sanity ]] || needed+=("$@") # the ground truth
    lab_binaries "$name" "${needed[@]}"
    lab_up "$name" 2
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
