#!/usr/bin/env bash
# Speed of encryption on loopback, in one run: invite to connected with encryption required
# (p50 / p99 over 50 new connections; target p50 < 20 ms), and 1 MiB messages one way encrypted
# against unencrypted (target: at least 50%). JSON in results/security-bench-<UTC date>.json.
# Extra arguments go to security-bench (see `security-bench --help`).
set -euo pipefail
cd "$(dirname "$0")/.."
Scripts/setup.sh
export AVAHI_COMPAT_NOWARN=1
swift build -c release --product security-bench
"$(swift build -c release --show-bin-path)/security-bench" "$@"
