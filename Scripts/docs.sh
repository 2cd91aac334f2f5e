#!/usr/bin/env bash
# Builds the documentation of the PeerConnectivity library (the DocC catalog in
# Sources/PeerConnectivity/PeerConnectivity.docc and the /// comments of the public API) with
# swift-docc-plugin. Any documentation warning (a broken link, a parameter documented that does not
# exist) fails it, as in the test command.
#
# Usage: Scripts/docs.sh [DIR] [PLUGIN OPTION...]
#   (no DIR)  a DocC archive at .build/plugins/Swift-DocC/outputs/PeerConnectivity.doccarchive
#   DIR       a static website in DIR: serve it (python3 -m http.server -d DIR) and open
#             /documentation/peerconnectivity/
#   options   passed to the plugin, e.g. --hosting-base-path NAME (see
#             swift package generate-documentation --help)
#
# Needs the Debian package libavahi-compat-libdnssd-dev (Scripts/setup.sh installs it), since the
# library is compiled to read its API.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! dpkg-query -W -f='${Status}' libavahi-compat-libdnssd-dev 2>/dev/null | grep -q 'install ok installed'; then
    echo "the library needs libavahi-compat-libdnssd-dev to compile: run Scripts/setup.sh" >&2
    exit 1
fi

output=()
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then
    mkdir -p "$1"
    output=(--output-path "$(cd "$1" && pwd)" --transform-for-static-hosting)
    shift
fi

swift package --disable-sandbox generate-documentation --target PeerConnectivity --warnings-as-errors \
    ${output[@]+"${output[@]}"} "$@"
