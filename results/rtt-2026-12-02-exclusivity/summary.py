"""Sums up tools.sh's rounds.txt: the p50 without the checks over the p50 with them, and each over sockperf's."""
import collections
import statistics
import sys

p50 = collections.defaultdict(dict)
sockperf = {}
for line in open(sys.argv[1]):
    f = line.split()
    if f[0] == "round":
        r = int(f[1])
        sockperf[r] = float(f[3])
        p50[r][f[4]] = float(f[5])


def spread(values):
    return f"{min(values):.2f}-{max(values):.2f} (median {statistics.median(values):.2f})"


rounds = sorted(p50)
print(f"{len(rounds)} rounds; sockperf p50 {spread([sockperf[r] for r in rounds])} us")
print("unchecked over checked", spread([p50[r]["unchecked"] / p50[r]["checked"] for r in rounds]))
for build in ("checked", "unchecked"):
    print(f"{build:9} p50 {spread([p50[r][build] for r in rounds])} us, over sockperf",
          spread([p50[r][build] / sockperf[r] for r in rounds]))
