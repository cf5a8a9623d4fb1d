#!/usr/bin/env python3
"""A pi session file (format v3) of N message entries for the import benchmarks (BENCHMARKS.md
"Other agents' files"): alternating user / assistant messages of about 830 bytes, one chain with
a branch every 500 entries. Usage: python3 scripts/pi-corpus.py N OUT.jsonl"""
import json, sys, random
n = int(sys.argv[1]); out = sys.argv[2]
random.seed(7)
base = 1796637600000
def iso(ms):
    import datetime
    return datetime.datetime.fromtimestamp(ms/1000, datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%S.') + f"{ms%1000:03d}Z"
usage = {"input":120,"output":30,"cacheRead":0,"cacheWrite":0,"totalTokens":150,"cost":{"input":0.1,"output":0.2,"cacheRead":0,"cacheWrite":0,"total":0.3}}
text = "The quick brown fox reads core/src/store.rs and answers about the session store. " * 6
with open(out, "w") as f:
    f.write(json.dumps({"type":"session","version":3,"id":f"bench-{n}","timestamp":iso(base),"cwd":"/work"})+"\n")
    parent = None
    for i in range(n):
        ms = base + i * 1000
        eid = f"{i:08x}"
        if i % 500 == 499 and i > 10:   # a branch now and then
            parent = f"{i-5:08x}"
        if i % 2 == 0:
            msg = {"role":"user","content":f"Question {i}: " + text,"timestamp":ms}
        else:
            msg = {"role":"assistant","content":[{"type":"text","text":f"Answer {i}: " + text}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":usage,"stopReason":"stop","timestamp":ms}
        f.write(json.dumps({"type":"message","id":eid,"parentId":parent,"timestamp":iso(ms),"message":msg})+"\n")
        parent = eid
