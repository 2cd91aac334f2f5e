#!/usr/bin/env bash
# A/B: a 1 GiB resource, reflector and test-runner of two builds (base: /tmp/base, cur: /tmp/cur),
# alternating, on loopback, plaintext; prints MB/s and both ends' CPU seconds (the reflector's from /proc).
#
#   BASE=DIR CUR=DIR [ROUNDS=5] [SCRATCH=DIR] ab-resource.sh
#
# BASE and CUR hold release builds of reflector and test-runner. The runner's 1 GiB file and the
# received copy go to SCRATCH (default /tmp/ab/scratch: the disk here; /dev/shm for tmpfs).
set -euo pipefail
work=/tmp/ab
mkdir -p "$work"
base=${BASE:-/tmp/base}
cur=${CUR:-/tmp/cur}
rounds=${ROUNDS:-5}
bytes=$((1<<30))
scratch=${SCRATCH:-/tmp/ab/scratch}; mkdir -p $scratch
one() { # BIN
  local bin=$1 log=$work/refl.log
  rm -rf $scratch/landing; mkdir -p $scratch/landing
  $bin/reflector --no-dnssd --bind 127.0.0.1 --port 0 --raw-echo-port 0 --udp-ports ephemeral --encryption none --resource-directory $scratch/landing >$log 2>&1 &
  local pid=$!
  for _ in $(seq 100); do grep -q ' ready ' $log && break; sleep 0.1; done
  local port=$(sed -n 's/.* ready .* port=\([0-9]*\) .*/\1/p' $log)
  TMPDIR=$scratch timeout 600 $bin/test-runner run --connect 127.0.0.1:$port --test resource --bytes $bytes --encryption none --duration 600 --name ab --output $work/out.json >$work/out.txt 2>&1 || { cat $work/out.txt; }
  local ticks=$(awk '{print $14+$15}' /proc/$pid/stat)
  kill -TERM $pid; wait $pid 2>/dev/null || true
  local mbs=$(jq '.resources.bytesPerSecond / 1e6 | floor' $work/out.json)
  echo "$(basename $bin) MB/s=$mbs reflectorCPU=$(echo "scale=2; $ticks/100" | bc)s runnerCPU=$(jq ".cpu.runner.userSeconds + .cpu.runner.systemSeconds" $work/out.json 2>/dev/null)"
}
for r in $(seq $rounds); do
  if (( r % 2 )); then one $base; one $cur; else one $cur; one $base; fi
done
rm -rf $scratch
