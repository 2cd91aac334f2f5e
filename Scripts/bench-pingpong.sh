#!/usr/bin/env bash
# The C ping-pong behind the round-trip analysis of docs/design/PERFORMANCE-HISTORY.md: raw TCP round trips
# on loopback with 0-40 us of work per side, the two threads on one core each, then unpinned.
set -euo pipefail
cd "$(dirname "$0")/.."
binary=$(mktemp -d)/pingpong
trap 'rm -rf "$(dirname "$binary")"' EXIT
"${CC:-cc}" -O2 -pthread -o "$binary" Scripts/pingpong.c
for work in 0 5 10 20 40; do
    "$binary" "$work" 1
done
"$binary" 0 0
