#!/usr/bin/env bash
# A real peer's 64-byte echo round trip on loopback, unloaded and during a flood of 1,000 connections
# (idle, garbage, dribbling; each from its own 127.1.x.y address) against the same advertiser, in one run;
# how long the advertiser kept each flood connection; RSS. JSON in results/flood-bench-<UTC date>.json.
# Extra arguments go to flood-bench (see `flood-bench --help`).
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release --product flood-bench
"$(swift build -c release --show-bin-path)/flood-bench" "$@"
