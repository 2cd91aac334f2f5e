#!/usr/bin/env bash
# The whole test suite under ThreadSanitizer, in parallel as Scripts/test.sh runs it.
# Builds with --sanitize=thread in a build directory of its own (.build/tsan: the normal build in .build stays
# as it is, and the next plain `swift build` rebuilds nothing), then runs the tests there. Arguments go to
# `swift test` (e.g. --filter StreamTests). Exits non-zero when a test fails or ThreadSanitizer reports a race.
# Env: TSAN_SCRATCH (build directory, default .build/tsan); TSAN_OPTIONS (default below).
set -euo pipefail
cd "$(dirname "$0")/.."
Scripts/setup.sh
export AVAHI_COMPAT_NOWARN=1
scratch=${TSAN_SCRATCH:-.build/tsan}
started=$(date +%s)

echo "== swift build --sanitize=thread ($scratch)"
swift build --build-tests --sanitize=thread --scratch-path "$scratch"

# Without it, every access under a Mutex that was ever contended is reported as a race (see the file).
shim="$(cd "$scratch" && pwd)/libtsan-mutex-shim.so"
clang -shared -fPIC -O2 -Wall -Wextra Scripts/tsan-mutex-shim.c -o "$shim"
built=$(date +%s)

echo "== swift test --sanitize=thread"
# halt_on_error=0: every race is reported and the run goes on; the process then exits 66 if there was any.
# Scripts/tsan-suppressions.txt: reports that are not races, each with its reason.
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=0 second_deadlock_stack=1 suppressions=$PWD/Scripts/tsan-suppressions.txt}
status=0
LD_PRELOAD="$shim" swift test --skip-build --sanitize=thread --scratch-path "$scratch" "$@" || status=$?
finished=$(date +%s)
echo "== tsan: build $((built - started)) s, tests $((finished - built)) s, exit status $status"
exit "$status"
