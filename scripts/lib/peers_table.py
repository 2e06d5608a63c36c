#!/usr/bin/env python3
"""Tables of scripts/peers.sh: one per run and concurrency, then the range
of each figure over the runs. A path's added p50/p99 is against the direct
path of the same kind (JSON or streamed) in the same run."""
import sys
from collections import defaultdict

rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
secs, up = float(sys.argv[2]), sys.argv[3]

by = defaultdict(dict)  # (run, c) -> name -> figures
for run, c, name, n, errs, p50, p99, cpu, load in rows:
    by[(int(run), int(c))][name] = dict(
        n=int(n), errs=int(errs), p50=float(p50), p99=float(p99), cpu=int(cpu), load=load
    )


def base_of(name):
    return "direct-stream" if name.endswith("-stream") else "direct"


def added(group, name, q):
    base = group.get(base_of(name))
    if base is None or name.startswith("direct"):
        return None
    return group[name][q] - base[q]


def fmt(v, signed=False):
    if v is None:
        return ""
    return f"{v:+.2f}" if signed else f"{v:.2f}"


print(f"\nwrk -t2 -cC -d{secs:g}s per path, upstream first byte after {up} ms "
      "(streams: time to last byte)\n")
for (run, c), group in sorted(by.items()):
    loads = sorted({g["load"] for g in group.values()})
    print(f"run {run}, concurrency {c} (loadavg {loads[0]}..{loads[-1]})\n")
    print("| path | requests | errors | req/s | p50 ms | p99 ms | added p50 ms | added p99 ms | CPU/request µs |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, g in group.items():
        cpu = "" if name.startswith("direct") else g["cpu"]
        print(f"| {name} | {g['n']} | {g['errs']} | {g['n'] / secs:.0f} | {g['p50']:.2f} | "
              f"{g['p99']:.2f} | {fmt(added(group, name, 'p50'), True)} | "
              f"{fmt(added(group, name, 'p99'), True)} | {cpu} |")
    print()

runs = sorted({r for r, _ in by})
if len(runs) > 1:
    for c in sorted({c for _, c in by}):
        groups = [by[(r, c)] for r in runs if (r, c) in by]
        names = [n for n in groups[0] if not n.startswith("direct")]
        print(f"ranges over {len(groups)} runs, concurrency {c}\n")
        print("| path | added p50 ms | added p99 ms | CPU/request µs | errors |")
        print("|---|---|---|---|---|")
        for name in names:
            vals = [g for g in groups if name in g]
            a50 = [added(g, name, "p50") for g in vals]
            a99 = [added(g, name, "p99") for g in vals]
            cpu = [g[name]["cpu"] for g in vals]
            errs = sum(g[name]["errs"] for g in vals)
            print(f"| {name} | {min(a50):+.2f} .. {max(a50):+.2f} | {min(a99):+.2f} .. {max(a99):+.2f} | "
                  f"{min(cpu)} .. {max(cpu)} | {errs} |")
        print()
