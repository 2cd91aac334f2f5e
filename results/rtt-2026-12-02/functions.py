#!/usr/bin/env python3
"""Instructions a round trip by function, from the counted parts `Scripts/count-instructions.sh --keep DIR` keeps:
each function's own instructions (not its callees'), or with a second file the difference, largest first; with
--callers NAME, who calls functions whose name holds NAME, and how often, a round trip.
Usage: functions.py FILE ROUNDTRIPS [BASE_FILE] [--callers NAME] [--top N]   (pipe through `swift demangle --simplified`)"""
import argparse, collections


def own_costs(path):
    """Each function's own Ir and, per callee name, its calls (callgrind's format, names uncompressed)."""
    own, calls = collections.Counter(), collections.defaultdict(collections.Counter)
    function = callee = None
    after_calls = False
    for line in open(path, errors="replace"):
        if line.startswith("fn="):
            function, after_calls = line[3:].strip(), False
        elif line.startswith("cfn="):
            callee = line[4:].strip()
        elif line.startswith("calls="):
            after_calls = True
            if callee:
                calls[callee][function] += int(line[6:].split()[0])
        elif function and (line[:1].isdigit() or line[:1] in "+-*"):
            parts = line.split()
            if len(parts) >= 2:
                if after_calls:
                    after_calls = False  # the call's inclusive cost: the callee's, not this function's
                else:
                    own[function] += int(parts[1])
    return own, calls


parser = argparse.ArgumentParser()
parser.add_argument("file"); parser.add_argument("roundtrips", type=int); parser.add_argument("base", nargs="?")
parser.add_argument("--callers"); parser.add_argument("--top", type=int, default=60)
arguments = parser.parse_args()
n = arguments.roundtrips
own, calls = own_costs(arguments.file)
base_own, base_calls = own_costs(arguments.base) if arguments.base else (collections.Counter(), {})
if arguments.callers:
    merged, base_merged = collections.Counter(), collections.Counter()
    for callee, by in calls.items():
        if arguments.callers in callee:
            merged.update(by)
    for callee, by in base_calls.items():
        if arguments.callers in callee:
            base_merged.update(by)
    print(f"calls a round trip: {sum(merged.values()) / n:.1f}" + (f", base {sum(base_merged.values()) / n:.1f}" if arguments.base else ""))
    rows = {k: (merged[k] - base_merged.get(k, 0)) / n for k in set(merged) | set(base_merged)}
else:
    print(f"instructions a round trip: {sum(own.values()) / n:.0f}" + (f", base {sum(base_own.values()) / n:.0f}" if arguments.base else ""))
    rows = {k: (own[k] - base_own.get(k, 0)) / n for k in set(own) | set(base_own)}
for name, value in sorted(rows.items(), key=lambda kv: -kv[1])[: arguments.top]:
    print(f"{value:9.1f}  {name}")
