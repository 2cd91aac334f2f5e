#!/usr/bin/env bash
# The benchmark plan shared by bench-loopback.sh and bench-lab.sh (source it, then call
# run_plan). Every run writes results/runs/<UTC date>-<test>-<name>.json (test-runner's default) and appends its path to $written.
#   data      reliable messages 1 B to 1 MiB           raw-tcp   the same sweep over raw TCP (TLS, as the data)
#   data      unreliable messages 1 B to 65,000 B     stream    8 streams of 32 MiB, echoed
#   resource  a 256 MiB file, 3 times, confirmed by SHA-256
# Needs: $bin (folder of test-runner), $name (run name), $written (file collecting the paths),
# run_prefix (array: what runs test-runner, e.g. (Scripts/lab.sh exec p2pB) or ()), target (array: how
# test-runner finds the reflector, e.g. (--service pcb-x) or (--reflector lab)).
# Env: COUNT (2000), WARMUP (200), SIZES (1,64,1024,16384,65536,1048576), UNRELIABLE_SIZES
# (1,64,1024,16384,65000), STREAMS (8), STREAM_BYTES (33554432), RESOURCE_BYTES (268435456), RESOURCES (3).

# The caller sets bin, name, written, run_prefix and target before calling run_plan.
# shellcheck disable=SC2154
run_one() {
    local out
    out=$("${run_prefix[@]}" "$bin/test-runner" run "${target[@]}" --name "$name" "$@")
    printf '%s\n' "$out" >&2
    printf '%s\n' "$out" | sed -n 's/^wrote //p' >>"$written"
}

run_plan() {
    local count=${COUNT:-2000} warmup=${WARMUP:-200}
    local sizes=${SIZES:-1,64,1024,16384,65536,1048576}
    echo "== data, reliable: $sizes" >&2
    run_one --test data --size "$sizes" --count "$count" --warmup "$warmup"
    echo "== raw-tcp: $sizes" >&2
    run_one --test raw-tcp --size "$sizes" --count "$count" --warmup "$warmup"
    echo "== data, unreliable: ${UNRELIABLE_SIZES:-1,64,1024,16384,65000}" >&2
    run_one --test data --mode unreliable --size "${UNRELIABLE_SIZES:-1,64,1024,16384,65000}" \
        --count "$count" --warmup "$warmup" --timeout 1
    echo "== stream: ${STREAMS:-8} streams of ${STREAM_BYTES:-33554432} bytes" >&2
    run_one --test stream --streams "${STREAMS:-8}" --bytes "${STREAM_BYTES:-33554432}" --duration 300
    echo "== resource: ${RESOURCES:-3} x ${RESOURCE_BYTES:-268435456} bytes" >&2
    run_one --test resource --bytes "${RESOURCE_BYTES:-268435456}" --count "${RESOURCES:-3}" --warmup 1 \
        --duration 600
}
