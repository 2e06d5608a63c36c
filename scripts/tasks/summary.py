#!/usr/bin/env python3
"""The summary tables of task-success results (JSON lines from
`scripts/task_success.py`): per model and setting, tasks passed (in all and
per kind), model turns, tokens, tokens per passed task, failure classes;
gains and losses against a reference setting; optionally a per-task matrix.

    summary.py RESULTS.jsonl [--reference lab:plain] [--per-task] [--model M]

A task run twice under one setting counts once: the last line wins.
"""

import argparse
import json
from collections import Counter, OrderedDict

KINDS = ["arith", "files", "mixed", "none"]
SHORT = {"context_overflow": "ctx", "upstream_error": "up", "turn_limit": "limit",
         "malformed_arguments": "malf", "tool_result_as_text": "text", "repeated_call": "rep",
         "needless_tool": "needless", "premature_answer": "prem", "wrong_answer": "wrong"}


def load(path):
    runs = OrderedDict()
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line.startswith("{"):
                continue
            r = json.loads(line)
            if "task" not in r:
                continue
            runs.setdefault((r["model"], r["setting"]), OrderedDict())[r["task"]] = r
    return runs


def row(setting, recs, ref):
    n = len(recs)
    passed = [r for r in recs.values() if r["ok"]]
    turns = sum(r.get("turns") or 0 for r in recs.values())
    tokens = sum(r.get("tokens") or 0 for r in recs.values())
    calls = sum(r.get("calls") or 0 for r in recs.values())
    kinds = " / ".join(f"{sum(1 for r in recs.values() if r['kind'] == k and r['ok'])}"
                       f"/{sum(1 for r in recs.values() if r['kind'] == k)}" for k in KINDS)
    fails = Counter(r["failure"] for r in recs.values() if not r["ok"])
    fail_text = ", ".join(f"{SHORT.get(k, k)} {v}" for k, v in fails.most_common())
    delta = ""
    if ref is not None and ref is not recs:
        won = sorted(t for t, r in recs.items() if r["ok"] and t in ref and not ref[t]["ok"])
        lost = sorted(t for t, r in recs.items() if not r["ok"] and t in ref and ref[t]["ok"])
        delta = f"+{len(won)} / -{len(lost)}"
    per_pass = f"{tokens // len(passed):,}" if passed else "-"
    return (f"| {setting} | **{len(passed)}/{n}** | {kinds} | {delta} | {turns} | {calls} | {tokens:,} | "
            f"{per_pass} | {fail_text} |")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("results")
    p.add_argument("--reference", help="setting to count gains and losses against")
    p.add_argument("--per-task", action="store_true")
    p.add_argument("--model")
    a = p.parse_args()
    runs = load(a.results)
    models = OrderedDict((m, None) for m, _ in runs)
    for model in models:
        if a.model and model != a.model:
            continue
        settings = [(s, recs) for (m, s), recs in runs.items() if m == model]
        ref = next((recs for s, recs in settings if s == a.reference), None)
        print(f"\n### {model}\n")
        print("| setting | passed | arith / files / mixed / none | vs " + (a.reference or "-") +
              " | turns | tool calls | tokens | tokens per pass | failures |")
        print("|---|---|---|---|---|---|---|---|---|")
        for s, recs in settings:
            print(row(s, recs, ref))
        if a.per_task:
            names = list(OrderedDict((t, None) for _, recs in settings for t in recs))
            print("\n| task | " + " | ".join(s for s, _ in settings) + " |")
            print("|---|" + "---|" * len(settings))
            for t in names:
                cells = []
                for _, recs in settings:
                    r = recs.get(t)
                    if r is None:
                        cells.append("")
                    elif r["ok"]:
                        cells.append(f"pass {r.get('turns')}t")
                    else:
                        cells.append(f"{SHORT.get(r['failure'], r['failure'])} {r.get('turns')}t")
                print(f"| {t} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
