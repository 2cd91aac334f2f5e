#ifndef PEERCONNECTIVITY_CDNSSD_SHIM_H
#define PEERCONNECTIVITY_CDNSSD_SHIM_H
// Avahi's Bonjour compatibility header (Debian: libavahi-compat-libdnssd-dev). It is included by
// path rather than through pkg-config, whose -D_REENTRANT flag SwiftPM rejects with a warning.
#if __has_include(<avahi-compat-libdns_sd/dns_sd.h>)
#include <avahi-compat-libdns_sd/dns_sd.h>
#else
#include <dns_sd.h>
#endif
#endif
