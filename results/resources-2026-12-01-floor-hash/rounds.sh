#!/usr/bin/env bash
# What the protocol's per-block check costs the floor, beside the library: ../resources-2026-12-01/by-thread.sh with
# two floor runs a round, Scripts/file-over-tcp.c as the floor (1 MiB reads and writes, nothing else) and the same
# floor with BLOCK_HASH=1 (both ends take XXH64 of every 1 MiB block as its bytes pass, as a resource's two ends do),
# built with -O3: its XXH64 then hashes at the library's speed here (14.4 GB/s a core, 1 MiB blocks in cache; 10 GB/s
# at -O2). ROUNDS rounds (default 5); the file and the copies in SCRATCH (default /dev/shm/floor-hash: tmpfs); one
# line a run, written to OUT/summary.txt (default this folder).
#
#   BIN=DIR results/resources-2026-12-01-floor-hash/rounds.sh   (DIR holds release builds of reflector and test-runner)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-$here} SCRATCH=${SCRATCH:-/dev/shm/floor-hash} CFLAGS=-O3 \
    FLOORS=$'floor\nfloor with block hashes|BLOCK_HASH=1' exec "$here/../resources-2026-12-01/by-thread.sh"
