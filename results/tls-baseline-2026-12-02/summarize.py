#!/usr/bin/env python3
"""Round by round: the library's encrypted 64-byte round trip p50 and 1 MiB echoes, each over raw TLS's of the same
round (the raw-tcp test, encrypted). Usage: summarize.py DIR (the documents rounds.sh writes)"""
import json,sys,glob,statistics as st
d=sys.argv[1]
def get(t,e,r):
    x=json.load(open(f"{d}/{t}-{e}-{r}.json")); res={y['size']:y for y in x['results']}
    return res[64]['roundTrip']['p50Nanoseconds']/1000, res[1048576]['throughput']['receivedBytesPerSecond']/1e6
rounds=sorted({int(p.rsplit('-',1)[1].split('.')[0]) for p in glob.glob(f"{d}/data-required-*.json")})
rt=[];mb=[];rr=[];rm=[];pr=[];pm=[]
for r in rounds:
    a=get('data','required',r); b=get('raw-tcp','required',r); c=get('data','none',r)
    rt.append(a[0]); mb.append(a[1]); rr.append(a[0]/b[0]); rm.append(a[1]/b[1]); pr.append(c[0]); pm.append(c[1])
f=lambda v,p=2: f"{min(v):.{p}f}-{max(v):.{p}f} (median {st.median(v):.{p}f})"
print("encrypted 64 B p50 us", f(rt,0)); print("encrypted 1 MiB echoes MB/s", f(mb,0))
print("64 B p50 over raw TLS", f(rr)); print("1 MiB over raw TLS", f(rm))
print("plain 64 B p50 us", f(pr,0), "plain 1 MiB MB/s", f(pm,0))
