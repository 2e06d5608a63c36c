#!/usr/bin/env python3
"""Task success against a real model: a fixed set of multi-step tasks run
through a Windlass gateway, each answer checked by a rule of its own.

Not part of CI: it needs a real LLM behind the gateway (the rig's
llama-server) and the rig's MCP `add` server. `scripts/task-success.sh`
starts two gateways (completion check off and on) and runs this against
each; run by hand it is:

    task_success.py --base-url http://127.0.0.1:8080/v1 --workdir DIR \
        --mcp-url http://127.0.0.1:8091/mcp --label off

DIR must be the gateway's built-in tools work directory: the file tasks
are set up there before each task and checked there after it.

Prints one JSON line per task and a summary line: tasks passed, model
turns (from the response's execution trace) and tokens.
"""

import argparse
import json
import os
import re
import sys
import time
import urllib.request

from openai import OpenAI

# (name, kind, prompt, check). `check` gets (answer text, workdir) -> bool.
ARITH = [
    ("add-then-add", "Add 10 and 20, then add 5 to the result.", 35),
    ("three-adds", "Add 7 and 8, then add 100, then add 1000. What is the final number?", 1115),
    ("sum-four", "What is 13 + 29 + 41 + 7? Use the add tool for every addition.", 90),
    ("double-then-add", "Add 21 to itself, then add 8 to that.", 50),
    ("chain-big", "Compute 1234 + 4321, then add 1111 to the result.", 6666),
    ("add-pairs", "Add 3 and 4. Add 5 and 6. Then add the two results together.", 18),
    ("running-total", "Start at 50. Add 25, then add 25 again, then add 100.", 200),
    ("negative", "Add -15 and 40, then add 10.", 35),
    ("five-terms", "Add 1, 2, 3, 4 and 5 using the add tool, one addition at a time.", 15),
    ("word-problem", "I have 12 apples, buy 30 more, then get 8 more. Use the add tool. How many?", 50),
]

FILES = {
    "notes.txt": "alpha\nbeta\ngamma\ndelta\nepsilon\nzeta\neta\n",
    "data.txt": "red green blue yellow\n",
    "README.md": "# Demo\n\nline three\nline four\nline five\nline six\n",
    "numbers.txt": "4\n8\n15\n16\n23\n42\n",
}


def number_in(text, n):
    return re.search(rf"(?<![\d.]){re.escape(str(n))}(?![\d])", text.replace(",", "")) is not None


def file_has(name, needle):
    def check(_answer, workdir):
        path = os.path.join(workdir, name)
        return os.path.isfile(path) and needle in open(path, encoding="utf-8").read()

    return check


def answer_has(n):
    return lambda answer, _workdir: number_in(answer, n)


def answer_word(word):
    return lambda answer, _workdir: word.lower() in answer.lower()


BUILTIN = [
    ("count-lines-readme", "Count the lines of README.md in the work directory.", answer_has(6)),
    ("count-lines-notes", "How many lines does notes.txt have?", answer_has(7)),
    ("third-word", "What is the third word in data.txt?", answer_word("blue")),
    ("write-hello", "Create a file named out.txt containing exactly the word hello.", file_has("out.txt", "hello")),
    ("list-txt", "How many .txt files are in the work directory? List it to find out.", answer_has(3)),
    ("sum-numbers", "Read numbers.txt and tell me the sum of the numbers in it.", answer_has(108)),
    ("shell-wc", "Use the shell to run `wc -w data.txt` and tell me the word count.", answer_has(4)),
    ("edit-notes", "In notes.txt replace the word gamma with GAMMA.", file_has("notes.txt", "GAMMA")),
    ("last-line", "What is the last line of notes.txt?", answer_word("eta")),
    ("copy-first", "Write the first line of notes.txt into a new file first.txt.", file_has("first.txt", "alpha")),
]


def reset_workdir(workdir):
    os.makedirs(workdir, exist_ok=True)
    for name in os.listdir(workdir):
        path = os.path.join(workdir, name)
        if os.path.isfile(path):
            os.remove(path)
    for name, text in FILES.items():
        with open(os.path.join(workdir, name), "w", encoding="utf-8") as f:
            f.write(text)


def trace_turns(base_url, api_key, response_id):
    req = urllib.request.Request(
        f"{base_url}/responses/{response_id}/trace",
        headers={"authorization": f"Bearer {api_key}"},
    )
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            trace = json.load(r)
    except Exception:  # noqa: BLE001 - a missing trace is reported as None
        return None
    return len(trace.get("steps", []))


def run_task(client, args, name, prompt, tools, check):
    reset_workdir(args.workdir)
    started = time.monotonic()
    try:
        resp = client.responses.create(model=args.model, input=prompt, tools=tools)
    except Exception as e:  # noqa: BLE001 - one failed task must not stop the set
        return {"task": name, "ok": False, "error": str(e)[:200]}
    answer = resp.output_text or ""
    return {
        "task": name,
        "ok": bool(check(answer, args.workdir)),
        "status": resp.status,
        "turns": trace_turns(args.base_url, args.api_key, resp.id),
        "tokens": resp.usage.total_tokens if resp.usage else None,
        "seconds": round(time.monotonic() - started, 1),
        "answer": answer[:160],
    }


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--base-url", required=True)
    p.add_argument("--api-key", default="unused")
    p.add_argument("--model", default="qwen2.5-1.5b")
    p.add_argument("--workdir", required=True)
    p.add_argument("--mcp-url", default="http://127.0.0.1:8091/mcp")
    p.add_argument("--label", default="run")
    args = p.parse_args()
    client = OpenAI(base_url=args.base_url, api_key=args.api_key, timeout=600, max_retries=0)
    calc = [{"type": "mcp", "server_label": "calc", "server_url": args.mcp_url,
             "require_approval": "never", "allowed_tools": ["add"]}]
    builtins = [{"type": "mcp", "server_label": "windlass", "require_approval": "never"}]
    results = []
    for name, prompt, expected in ARITH:
        results.append(run_task(client, args, name, prompt, calc, answer_has(expected)))
        print(json.dumps({"label": args.label, **results[-1]}), flush=True)
    for name, prompt, check in BUILTIN:
        results.append(run_task(client, args, name, prompt, builtins, check))
        print(json.dumps({"label": args.label, **results[-1]}), flush=True)
    passed = sum(r["ok"] for r in results)
    turns = [r["turns"] for r in results if r.get("turns") is not None]
    tokens = [r["tokens"] for r in results if r.get("tokens") is not None]
    print(json.dumps({
        "label": args.label, "summary": True, "tasks": len(results), "passed": passed,
        "turns_total": sum(turns), "tokens_total": sum(tokens),
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
