#!/usr/bin/env python3
"""Ratios of rounds.sh's output files: python3 summarize.py FILE... (after over before, round by round)."""
import re
import statistics
import sys

def span(values):
    return f"{min(values):.2f}-{max(values):.2f} (median {statistics.median(values):.2f})"

for path in sys.argv[1:]:
    runs = {}
    for line in open(path):
        m = re.match(r"(\d+) (before|after) (none|required) rate ([\d.]+) GB/s; reflector (\d+) faults, ([\d.]+) CPU s a GB; "
                     r"runner ([\d.]+) CPU s a GB", line)
        if m:
            runs[(int(m[1]), m[2], m[3])] = (float(m[4]), int(m[5]), float(m[6]) + float(m[7]))
    rounds = sorted({key[0] for key in runs})
    print(f"{path}: {len(rounds)} rounds")
    for encryption in ("none", "required"):
        rate = [runs[(r, "after", encryption)][0] / runs[(r, "before", encryption)][0] for r in rounds]
        cpu = {b: [runs[(r, b, encryption)][2] for r in rounds] for b in ("before", "after")}
        faults = {b: [runs[(r, b, encryption)][1] for r in rounds] for b in ("before", "after")}
        print(f"  {encryption:8} rate after / before {span(rate)}; both ends' CPU s a GB before {span(cpu['before'])}, "
              f"after {span(cpu['after'])}; the reflector's faults before {min(faults['before'])}-{max(faults['before'])}, "
              f"after {min(faults['after'])}-{max(faults['after'])}")
    for build in ("before", "after"):
        ratio = [runs[(r, build, "required")][0] / runs[(r, build, "none")][0] for r in rounds]
        print(f"  encrypted / plaintext, {build}: {span(ratio)}")
