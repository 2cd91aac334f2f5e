#!/usr/bin/env python3
"""lab-hub.py: the lab's user-space switch, for the one thing this kernel cannot do: delay.

The kernel has no sch_netem (and no fq/etf, so no BPF departure-time trick either), so a delayed link
needs a program that holds frames. `Scripts/lab.sh up` starts this hub when LAB_LINK=hub.

  lab-hub.py serve SOCKET TAP...   create one TAP device per lab host in the current network
                                   namespace, print READY, then forward frames until killed
  lab-hub.py ctl SOCKET COMMAND... send one command to a running hub, print its answer

Forwarding works like a learning switch: a unicast frame goes to the port its destination MAC was last
seen on, broadcast, multicast (mDNS) and unknown destinations go to every other port. A frame from host
S to host D leaves after delay(S) + delay(D), plus uniform jitter, so a host's delay is the one-way delay
of its own link in each direction. Frames between one pair of hosts never overtake each other, even with
jitter (TCP would read reordering as loss).

Commands (PORT is the host's number, 1 for the first host):
  delay PORT MS [JITTER_MS]   one-way delay of PORT's link, each direction
  loss PORT PCT [in|out]      drop PCT % of the frames in each direction of PORT's link, or only of
                              those to the host (in) or from it (out)
  link PORT down|up           cut PORT's link (carrier off, frames to and from it dropped) or restore it
  clear PORT                  no delay, no jitter, no loss, link up
  stats                       one line per port: settings and frame counters
Loss is done here (not in the hosts) so that senders do not notice it, as with radio loss. Rate limits
are done by lab.sh in the kernel (tbf), for both link kinds.
"""
import ctypes
import fcntl
import heapq
import os
import random
import select
import socket
import struct
import sys
import time

TUNSETIFF = 0x400454CA  # _IOW('T', 202, int)
TUNSETCARRIER = 0x400454E2  # _IOW('T', 226, int), Linux >= 4.19
IFF_TAP, IFF_NO_PI = 0x0002, 0x1000
PR_SET_TIMERSLACK = 29
MAX_QUEUED = 50_000  # frames held at once (~75 MB at most); beyond that they are dropped like a full queue
READ_BATCH = 256  # frames read from one port before looking at the others and at due frames


class Port:
    def __init__(self, number, name):
        self.number, self.name = number, name
        self.fd = os.open("/dev/net/tun", os.O_RDWR | os.O_NONBLOCK)
        fcntl.ioctl(self.fd, TUNSETIFF, struct.pack("16sH", name.encode(), IFF_TAP | IFF_NO_PI))
        self.delay = self.jitter = 0.0  # seconds
        self.loss_in = self.loss_out = 0.0  # probability, frames to the host and from it
        self.up = True
        self.rx = self.tx = 0
        self.dropped = 0  # by the hub: loss, cut link, full queue
        self.undeliverable = 0  # the host's eth0 was down (as while lab.sh up sets the hosts up)

    def set_carrier(self, on):
        try:
            fcntl.ioctl(self.fd, TUNSETCARRIER, struct.pack("i", 1 if on else 0))
        except OSError:
            pass  # older kernel: the host does not see the cut, but no frame gets through either

    def describe(self):
        return (f"{self.number} {self.name} link={'up' if self.up else 'down'} "
                f"delay_ms={self.delay * 1000:g} jitter_ms={self.jitter * 1000:g} "
                f"loss_in_pct={self.loss_in * 100:g} loss_out_pct={self.loss_out * 100:g} "
                f"rx={self.rx} tx={self.tx} dropped={self.dropped} undeliverable={self.undeliverable}")


class Hub:
    def __init__(self, control_path, tap_names):
        self.ports = [Port(i + 1, name) for i, name in enumerate(tap_names)]
        self.by_fd = {p.fd: p for p in self.ports}
        self.mac_port = {}  # MAC -> Port it was last seen on
        self.heap = []  # (due, seq, Port, frame)
        self.seq = 0
        self.last_due = {}  # (src, dst) -> due time of the last frame queued between them
        if os.path.exists(control_path):
            os.unlink(control_path)
        self.control = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.control.bind(control_path)
        self.control.listen(8)

    def run(self):
        # Sleep exactly as long as asked: the default 50 us timer slack would show in every delayed frame.
        try:
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_TIMERSLACK, 1, 0, 0, 0)
        except (OSError, AttributeError):
            pass
        print("READY", flush=True)
        watched = [p.fd for p in self.ports] + [self.control.fileno()]
        while True:
            timeout = max(0.0, self.heap[0][0] - time.monotonic()) if self.heap else None
            readable, _, _ = select.select(watched, [], [], timeout)
            for fd in readable:
                if fd == self.control.fileno():
                    self.serve_command()
                else:
                    self.read_port(self.by_fd[fd])
            self.send_due()

    def read_port(self, src):
        for _ in range(READ_BATCH):
            try:
                frame = os.read(src.fd, 65536)
            except BlockingIOError:
                return
            except OSError:
                return  # the host's end is down
            src.rx += 1
            if not src.up:
                src.dropped += 1
                continue
            self.mac_port[frame[6:12]] = src
            dst = None if frame[0] & 1 else self.mac_port.get(frame[0:6])  # group bit: broadcast/multicast
            if dst is None:
                for port in self.ports:
                    if port is not src:
                        self.forward(src, port, frame)
            elif dst is not src:
                self.forward(src, dst, frame)

    def forward(self, src, dst, frame):
        if not dst.up or len(self.heap) >= MAX_QUEUED:
            dst.dropped += 1
            return
        if (src.loss_out and random.random() < src.loss_out) or (dst.loss_in and random.random() < dst.loss_in):
            dst.dropped += 1
            return
        now = time.monotonic()
        due = now + src.delay + dst.delay
        if src.jitter:
            due += random.uniform(-src.jitter, src.jitter)
        if dst.jitter:
            due += random.uniform(-dst.jitter, dst.jitter)
        pair = (src.number, dst.number)
        due = max(due, now, self.last_due.get(pair, 0.0))  # no overtaking between one pair
        self.last_due[pair] = due
        if due <= now and not self.heap:
            self.write(dst, frame)  # no delay and nothing waiting: skip the queue
            return
        heapq.heappush(self.heap, (due, self.seq, dst, frame))
        self.seq += 1

    def send_due(self):
        now = time.monotonic()
        while self.heap and self.heap[0][0] <= now:
            _, _, dst, frame = heapq.heappop(self.heap)
            if dst.up:
                self.write(dst, frame)
            else:
                dst.dropped += 1  # cut while the frame was on its way

    @staticmethod
    def write(dst, frame):
        try:
            os.write(dst.fd, frame)
            dst.tx += 1
        except OSError:
            dst.undeliverable += 1  # the host's eth0 is down: the frame is lost, as on a real link

    def serve_command(self):
        conn, _ = self.control.accept()
        with conn:
            conn.settimeout(1.0)  # a stuck client must not stop the forwarding for long
            try:
                request = conn.recv(4096).decode().split()
                answer = self.command(request)
            except (OSError, UnicodeDecodeError) as e:
                answer = f"error: {e}"
            except (ValueError, IndexError):
                answer = ("error: usage: delay PORT MS [JITTER_MS] | loss PORT PCT [in|out] | link PORT down|up"
                          " | clear PORT | stats")
            try:
                conn.sendall((answer + "\n").encode())
            except OSError:
                pass

    def port(self, text):
        number = int(text)
        if not 1 <= number <= len(self.ports):
            raise ValueError
        return self.ports[number - 1]

    def command(self, words):
        verb = words[0]
        if verb == "stats":
            return "\n".join(p.describe() for p in self.ports) + f"\nqueued={len(self.heap)}"
        port = self.port(words[1])
        if verb == "delay":
            delay_ms = float(words[2])
            jitter_ms = float(words[3]) if len(words) > 3 else 0.0
            if delay_ms < 0 or jitter_ms < 0 or jitter_ms > delay_ms:
                return "error: need 0 <= JITTER_MS <= MS"
            port.delay, port.jitter = delay_ms / 1000, jitter_ms / 1000
        elif verb == "loss":
            pct = float(words[2])
            direction = words[3] if len(words) > 3 else "both"
            if not 0 <= pct <= 100 or direction not in ("in", "out", "both"):
                return "error: need 0 <= PCT <= 100, and in, out or nothing after it"
            if direction != "out":
                port.loss_in = pct / 100
            if direction != "in":
                port.loss_out = pct / 100
        elif verb == "link" and words[2] in ("up", "down"):
            port.up = words[2] == "up"
            port.set_carrier(port.up)
        elif verb == "clear":
            port.delay = port.jitter = port.loss_in = port.loss_out = 0.0
            port.up = True
            port.set_carrier(True)
        else:
            raise ValueError
        return "ok " + port.describe()


def ctl(control_path, words):
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(5.0)
            s.connect(control_path)
            s.sendall((" ".join(words) + "\n").encode())
            answer = b""
            while chunk := s.recv(65536):
                answer += chunk
    except OSError as e:
        print(f"lab-hub: no hub answering at {control_path}: {e}", file=sys.stderr)
        return 1
    text = answer.decode().rstrip("\n")
    if text.startswith("error") or not text:
        print(f"lab-hub: {text or 'no answer'}", file=sys.stderr)
        return 1
    print(text)
    return 0


def main(argv):
    if len(argv) >= 3 and argv[0] == "serve":
        Hub(argv[1], argv[2:]).run()
        return 0
    if len(argv) >= 3 and argv[0] == "ctl":
        return ctl(argv[1], argv[2:])
    print(__doc__.strip(), file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
