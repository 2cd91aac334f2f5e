#!/usr/bin/env python3
"""What large messages that are never finished make a reflector hold, and what it keeps once their peers leave.

Starts `reflector` (plain links, no DNS-SD, ephemeral ports, every runner from 127.0.0.1 allowed), joins PEERS
hand-written peers to it, each opening MESSAGES large messages of SIZE bytes and sending all but their last
byte as the reflector's credit allows (those it refuses busy, RESET 8, stop). Prints the reflector's RSS
before, while they hold their messages, and 3 s after they have closed their sockets.

    Scripts/large-message-memory.py REFLECTOR [PEERS=32] [MESSAGES=2] [SIZE=16777216] [reflector options...]
"""
import re
import select
import socket
import struct
import subprocess
import sys
import threading
import time
import uuid


def frame(kind, body=b""):
    return struct.pack(">IB", 1 + len(body), kind) + body


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as status:
        return int(re.search(r"VmRSS:\s+(\d+)", status.read()).group(1)) / 1024


class Peer:
    """A runner that speaks the wire protocol by hand (docs/PROTOCOL.md): HELLO, INVITE, then OPENs and CHUNKs."""

    def __init__(self, port, index, messages, size):
        self.sock = socket.create_connection(("127.0.0.1", port))
        name = f"filler-{index}".encode()
        hello = b"PCON" + struct.pack(">H", 5) + uuid.uuid4().bytes + bytes([len(name)]) + name + bytes([0, 0])
        fields = bytes([1, 1, 0, 4]) + struct.pack(">I", 16 << 20)
        self.sock.sendall(frame(0x01, hello) + frame(0x02, struct.pack(">I", 10_000) + fields))
        self.inbox = b""
        self.accepted = False
        self.opened = False
        self.size = size
        self.refused = 0
        # Channel -> [bytes still to send (all but the last), credit left]; the first window is 256 KiB.
        self.channels = {2 * n + 1: [size - 1, 256 << 10] for n in range(messages)}

    def read(self):
        data = self.sock.recv(1 << 20)
        if not data:
            raise ConnectionError("the reflector closed the link")
        self.inbox += data
        while len(self.inbox) >= 5:
            length, kind = struct.unpack(">IB", self.inbox[:5])
            if len(self.inbox) < 4 + length:
                break
            body, self.inbox = self.inbox[5:4 + length], self.inbox[4 + length:]
            if kind == 0x03:
                self.accepted = True
            elif kind == 0x04:
                raise ConnectionError(f"declined, reason {body[0]}")
            elif kind == 0x24 and struct.unpack(">I", body[:4])[0] in self.channels:
                self.channels[struct.unpack(">I", body[:4])[0]][1] += struct.unpack(">I", body[4:8])[0]
            elif kind == 0x23:
                self.refused += body[4] == 8
                self.channels.pop(struct.unpack(">I", body[:4])[0], None)

    def write(self):
        """Sends what the credit allows, and a keepalive; returns whether bytes are left to send."""
        if not self.accepted:
            return True
        out = b""
        if not self.opened:
            self.opened = True
            out += b"".join(frame(0x20, struct.pack(">IBQ", channel, 3, self.size)) for channel in self.channels)
        for channel, state in self.channels.items():
            while state[0] > 0 and state[1] > 0:
                n = min(state[0], state[1], 65536)
                out += frame(0x21, struct.pack(">I", channel) + bytes(n))
                state[0] -= n
                state[1] -= n
        self.sock.sendall(out + frame(0x11))
        return any(state[0] > 0 for state in self.channels.values())


def main():
    reflector, *rest = sys.argv[1:]
    peers, messages, size = (int(rest.pop(0)) if rest and rest[0].isdigit() else d for d in (32, 2, 16 << 20))
    process = subprocess.Popen(
        [reflector, "--encryption", "none", "--no-dnssd", "--no-raw-echo", "--port", "0", "--udp-ports",
         "ephemeral", "--max-runners-per-address", str(max(peers, 8)), "--max-runners", str(max(peers, 32)), *rest],
        stdout=subprocess.PIPE, text=True)
    port = next(int(m.group(1)) for line in process.stdout if (m := re.search(r"(?:^| )port=(\d+)", line)))
    threading.Thread(target=lambda: [None for _ in process.stdout], daemon=True).start()
    time.sleep(1)
    start = rss_mib(process.pid)
    group = []
    for index in range(peers):  # one at a time, so that none is declined for the invitations pending at once
        group.append(Peer(port, index, messages, size))
        while not group[-1].accepted:
            group[-1].read()
    deadline = time.monotonic() + 120
    sending = True
    while sending and time.monotonic() < deadline:
        readable, _, _ = select.select([peer.sock for peer in group], [], [], 0.05)
        for peer in group:
            if peer.sock in readable:
                peer.read()
        sending = [peer.write() for peer in group if peer.channels or not peer.accepted]
        sending = any(sending)
    time.sleep(1)
    held = rss_mib(process.pid)
    for peer in group:
        peer.sock.close()
    time.sleep(3)
    after = rss_mib(process.pid)
    process.terminate()
    process.wait()
    print(f"peers={peers} messages={messages} size={size} refused_busy={sum(p.refused for p in group)} "
          f"all_sent={'no' if sending else 'yes'}")
    print(f"rss_start_mib={start:.1f} rss_held_mib={held:.1f} rise_mib={held - start:.1f} "
          f"rss_after_mib={after:.1f} after_minus_start_mib={after - start:.1f}")


main()
