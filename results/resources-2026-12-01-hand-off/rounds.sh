#!/usr/bin/env bash
# What a hand-off between two threads at each end costs the floor, beside the library: ../resources-2026-12-01/by-thread.sh
# with three floor runs a round, all hashing every 1 MiB block at both ends as a resource does (BLOCK_HASH=1), built
# with -O3: the floor (one thread a side, 1 MiB reads and writes), the same with the receiver reading at most 256 KiB at
# a time as the library does (RECEIVE_READ=262144), and the same again with each end copying on two threads through a
# ring of 64 buffers allocated once (HAND_OFF=1: the receiver's ring 16 MiB in reads of 256 KiB, the library's window
# and reads; the sender hashes as it reads the file, the receiver as it writes it, where the library does). ROUNDS
# rounds (default 10); the file and the copies in SCRATCH (default /dev/shm/hand-off: tmpfs); one line a run, then the
# ratios within each round, written to OUT/summary.txt (default this folder).
#
#   BIN=DIR results/resources-2026-12-01-hand-off/rounds.sh   (DIR holds release builds of reflector and test-runner)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-$here}
mkdir -p "$out"
rm -f "$out/summary.txt"
OUT=$out ROUNDS=${ROUNDS:-10} SCRATCH=${SCRATCH:-/dev/shm/hand-off} CFLAGS=-O3 \
    FLOORS=$'hashed floor|BLOCK_HASH=1\nhashed floor, 256 KiB reads|BLOCK_HASH=1 RECEIVE_READ=262144\nhashed floor, hand-off|BLOCK_HASH=1 RECEIVE_READ=262144 HAND_OFF=1' \
    "$here/../resources-2026-12-01/by-thread.sh"
python3 - "$out/summary.txt" <<'PY' | tee -a "$out/summary.txt"
import collections, re, statistics, sys
rounds = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    m = re.match(r"round (\d+): (.+?) MB/s (\d+); (.*)", line)
    if not m:
        continue
    rest = m.group(4)
    cpu = re.match(r"transfer [\d.]+ s; reflector ([\d.]+) s CPU .*; runner ([\d.]+) s CPU", rest)
    if not cpu:
        cpu = re.match(r"transfer [\d.]+ s; sender ([\d.]+) s CPU, receiver ([\d.]+) s CPU", rest)
    rounds[m.group(1)][m.group(2)] = (int(m.group(3)), float(cpu.group(1)) + float(cpu.group(2)))
def ratios(a, b, i=0):
    values = [r[a][i] / r[b][i] for r in rounds.values() if a in r and b in r]
    return f"{min(values):.2f}-{max(values):.2f} (median {statistics.median(values):.2f})"
pairs = [("hashed floor, 256 KiB reads", "hashed floor"), ("hashed floor, hand-off", "hashed floor"),
         ("hashed floor, hand-off", "hashed floor, 256 KiB reads"), ("library", "hashed floor"),
         ("library", "hashed floor, hand-off")]
print(f"ratios of rate within each round ({len(rounds)} rounds), range (median):")
for a, b in pairs:
    print(f"  {a} / {b}: {ratios(a, b)}")
print("both ends' CPU seconds for the GiB, range (median):")
for label in ["hashed floor", "hashed floor, 256 KiB reads", "hashed floor, hand-off", "library"]:
    values = [r[label][1] for r in rounds.values() if label in r]
    print(f"  {label}: {min(values):.2f}-{max(values):.2f} (median {statistics.median(values):.2f})")
PY
