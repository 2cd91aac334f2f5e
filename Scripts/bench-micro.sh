#!/usr/bin/env bash
# The micro-benchmarks of Benchmarks/ (ordo-one's package-benchmark): builds them in release, runs them
# once as the baseline "micro", then checks that run against the thresholds in Benchmarks/Thresholds.
#
# Usage: Scripts/bench-micro.sh [--update-thresholds] [--export [DIR]] [--filter REGEX]
#   --update-thresholds  write the run's p90 values as the new thresholds instead of checking them
#   --export [DIR]       also write the run as JSON (JMH format) and text into DIR
#                        (default: results/runs/micro-<UTC date>/)
#   --filter REGEX       run only the benchmarks whose names match (e.g. 'RoundTrip.*')
#
# Exit status: 0 when every checked metric is within its tolerance (or the thresholds were updated);
# non-zero when one is not (worse, or better by more than its tolerance: then record the gain with
# --update-thresholds), or when a build or a benchmark fails.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
baseline=micro
update=false
export_dir=""
filter=()

while (($#)); do
    case "$1" in
    --update-thresholds) update=true ;;
    --export)
        if (($# > 1)) && [[ "$2" != --* ]]; then
            export_dir=$2
            shift
        else
            export_dir="results/runs/micro-$(date -u +%Y-%m-%d)"
        fi
        ;;
    --filter)
        (($# > 1)) || { echo "--filter needs a regular expression" >&2; exit 1; }
        filter=(--filter "$2")
        shift
        ;;
    -h | --help)
        sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
        exit 0
        ;;
    *)
        echo "unknown option: $1 (see --help)" >&2
        exit 1
        ;;
    esac
    shift
done

benchmark() {
    swift package --package-path Benchmarks --allow-writing-to-package-directory "$@"
}

echo "== building the benchmarks (release)"
swift build --package-path Benchmarks -c release

echo "== running them as baseline '$baseline'"
output=$(mktemp)
trap 'rm -f "$output"' EXIT
benchmark benchmark baseline update "$baseline" --no-progress ${filter[@]+"${filter[@]}"}
benchmark benchmark baseline read "$baseline" --no-progress ${filter[@]+"${filter[@]}"} | tee "$output"

status=0
if $update; then
    echo "== writing thresholds to Benchmarks/Thresholds"
    benchmark benchmark thresholds update "$baseline" --path "$root/Benchmarks/Thresholds" \
        ${filter[@]+"${filter[@]}"}
else
    echo "== checking against Benchmarks/Thresholds"
    benchmark benchmark thresholds check "$baseline" --path "$root/Benchmarks/Thresholds" \
        ${filter[@]+"${filter[@]}"} || status=$?
    if ((status == 0)); then
        echo "thresholds: every checked metric within its tolerance"
    else
        echo "thresholds: deviations beyond tolerance (above); if they are gains, --update-thresholds records them" >&2
    fi
fi

if [[ -n "$export_dir" ]]; then
    mkdir -p "$export_dir"
    export_dir=$(cd "$export_dir" && pwd)
    cp "$output" "$export_dir/benchmarks.txt"
    swift package --package-path Benchmarks --allow-writing-to-directory "$export_dir" \
        benchmark baseline read "$baseline" --format jmh --path "$export_dir" --no-progress \
        ${filter[@]+"${filter[@]}"} >/dev/null
    echo "== exported to $export_dir: $(cd "$export_dir" && ls | tr '\n' ' ')"
fi

exit "$status"
