#!/usr/bin/env bash
# Speed of resources and streams against raw TCP on loopback, in one run: a 1 GiB resource end to end,
# 8 parallel streams, 64-byte echoes with and without a resource transferring, and each side's peak
# memory (the receiver is a child process). Extra arguments go to transfer-bench (see `transfer-bench --help`).
set -euo pipefail
cd "$(dirname "$0")/.."
Scripts/setup.sh
export AVAHI_COMPAT_NOWARN=1
# transfer-bench lives in the Benchmarks package, out of the library's way.
swift build -c release --package-path Benchmarks --product transfer-bench
"$(swift build -c release --package-path Benchmarks --show-bin-path)/transfer-bench" "$@"
