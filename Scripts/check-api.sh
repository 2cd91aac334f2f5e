#!/usr/bin/env bash
# The public API against the last release's: fails when a change would break an app built against that
# release and CHANGELOG.md's Unreleased section does not name the break.
#
# The release's API is committed in Scripts/api/VERSION/ (what `swift package diagnose-api-breaking-changes`
# writes for each module, and COMMIT, the release's commit), so that the release is not built again on each
# run; only the current modules' API is read (about a minute after the build). Compared: the products an app
# depends on (PeerConnectivity, PeerConnectivityNIO, PeerConnectivityTesting); PeerConnectivityBench, the tools'
# engine, makes no promise of a stable API.
#
# To accept a break: add its line, exactly as this script prints it ("API breakage: ..."), as a bullet of
# CHANGELOG.md's Unreleased section, with what an app must change. At a release: tag it, then
# `Scripts/check-api.sh --record VERSION` writes the new baseline.
#
# Usage: Scripts/check-api.sh [--record VERSION]
set -euo pipefail
cd "$(dirname "$0")/.."
products=(PeerConnectivity PeerConnectivityNIO PeerConnectivityTesting)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

if [ "${1:-}" = "--record" ]; then
    version=${2:?"usage: Scripts/check-api.sh --record VERSION (a tag)"}
    commit=$(git rev-parse "$version^{commit}")
    swift package diagnose-api-breaking-changes "$commit" --products "${products[@]}" --baseline-dir "$scratch" \
        --regenerate-baseline >/dev/null || true
    mkdir -p "Scripts/api/$version"
    cp "$scratch/$commit"/*.json "Scripts/api/$version/"
    echo "$commit" >"Scripts/api/$version/COMMIT"
    echo "recorded the API of $version ($commit) in Scripts/api/$version"
    exit 0
fi

version=$(ls Scripts/api | sort -V | tail -n 1)
commit=$(cat "Scripts/api/$version/COMMIT")
if ! git cat-file -e "$commit^{commit}" 2>/dev/null; then
    # diagnose-api-breaking-changes names the baseline by its commit, which a shallow clone may not hold.
    echo "check-api: $version's commit $commit is not in this clone (shallow?): fetch it to compare the API" >&2
    exit 1
fi
mkdir -p "$scratch/baseline/$commit"
cp "Scripts/api/$version"/*.json "$scratch/baseline/$commit/"

# The breaks CHANGELOG.md's Unreleased section names, one a line, as the tool prints them.
awk '/^## \[Unreleased\]/ { on = 1; next } /^## / { on = 0 } on' CHANGELOG.md |
    sed -n 's/^[-*] *\(API breakage: .*\)$/\1/p' >"$scratch/allowed"

echo "== public API against $version ($commit)"
swift package diagnose-api-breaking-changes "$commit" --products "${products[@]}" \
    --baseline-dir "$scratch/baseline" --breakage-allowlist-path "$scratch/allowed"
