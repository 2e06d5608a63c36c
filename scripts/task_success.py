#!/usr/bin/env python3
"""Task success against a real model: the task set of `scripts/tasks/`
(47 tasks, each checked by a rule) run one way per call, one JSON line per
task appended to --out.

Not part of CI: it needs the rig (a llama-server, the MCP `add` server) and,
for the gateway runner, a running `windlass serve` whose built-in tools work
directory is --workdir. `scripts/task-success.sh` starts what is needed and
runs the settings one after another.

Runners:
  windlass  Windlass's loop: POST /v1/responses on --base-url (a gateway).
  agents    the OpenAI Agents SDK's loop: a chat-completions model on
            --upstream, the same MCP server and the built-ins served by
            `windlass mcp --config CFG` over stdio.
  lab       the lab loop (an experiment harness, not the product): the
            gateway's loop shape in Python with --techniques switched on.

    task_success.py --runner lab --upstream http://127.0.0.1:8081/v1 \
        --model qwen2.5-1.5b --workdir DIR --config CFG --windlass-bin BIN \
        --setting verify+guard --techniques verify,guard --out results.jsonl
"""

import argparse
import asyncio
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from tasks.taskset import reset_workdir, select  # noqa: E402


def parse():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runner", choices=["windlass", "agents", "lab"], default="windlass")
    p.add_argument("--setting", required=True, help="the label of this setting in the results")
    p.add_argument("--model", default="qwen2.5-1.5b")
    p.add_argument("--base-url", help="windlass: the gateway's /v1 URL")
    p.add_argument("--upstream", default="http://127.0.0.1:8081/v1", help="agents, lab: llama-server /v1")
    p.add_argument("--mcp-url", default="http://127.0.0.1:8091/mcp")
    p.add_argument("--workdir", required=True, help="the built-in tools' work directory")
    p.add_argument("--config", help="agents, lab: a windlass.toml with [builtins] for `windlass mcp`")
    p.add_argument("--windlass-bin", default="target/debug/windlass")
    p.add_argument("--techniques", default="", help="lab: comma list (see tasks/lab/techniques.py)")
    p.add_argument("--verify-max", type=int, default=2, help="lab: verification turns per response")
    p.add_argument("--max-turns", type=int, default=10)
    p.add_argument("--memo", help="lab: memo of model answers by request (tasks/memo.py)")
    p.add_argument("--extra-body", default="", help="windlass: JSON merged into each request")
    p.add_argument("--tasks", default="", help="task names or kinds, comma list (default: all)")
    p.add_argument("--out", help="append the JSON lines here too")
    return p.parse_args()


async def run_all(args, tasks, emit):
    if args.runner == "windlass":
        from tasks.windlass_runner import WindlassRunner

        runner = WindlassRunner(args.base_url, args.model, args.mcp_url,
                                extra_body=json.loads(args.extra_body) if args.extra_body else None)
        for task in tasks:
            reset_workdir(args.workdir, task)
            emit(task, await asyncio.to_thread(runner.run, task, args.workdir))
        return
    if args.runner == "agents":
        from tasks.agents_runner import AgentsRunner

        runner = AgentsRunner(args.upstream, args.model, args.mcp_url, args.windlass_bin, args.config,
                              max_turns=args.max_turns)
        for task in tasks:
            reset_workdir(args.workdir, task)
            emit(task, await runner.run_async(task, args.workdir))
        return
    from tasks.lab.loop import LabLoop
    from tasks.lab.tools import LabTools

    tools = LabTools(args.mcp_url, args.windlass_bin, args.config)
    await tools.open()
    try:
        techniques = [t for t in args.techniques.split(",") if t]
        from tasks.memo import Memo

        loop = LabLoop(args.upstream, args.model, tools, techniques, max_turns=args.max_turns,
                       verify_max=args.verify_max, memo=Memo(args.memo) if args.memo else None)
        for task in tasks:
            reset_workdir(args.workdir, task)
            emit(task, await loop.run_async(task, args.workdir))
    finally:
        await tools.close()


def main():
    args = parse()
    tasks = select(args.tasks)
    out = open(args.out, "a", encoding="utf-8") if args.out else None
    head = {"runner": args.runner, "setting": args.setting, "model": args.model}

    def emit(task, rec, started=[time.monotonic()]):  # noqa: B006 - a per-run clock
        now = time.monotonic()
        line = json.dumps({**head, **rec, "seconds": round(now - started[0], 1)})
        started[0] = now
        print(line, flush=True)
        if out:
            out.write(line + "\n")
            out.flush()

    asyncio.run(run_all(args, tasks, emit))
    return 0


if __name__ == "__main__":
    sys.exit(main())
