#!/usr/bin/env bash
# The main job: two processes on this host. One advertises a peer over DNS-SD and echoes every
# message; the other browses, finds it, invites it, and exchanges messages, printing round trips.
set -euo pipefail
cd "$(dirname "$0")/.."
Scripts/setup.sh
export AVAHI_COMPAT_NOWARN=1
swift build --product peer-demo
bin=$(swift build --show-bin-path)
service="pc-demo-$$"
service=${service:0:15}

"$bin/peer-demo" advertise --service "$service" --name echo &
advertiser=$!
trap 'kill "$advertiser" 2>/dev/null || true' EXIT
sleep 1.5   # DNS-SD registration takes about a second on Avahi
"$bin/peer-demo" browse --service "$service" --name demo --count "${COUNT:-10}"
kill -TERM "$advertiser"
wait "$advertiser"
