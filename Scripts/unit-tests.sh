#!/usr/bin/env bash
# The unit target alone (Tests/PeerConnectivityUnitTests): the state machines, the codecs, the handler through
# EmbeddedChannel, in memory, in seconds. What to run while changing one of them.
#
# As root, where unshare and ip are, it runs in a network namespace of its own that has nothing but a loopback
# (Foundation wants one) and with an empty /run: no avahi-daemon, no dbus, no other host. A unit test that
# reached for any of them fails here, so the target stays one that needs nothing running.
#
# Usage: Scripts/unit-tests.sh [--filter PATTERN]   (only the unit tests whose names match PATTERN)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(swift build --show-bin-path)
tests="$bin/PeerConnectivityPackageTests.xctest"
[ -x "$tests" ] || swift build --build-tests
filter=PeerConnectivityUnitTests
if [ "${1:-}" = "--filter" ]; then filter="PeerConnectivityUnitTests.*${2:?--filter takes a pattern}"; fi
args=(--testing-library swift-testing --filter "$filter")
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null && command -v ip >/dev/null && unshare -n -m true 2>/dev/null; then
    echo "(in a network namespace with only a loopback, and an empty /run)"
    # `swift test` itself waits for a network it will not get here: the test binary is run directly.
    exec unshare -n -m sh -c 'ip link set lo up && mount -t tmpfs tmpfs /run && exec "$0" "$@"' "$tests" "${args[@]}"
fi
exec "$tests" "${args[@]}"
