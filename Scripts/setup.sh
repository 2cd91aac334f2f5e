#!/usr/bin/env bash
# Installs the Debian packages PeerConnectivity needs (only those missing) and starts
# dbus + avahi-daemon. Idempotent; needs root (or sudo) for apt-get.
#   --lab  also what the multi-host lab needs (Scripts/lab.sh, Scripts/lab-check.sh): nftables for loss,
#          python3 for the delaying hub, iperf3 and ping for the ground-truth check. Not by default:
#          this script runs before every test run and checks each package it lists.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
packages=(libavahi-compat-libdnssd-dev avahi-daemon avahi-utils libnss-mdns dbus iproute2 pkg-config)
case "${1:-}" in
--lab) packages+=(nftables python3 iperf3 iputils-ping) ;;
"") ;;
*) echo "usage: $0 [--lab]" >&2; exit 2 ;;
esac
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    sudo_cmd=""; [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
    echo "installing: ${missing[*]}"
    $sudo_cmd apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
fi
"$here/start-avahi.sh"
