#!/usr/bin/env bash
# The test command: installs what is missing, starts dbus + avahi-daemon, checks formatting,
# builds everything (failing on any compiler warning in this package), builds the documentation
# (failing on any DocC warning), runs the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
Scripts/setup.sh
export AVAHI_COMPAT_NOWARN=1

echo "== swift format lint"
swift format lint --strict --recursive Package.swift Sources Tests Benchmarks Examples

echo "== architecture rules (docs/ARCHITECTURE.md, \"Rules the build checks\")"
Scripts/check-architecture.sh --strict

echo "== swift build (all targets, tests included)"
log=$(mktemp)
swift build --build-tests 2>&1 | tee "$log"
# Our own code must compile without warnings; dependencies' warnings are not ours to fix.
if grep -E "^$(pwd)/(Sources|Tests)/.*warning:" "$log"; then
    echo "compiler warnings in this package (see above)" >&2
    exit 1
fi

echo "== public API against the last release (Scripts/check-api.sh)"
# A break fails the run unless CHANGELOG.md's Unreleased section names it. About 30 s after the build.
Scripts/check-api.sh

echo "== documentation (DocC, warnings are errors)"
# The DocC catalog and the public API's doc comments: a broken link fails the run. About 40 s after the build.
Scripts/docs.sh

if [ "$#" -gt 0 ]; then
    echo "== swift test $*"
    exec swift test --skip-build "$@"
fi

echo "== unit tests (Scripts/unit-tests.sh: in memory, no network, no daemon)"
Scripts/unit-tests.sh

echo "== swift test (integration tests and the README's samples)"
# In parallel: the tests hold on a loaded machine (bounds with room, blocking work off the cooperative pool),
# take turns at avahi-daemon (AvahiBudget: two at once, the DNS-SD stress test alone), and measure the connection
# flood in a child process.
swift test --skip-build --filter 'PeerConnectivityIntegrationTests|ReadmeTests' --skip 'LabResponsivenessTests|LabUDPTests|LabManyTests'

echo "== swift test (latency under load in the lab, alone: its load would be every other test's)"
swift test --skip-build --filter 'LabResponsivenessTests'

echo "== swift test (UDP at a bitrate in the lab, alone: it checks the sender's pacing)"
swift test --skip-build --filter 'LabUDPTests'

echo "== swift test (many runners at once in the lab, alone: it checks how they share the links)"
swift test --skip-build --filter 'LabManyTests'
