#!/usr/bin/env python3
"""An mDNS peer built on python-zeroconf, an mDNS stack independent of Avahi, driven by the interop tests.

It speaks on the loopback interface only (IPv4), so that what it sends stays on this machine, and reads one
JSON command per line on standard input:

  {"op": "register", "type": "_chat._tcp", "name": "...", "port": 7000, "txt": "<hex>"}
      publishes a service whose TXT record is exactly the given bytes (hostile ones included), at 127.0.0.1;
      with "unchecked_name": true, even under an instance name python-zeroconf would refuse (control characters);
  {"op": "unregister", "name": "..."}
      withdraws it (goodbye packets);
  {"op": "browse", "type": "_chat._tcp"}
      browses the type and reports each service added (resolved, with its TXT bytes) and removed.

It answers with one JSON object per line on standard output: {"event": "ready"} once started, then
"registered", "unregistered", "added", "removed", "error". End of input unregisters everything and exits.
"""

import json
import socket
import sys
import threading
import time

import zeroconf._core
from zeroconf import IPVersion, ServiceBrowser, ServiceInfo, ServiceStateChange, Zeroconf

# Instance names the tests publish on purpose although python-zeroconf would refuse them (control characters):
# its check is bypassed for these names only, to see what a browser makes of what another stack might send.
unchecked_names = set()
checked_instance_name = zeroconf._core.instance_name_from_service_info


def lenient_instance_name(info, strict=True):
    if info.name in unchecked_names:
        return info.name[: -len(info.type) - 1]
    return checked_instance_name(info, strict)


zeroconf._core.instance_name_from_service_info = lenient_instance_name

print_lock = threading.Lock()
services = {}
services_lock = threading.Lock()


def say(**fields):
    with print_lock:
        sys.stdout.write(json.dumps(fields, sort_keys=True) + "\n")
        sys.stdout.flush()


def full_type(type_):
    return type_ if type_.endswith(".local.") else type_ + ".local."


def register(zc, command):
    type_ = full_type(command["type"])
    name = command["name"]
    full_name = f"{name}.{type_}"
    unchecked = bool(command.get("unchecked_name"))
    info = ServiceInfo(
        type_,
        f"placeholder.{type_}" if unchecked else full_name,
        port=int(command["port"]),
        properties=bytes.fromhex(command["txt"]),
        server="zeroconf-peer.local.",
        addresses=[socket.inet_aton("127.0.0.1")],
    )
    if unchecked:
        unchecked_names.add(full_name)
        info.name = full_name
    # Known before registration ends (python-zeroconf returns after its announcements, seconds after the first),
    # so that an unregister sent meanwhile finds it.
    with services_lock:
        services[name] = info
    try:
        zc.register_service(info, allow_name_change=False)
    except Exception as error:  # reported to the test, which decides what it means
        with services_lock:
            services.pop(name, None)
        say(event="error", op="register", name=name, message=f"{type(error).__name__}: {error}")
        return
    say(event="registered", name=name)


def unregister(zc, command):
    name = command["name"]
    with services_lock:
        info = services.pop(name, None)
    if info is None:
        say(event="error", op="unregister", name=name, message="not registered")
        return
    zc.unregister_service(info)
    # An answer to a query that came just before the goodbye waits to be grouped with others (up to half a second,
    # longer on a loaded machine) and can go out after the goodbye, bringing the service back into every cache, this
    # process's own browser's included, for the record's whole TTL. One more goodbye once such answers are out
    # withdraws it for good. A loaded machine can hold such answers back for seconds: more goodbyes follow, 2, 4
    # and 8 seconds after the first, from a thread of their own (bounded: four in all).
    time.sleep(1)
    zc.send(zc.generate_service_broadcast(info, 0))
    say(event="unregistered", name=name)

    def later_goodbyes():
        for delay in (1, 2, 4):
            time.sleep(delay)
            try:
                zc.send(zc.generate_service_broadcast(info, 0))
            except Exception:  # the peer is closing: nothing left to withdraw
                return

    threading.Thread(target=later_goodbyes, daemon=True).start()


def browse(zc, command):
    type_ = full_type(command["type"])

    def resolve(name):
        instance = name[: -len(type_) - 1] if name.endswith("." + type_) else name
        try:
            info = zc.get_service_info(type_, name, timeout=5000)
        except Exception as error:  # a name python-zeroconf will not resolve: seen, not resolved
            say(event="error", op="resolve", name=instance, message=f"{type(error).__name__}: {error}")
            info = None
        if info is None:
            say(event="added", name=instance, port=None, txt=None)
        else:
            say(event="added", name=instance, port=info.port, txt=(info.text or b"").hex())

    def changed(zeroconf, service_type, name, state_change):
        if state_change is ServiceStateChange.Added:
            threading.Thread(target=resolve, args=(name,), daemon=True).start()
        elif state_change is ServiceStateChange.Removed:
            instance = name[: -len(type_) - 1] if name.endswith("." + type_) else name
            say(event="removed", name=instance)

    browsers.append(ServiceBrowser(zc, type_, handlers=[changed]))


browsers = []


def main():
    zc = Zeroconf(interfaces=["127.0.0.1"], ip_version=IPVersion.V4Only)
    operations = {"register": register, "unregister": unregister, "browse": browse}
    workers = []
    say(event="ready")
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            command = json.loads(line)
            operation = operations[command["op"]]
        except (ValueError, KeyError) as error:
            say(event="error", message=f"bad command {line!r}: {error}")
            continue
        # Registration probes for about 1.5 s: each command runs on its own thread so that several go at once.
        worker = threading.Thread(target=operation, args=(zc, command), daemon=True)
        worker.start()
        workers.append(worker)
    for worker in workers:
        worker.join(timeout=10)
    for browser in browsers:
        browser.cancel()
    zc.unregister_all_services()
    zc.close()


if __name__ == "__main__":
    main()
