"""Markdown tables of the cost curve from windlass-bench JSON files (one per
point, written by scripts/cost-curve.sh): python3 curve_table.py DIR."""
import json
import os
import sys

D = sys.argv[1]


def load(name):
    path = os.path.join(D, name + ".json")
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError):
        return None
    return doc


def row(doc, prefix):
    for r in doc["rows"]:
        if r["metric"].startswith(prefix):
            return r
    return {}


def f(v, digits=2):
    return "-" if v is None else f"{v:.{digits}f}"


def cmd(name):
    try:
        with open(os.path.join(D, name + ".cmd")) as fh:
            return fh.read().strip()
    except OSError:
        return "(not run)"


def table(title, key, names, cols):
    """cols: (header, row prefix, field, digits)."""
    present = [(p, n) for p, n in names if load(n)]
    if not present:
        return
    print(f"\n#### {title}\n")
    for _, n in present:
        print(f"    {cmd(n)}")
    print()
    print("| " + key + " | " + " | ".join(c[0] for c in cols) + " |")
    print("|---" * (len(cols) + 1) + "|")
    for point, n in present:
        doc = load(n)
        cells = [f(row(doc, p).get(field), dg) for _, p, field, dg in cols]
        load_avg = doc["meta"].get("loadavg", "").split(" ")[0]
        print(f"| {point} | " + " | ".join(cells) + f" |  <!-- loadavg {load_avg} -->")


JSON_COLS = [
    ("direct req/s", "throughput", "direct", 0),
    ("Windlass req/s", "throughput", "windlass", 0),
    ("added p50 ms", "latency p50", "added", 3),
    ("added p99 ms", "latency p99", "added", 2),
    ("CPU/req µs (threads)", "Windlass CPU/request (its threads)", "added", 0),
    ("CPU/req µs (subtraction)", "Windlass CPU/request (subtraction)", "added", 0),
    ("RSS peak MiB direct", "process RSS peak", "direct", 0),
    ("RSS peak MiB Windlass", "process RSS peak", "windlass", 0),
]

table("The ceiling: zero-latency upstream, concurrency 64", "run",
      [("c=64 stored", "ceiling-c64"), ("c=64 store:false", "ceiling-c64-unstored")],
      JSON_COLS[:5] + [
          ("relay req/s", "bare TCP relay: throughput", "windlass", 0),
          ("relay CPU/req µs", "bare TCP relay CPU/request", "added", 0),
          ("Windlass / relay", "Windlass throughput / relay", "windlass", 3),
      ])
table("Concurrency (stored JSON, upstream 20 ms)", "concurrency",
      [(c, f"conc-{c}") for c in (1, 16, 64, 256, 1024)], JSON_COLS)
table("Input size (stored JSON, c=16)", "prompt bytes",
      [(b, f"input-{b}") for b in (1024, 16384, 131072, 1048576)], JSON_COLS)
table("History length (stored JSON continuing a stored history, c=4)", "history items",
      [(n, f"history-{n}") for n in (10, 100, 1000, 10000)], JSON_COLS)
present = [(d, f"chain-{d}") for d in (1, 10, 100, 1000) if load(f"chain-{d}")]
if present:
    print("\n#### Chain depth (previous_response_id chain, one request at a time)\n")
    for _, n in present:
        print(f"    {cmd(n)}")
    print("\n| depth | load_context p50 ms | load_context p99 ms | store.save p50 ms | request added p50 ms | history cost p50 ms |")
    print("|---|---|---|---|---|---|")
    for d, n in present:
        doc = load(n)
        print(f"| {d} | {f(row(doc, f'load_context depth {d} (').get('windlass'), 3)} | "
              f"{f(row(doc, f'load_context depth {d} p99').get('windlass'), 3)} | "
              f"{f(row(doc, f'store.save at depth {d}').get('windlass'), 3)} | "
              f"{f(row(doc, f'request latency depth {d} p50').get('added'), 3)} | "
              f"{f(row(doc, f'history cost at depth {d}').get('added'), 3)} |")
LOOP_COLS = [
    ("loop p50 ms direct", "loop latency p50", "direct", 1),
    ("loop p50 ms Windlass", "loop latency p50", "windlass", 1),
    ("overhead/turn p50 ms", "overhead per turn p50", "added", 3),
    ("overhead/turn p99 ms", "overhead per turn p99", "added", 2),
    ("CPU/turn µs (threads)", "Windlass CPU/turn", "added", 0),
    ("CPU/loop µs (threads)", "Windlass CPU/loop", "added", 0),
]
table("Tool calls per turn (2 turns, tools of 10 ms, c=16)", "calls/turn",
      [(t, f"tools-{t}") for t in (1, 8, 64)], LOOP_COLS)
table("Turns per response (1 tool call of 1 ms per turn, c=4)", "turns",
      [(t, f"turns-{t}") for t in (1, 10, 50)], LOOP_COLS)
IDLE_COLS = [
    ("RSS/stream KiB direct", "RSS per open stream", "direct", 1),
    ("RSS/stream KiB Windlass", "RSS per open stream", "windlass", 1),
    ("Windlass RSS/stream KiB", "RSS per open stream", "added", 1),
    ("Windlass heap/stream KiB", "live heap per open stream", "added", 1),
    ("released", "upstream streams released", "windlass", 0),
]
table("Idle streams (memory)", "streams",
      [(n, f"idle-{n}") for n in (1000, 4000, 10000)], IDLE_COLS)
