#!/usr/bin/env bash
# Speed of the core against raw TCP on loopback, in one run: round trip of 64-byte messages,
# throughput of 1 MiB messages, rate of 64-byte messages, browser start to connected.
# Extra arguments go to core-bench (see `core-bench --help`).
set -euo pipefail
cd "$(dirname "$0")/.."
Scripts/setup.sh
export AVAHI_COMPAT_NOWARN=1
swift build -c release --product core-bench
"$(swift build -c release --show-bin-path)/core-bench" "$@"
