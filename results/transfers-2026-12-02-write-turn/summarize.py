#!/usr/bin/env python3
"""Each pair of runs (DIR/before/run-*, DIR/after/run-*, in order): the medians of their rounds, and after over before.
Usage: summarize.py DIR"""
import glob, json, statistics, sys

keys = ["streamsPlain", "streamsEncrypted", "streamsOverRawTCP", "resourcePlain", "resourceEncrypted",
        "resourceOverRawTCP", "besideP99Milliseconds", "besideEncryptedP99Milliseconds", "rawTCP8Streams"]
base = sys.argv[1]
before = [json.load(open(p)) for p in sorted(glob.glob(f"{base}/before/run-*/summary.json"))]
after = [json.load(open(p)) for p in sorted(glob.glob(f"{base}/after/run-*/summary.json"))]
ratios = {k: [] for k in keys}
for pair, (b, a) in enumerate(zip(before, after), 1):
    print(f"pair {pair}: medians of 5 rounds, before -> after")
    for k in keys:
        mb = statistics.median(r[k] for r in b["rounds"])
        ma = statistics.median(r[k] for r in a["rounds"])
        ratios[k].append(ma / mb)
        print(f"  {k:32} {mb:9.2f} -> {ma:9.2f}  ({ma / mb:.2f})")
print("after / before, pair by pair:")
for k in keys:
    print(f"  {k:32} {min(ratios[k]):.2f}-{max(ratios[k]):.2f} (median {statistics.median(ratios[k]):.2f})")
