#!/usr/bin/env bash
# Builds the tools that measure a link (reflector and test-runner, or the products named) and prints the folder
# they are in; the build's own output goes to stderr. Every script that measures builds through this, so that
# they share one build folder and one set of flags.
#
# A release build turns off Swift's run-time exclusivity checks in every module (`-enforce-exclusivity=unchecked`,
# SwiftNIO's and the library's included; the compile-time checks stay): on a 64-byte round trip they are a third
# of SwiftNIO's instructions and 31 % of the whole library's (docs/design/PERFORMANCE-HISTORY.md, "The run-time
# exclusivity checks, off for the tools"), work a benchmark must not measure. The tools then say so in every
# result (`tool.exclusivityChecks: false`) and in `--version`. A debug build keeps them, as does
# EXCLUSIVITY=checked. An application that depends on the library chooses for itself (the same flag on its own
# `swift build`); the library's tests run with the checks on.
#
# Usage: bin=$(Scripts/build-tools.sh [PRODUCT...])
#   release: .build/release; with EXCLUSIVITY=checked: .build-checked/release; debug: .build/debug
# Env: CONFIGURATION (release, the default, or debug), EXCLUSIVITY (unchecked, the release default, or checked).
set -euo pipefail
cd "$(dirname "$0")/.."
configuration=${CONFIGURATION:-release}
exclusivity=${EXCLUSIVITY:-unchecked}
[ "$configuration" = release ] || exclusivity=checked
case "$exclusivity" in
unchecked) flags=(-Xswiftc -enforce-exclusivity=unchecked -Xswiftc -DPEER_CONNECTIVITY_UNCHECKED_EXCLUSIVITY) ;;
checked) flags=() ;;
*) echo "EXCLUSIVITY must be checked or unchecked, not $exclusivity" >&2; exit 2 ;;
esac
# The two release builds differ in every module's flags: each keeps a folder of its own, so that neither rebuilds
# the other; the tools' own (.build/release) is the one without the checks.
scratch=(--scratch-path .build)
[ "$configuration" = release ] && [ "$exclusivity" = checked ] && scratch=(--scratch-path .build-checked)
products=("$@")
[ ${#products[@]} -gt 0 ] || products=(reflector test-runner)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for product in "${products[@]}"; do
    # A failed build must not leave an older binary to be measured: its whole output, and no folder.
    if ! swift build -c "$configuration" "${scratch[@]}" "${flags[@]}" --product "$product" >"$log" 2>&1; then
        cat "$log" >&2
        echo "the build of $product failed" >&2
        exit 1
    fi
    grep -E "Build of product" "$log" >&2 || true
done
swift build -c "$configuration" "${scratch[@]}" "${flags[@]}" --show-bin-path
