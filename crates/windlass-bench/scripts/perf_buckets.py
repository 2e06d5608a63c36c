#!/usr/bin/env python3
"""Buckets perf samples of the Windlass threads by component.

Input: `perf script -F comm,tid,ip,sym,dso --comm windlass-rt,sqlx-sqlite-wor`
of a `perf record --call-graph dwarf` run of windlass-bench. Each sample goes
to the first rule, in priority order, that matches any frame of its call chain.

Usage: perf_buckets.py SCRIPT_OUTPUT windlass-rt,sqlx-sqlite
"""
import sys, re, collections

RULES = [
    ("sqlite thread", lambda comm, fr: comm.startswith("sqlx-sqlite")),
    ("store (windlass_store + sqlx pool/channels)", lambda c, fr: any("windlass_store" in f or "sqlx" in f for f in fr)),
    ("upstream: decode (windlass_providers::sse/pump/decode)", lambda c, fr: any("windlass_providers::sse" in f or "windlass_providers::pump" in f or "windlass_providers::decode" in f for f in fr)),
    ("upstream client (windlass_providers, reqwest, hyper client)", lambda c, fr: any("windlass_providers" in f or "reqwest" in f or "hyper::client" in f or "hyper_util::client" in f for f in fr)),
    ("engine: prepare (parse input, resolve tools)", lambda c, fr: any("windlass_engine::prepare" in f for f in fr)),
    ("server: SSE framing/serialization", lambda c, fr: any("windlass_server::sse" in f for f in fr)),
    ("request JSON parse (server)", lambda c, fr: any("serde_json::de" in f for f in fr) and any("windlass_server" in f for f in fr)),
    ("engine: other (loop, emitter, finalize, tools)", lambda c, fr: any("windlass_engine" in f for f in fr)),
    ("server: other (create_response, inflight, JSON response)", lambda c, fr: any("windlass_server" in f for f in fr)),
    ("HTTP server (hyper/axum conn)", lambda c, fr: any("windlass_bench::env" in f or "axum::serve" in f or "hyper::server" in f or "hyper_util::server" in f or "hyper::proto" in f for f in fr)),
    ("mock tool executor", lambda c, fr: any("windlass_testkit" in f for f in fr)),
    ("tokio runtime (scheduler, park/unpark, epoll, timers)", lambda c, fr: any("tokio::runtime" in f or "epoll" in f or "mio::" in f for f in fr)),
    ("unresolved stack", lambda c, fr: True),
]

def sqlite_sub(fr):
    s = " ".join(fr[:12])
    for key, name in [("fsync", "fsync"), ("pwrite64", "pwrite (WAL writes)"), ("pread64", "pread (page reads)"),
                      ("futex", "futex (wakeups to/from async side)"), ("sqlite3", "sqlite3 engine (user)"),
                      ("flume", "channels (flume)"), ("malloc", "malloc/free"), ("free", "malloc/free")]:
        if key in s:
            return name
    return "other"

def main(path, comms):
    buckets = collections.Counter(); kern = collections.Counter(); sub = collections.Counter()
    total = 0
    comm = None; frames = []; in_sample = False
    def flush():
        nonlocal total
        if comm is None or not any(comm.startswith(c) for c in comms):
            return
        total += 1
        for name, rule in RULES:
            if rule(comm, frames):
                buckets[name] += 1
                if frames and frames[0].endswith("[k]"):
                    kern[name] += 1
                if name == "sqlite thread":
                    sub[sqlite_sub(frames)] += 1
                break
    for line in open(path, errors="replace"):
        if not line.strip():
            if in_sample:
                flush()
            comm = None; frames = []; in_sample = False
            continue
        if not line.startswith((" ", "\t")):
            comm = line.split()[0]
            frames = []; in_sample = True
        else:
            parts = line.strip().split(None, 1)
            if len(parts) == 2:
                sym = parts[1]
                k = "[kernel.kallsyms]" in sym
                sym = re.sub(r"\s*\([^()]*\)\s*$", "", sym)
                frames.append(sym + (" [k]" if k else ""))
    if in_sample:
        flush()
    print(f"samples: {total}")
    for name, n in buckets.most_common():
        print(f"  {100.0*n/total:5.1f}%  {name}   (kernel {100.0*kern[name]/max(n,1):.0f}% of it)")
    if sub:
        print("  sqlite thread breakdown:")
        n_sqlite = sum(sub.values())
        for name, n in sub.most_common():
            print(f"      {100.0*n/total:5.1f}%  {name}")

if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2].split(","))
