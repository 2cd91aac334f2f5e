#!/usr/bin/env python3
"""Per-thread CPU of a resource transfer, reflector and runner, over the transfer alone.

    threads.py REFLECTOR_PID LANDING_DIR

Polls every 5 ms until the test-runner process has come and gone: the bytes on disk under LANDING_DIR
(the receiver's partial file) and each thread's utime + stime from /proc (10 ms ticks). The transfer is
the span from the last poll before the first byte landed to the first poll with 1 GiB landed; prints that
span, both processes' CPU seconds in it, and each thread's (by name, threads of one name added up).
"""
import collections, glob, os, sys, time

reflector, landing = int(sys.argv[1]), sys.argv[2]
whole = 1 << 30
tick = os.sysconf("SC_CLK_TCK")


def threads(pid):
    usage = collections.Counter()
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            try:
                raw = open(f"/proc/{pid}/task/{task}/stat").read()
            except OSError:
                continue
            name = raw[raw.index("(") + 1 : raw.rindex(")")]
            fields = raw.rsplit(")", 1)[1].split()
            usage[name] += (int(fields[11]) + int(fields[12])) / tick
    except OSError:
        return None
    return usage


def runner():
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if open(f"/proc/{pid}/comm").read().strip() == "test-runner":
                return int(pid)
        except OSError:
            pass
    return None


def landed():
    total = 0
    for path in glob.glob(landing + "/**/*", recursive=True) + glob.glob(landing + "/.*"):
        try:
            if os.path.isfile(path):
                total += os.stat(path).st_blocks * 512
        except OSError:
            pass
    return total


polls, runner_pid, start = [], None, time.monotonic()
while time.monotonic() - start < 600:
    runner_pid = runner_pid or runner()
    run_threads = threads(runner_pid) if runner_pid else collections.Counter()
    polls.append((time.monotonic(), landed(), threads(reflector), run_threads))
    if runner_pid and run_threads is None:
        break
    time.sleep(0.005)

first = next(i for i, poll in enumerate(polls) if poll[1] > 0)
begin = polls[max(0, first - 1)]
end = next(poll for poll in polls if poll[1] >= whole)


def spent(before, after):
    return {name: after[name] - before.get(name, 0) for name in after if after[name] - before.get(name, 0) > 0.005}


reflector_threads, runner_threads = spent(begin[2], end[2]), spent(begin[3], end[3])
print(
    f"transfer {end[0] - begin[0]:.3f} s; reflector {sum(reflector_threads.values()):.2f} s CPU "
    f"({', '.join(f'{n} {v:.2f}' for n, v in sorted(reflector_threads.items()))}); "
    f"runner {sum(runner_threads.values()):.2f} s CPU "
    f"({', '.join(f'{n} {v:.2f}' for n, v in sorted(runner_threads.items()))})"
)
