#!/usr/bin/env bash
# The library's architecture rules, checked from its sources (docs/ARCHITECTURE.md, "Rules the build
# checks"): no file over 400 lines; the floor plan (at most 25 files at the root of PeerConnectivity, its
# public face; no file loose at the root of Core or Transport; no folder of one file); no Task.sleep used as a
# timer; Glibc in one platform folder only; and no SwiftNIO type in the public API of the PeerConnectivity
# module. It prints every place that breaks a rule. Exit 0, or 1 with --strict when a rule is broken.
#
# Usage: Scripts/check-architecture.sh [--strict]
set -euo pipefail
# `report` at the end of each pipeline runs in this shell, so what it finds reaches `broken`.
shopt -s lastpipe
cd "$(dirname "$0")/.."

strict=false
[ "${1:-}" = "--strict" ] && strict=true
library=(Sources/PeerConnectivityCore Sources/PeerConnectivityTransport Sources/PeerConnectivity)
broken=0
report() { # RULE, then the places on standard input
    local places
    places=$(cat)
    if [ -n "$places" ]; then
        broken=1
        echo "$1:"
        printf '%s\n' "$places" | sed 's/^/  /'
    else
        echo "$1: none"
    fi
}

find "${library[@]}" -name '*.swift' -print0 | xargs -0 wc -l | awk '$2 != "total" && $1 > 400 { print $2 ": " $1 " lines" }' |
    report "files over 400 lines" || true
root_files=$(find Sources/PeerConnectivity -maxdepth 1 -name '*.swift' | wc -l)
if [ "$root_files" -gt 25 ]; then echo "Sources/PeerConnectivity: $root_files files at the root"; fi |
    report "more than 25 files at the root of PeerConnectivity (its public face; the rest goes in folders by role)" || true
find Sources/PeerConnectivityCore Sources/PeerConnectivityTransport -maxdepth 1 -name '*.swift' |
    report "files loose at the root of Core or Transport (each belongs in a folder by role)" || true
for folder in $(find "${library[@]}" -type d); do
    count=$(find "$folder" -maxdepth 1 -name '*.swift' | wc -l)
    if [ "$count" -eq 1 ]; then echo "$folder"; fi
done | report "folders that hold a single Swift file (join it to the folder of its role)" || true
grep -rn --include='*.swift' 'Task\.sleep' "${library[@]}" | report "Task.sleep in the library (timers belong on the event loop)" || true
grep -rln --include='*.swift' -E '^\s*import Glibc|canImport\(Glibc\)' "${library[@]}" | grep -v '/Platform/' |
    report "Glibc outside a Platform folder" || true
grep -rn --include='*.swift' -E '^\s*(public|open) .*\b(EventLoop|EventLoopGroup|ByteBuffer|Channel|NIO[A-Za-z]*)\b' \
    Sources/PeerConnectivity | report "SwiftNIO types in public declarations of PeerConnectivity" || true

if [ "$broken" -eq 1 ] && $strict; then exit 1; fi
exit 0
