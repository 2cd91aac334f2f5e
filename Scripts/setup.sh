#!/usr/bin/env bash
# Installs the Debian packages PeerConnectivity needs (only those missing), python-zeroconf for the
# interop tests (PyPI package zeroconf, in a virtual environment at .build/interop-venv), chromium for
# the test that renders the HTML report in a browser, and starts dbus + avahi-daemon. Idempotent; needs root (or sudo) for apt-get.
#   --lab  also what the multi-host lab needs (Scripts/lab.sh, Scripts/lab-check.sh): nftables for loss,
#          python3 for the delaying hub, iperf3 and ping for the ground-truth check. Not by default:
#          this script runs before every test run and checks each package it lists.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
packages=(libavahi-compat-libdnssd-dev avahi-daemon avahi-utils libnss-mdns dbus iproute2 pkg-config
    python3 python3-venv chromium)
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
# python-zeroconf, an mDNS stack independent of Avahi, for InteropTests. In a virtual environment of Debian's
# python3 (Debian 12's pip refuses to install into the system's Python), pinned so that every run tests the same
# stack. A failed install does not stop the run: the interop tests then say that they are skipped, and why.
venv="$here/../.build/interop-venv"
zeroconf_version=0.154.0
if ! "$venv/bin/python3" -c "import zeroconf, sys; sys.exit(zeroconf.__version__ != '$zeroconf_version')" 2>/dev/null; then
    echo "installing python-zeroconf $zeroconf_version into .build/interop-venv"
    { /usr/bin/python3 -m venv "$venv" &&
        "$venv/bin/pip" install -q --disable-pip-version-check "zeroconf==$zeroconf_version"; } ||
        echo "warning: python-zeroconf not installed; the interop tests will be skipped" >&2
fi
"$here/start-avahi.sh"
