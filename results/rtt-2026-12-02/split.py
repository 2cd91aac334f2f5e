#!/usr/bin/env python3
"""Where a round trip's time goes, thread by thread, from `perf script` of raw_syscalls:sys_enter and sys_exit:
each busy thread's time in user space and in each system call, per round trip, inside the window between the
1,000th and the last-1,000th write of the thread that writes most (one a round trip). Usage: split.py SCRIPT_TXT"""
import re, sys, collections
NAMES = {0: "read", 1: "write", 19: "readv", 20: "writev", 232: "epoll_wait", 281: "epoll_pwait",
         441: "epoll_pwait2", 45: "recvfrom", 44: "sendto", 47: "recvmsg", 46: "sendmsg", 202: "futex"}
line_re = re.compile(r"^\s*(\S.*?)\s+(\d+)\s+\[(\d+)\]\s+([\d.]+):\s+raw_syscalls:sys_(enter|exit):\s+NR\s+(\d+)(.*)$")
events = []
for line in open(sys.argv[1], errors="replace"):
    m = line_re.match(line)
    if m:
        comm, tid, _, t, kind, nr, rest = m.groups()
        events.append((float(t), tid, comm, kind, int(nr), rest))
events.sort(key=lambda e: e[0])
def data_write(e):
    return e[3] == "exit" and e[4] in (1, 20, 44, 46)
def data_read(e):
    if e[3] != "exit" or e[4] not in (0, 19, 45, 47):
        return False
    try:
        return int(e[5].split("=")[-1].strip(), 0) > 0
    except ValueError:
        return False
reads = collections.defaultdict(list)
for e in events:
    if data_write(e):
        reads[e[1]].append(e[0])
busiest = max(reads, key=lambda k: len(reads[k]))
t0, t1 = reads[busiest][1000], reads[busiest][-1000]
rts = len([t for t in reads[busiest] if t0 < t <= t1])
threads = collections.defaultdict(lambda: {"last": None, "in": None, "sys": collections.Counter(),
                                           "calls": collections.Counter(), "user": 0.0, "dataReads": 0, "comm": ""})
for e in events:
    t, tid, comm, kind, nr, rest = e
    th = threads[tid]; th["comm"] = comm
    inside = t0 < t <= t1
    if kind == "enter":
        if th["last"] is not None and inside:
            th["user"] += t - max(th["last"], t0)
        th["in"] = (nr, t)
    else:
        if th["in"] and th["in"][0] == nr and inside:
            name = NAMES.get(nr, str(nr))
            th["sys"][name] += t - max(th["in"][1], t0)
            th["calls"][name] += 1
            if data_read(e):
                th["dataReads"] += 1
        th["in"] = None
        th["last"] = t
cols = ("read", "write", "sendto", "epoll_wait", "futex")
print(f"{rts} round trips, {(t1-t0)/rts*1e6:.2f} µs each under tracing; per round trip, each busy thread: "
      "user-space µs, then each system call's µs/calls")
print(f"{'thread':>24} {'user':>7} " + " ".join(f"{n:>13}" for n in cols) + f" {'other':>13}")
for tid, th in sorted(threads.items(), key=lambda kv: -kv[1]["dataReads"]):
    if th["dataReads"] < rts // 2:
        continue
    other = sum(v for k, v in th["sys"].items() if k not in cols); otherc = sum(v for k, v in th["calls"].items() if k not in cols)
    cells = [f"{th['sys'][n]/rts*1e6:6.2f}/{th['calls'][n]/rts:5.2f}" for n in cols] + [f"{other/rts*1e6:6.2f}/{otherc/rts:5.2f}"]
    print(f"{th['comm'][:15]+':'+tid:>24} {th['user']/rts*1e6:7.2f} " + " ".join(f"{c:>13}" for c in cells))
