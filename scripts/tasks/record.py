"""One task's record and the failure class that says why it failed.

A record is one JSON line: the setting, the model, the task, `ok`, the
response status, model turns, tokens, the tool calls made, every failure
sign seen (`flags`) and the one that explains the failure (`failure`).
"""

import json
import re

from .taskset import Outcome

# Most telling first: a failure is classed by the first sign that applies.
FAILURE_ORDER = [
    "context_overflow",
    "upstream_error",
    "turn_limit",
    "malformed_arguments",
    "tool_result_as_text",
    "repeated_call",
    "needless_tool",
    "premature_answer",
    "wrong_answer",
]

CONTEXT = re.compile(r"context (size|length|window)|exceed_context|exceeds the available context", re.I)
AS_TEXT = re.compile(
    r'"name"\s*:\s*"[\w.-]+"\s*,\s*"arguments"|<tool_call>|</?tool_response>|tool result\s*:|'
    r"```json\s*\{\s*\"name\"",
    re.I,
)


def arguments_ok(arguments):
    if isinstance(arguments, dict):
        return True
    try:
        return isinstance(json.loads(arguments or ""), dict)
    except (TypeError, ValueError):
        return False


def signs(task, answer, status, calls, error):
    """Every failure sign in a run, whether or not the task passed."""
    found = set()
    if error:
        found.add("context_overflow" if CONTEXT.search(error) else "upstream_error")
    if status == "incomplete":
        found.add("turn_limit")
    if any(not arguments_ok(c.get("arguments")) for c in calls):
        found.add("malformed_arguments")
    if AS_TEXT.search(answer or ""):
        found.add("tool_result_as_text")
    seen = set()
    for c in calls:
        key = (c.get("name"), canonical(c.get("arguments")))
        if key in seen:
            found.add("repeated_call")
        seen.add(key)
    if task.kind == "none" and calls:
        found.add("needless_tool")
    if len(calls) < task.min_calls:
        found.add("premature_answer")
    return found


def canonical(arguments):
    try:
        value = json.loads(arguments) if isinstance(arguments, str) else arguments
        return json.dumps(value, sort_keys=True)
    except (TypeError, ValueError):
        return str(arguments)


def make_record(task, workdir, *, answer, status, turns, input_tokens, output_tokens, calls,
                error=None, extra=None):
    """Checks the outcome with the task's rule and classes a failure."""
    answer = answer or ""
    ok = False
    if not error and status == "completed":
        ok = bool(task.check(Outcome(answer, workdir, calls)))
    flags = signs(task, answer, status, calls, error)
    failure = None
    if not ok:
        failure = next((f for f in FAILURE_ORDER if f in flags), "wrong_answer")
    rec = {
        "task": task.name,
        "kind": task.kind,
        "ok": ok,
        "status": status,
        "failure": failure,
        "flags": sorted(flags),
        "turns": turns,
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "tokens": (input_tokens or 0) + (output_tokens or 0),
        "calls": len(calls),
        "call_list": [short_call(c) for c in calls],
        "answer": answer[:300],
    }
    if error:
        rec["error"] = error[:300]
    if extra:
        rec.update(extra)
    return rec


def short_call(c):
    args = c.get("arguments")
    if not isinstance(args, str):
        args = json.dumps(args)
    out = c.get("error") or c.get("output") or ""
    return {"name": c.get("name"), "arguments": args[:200], "result": str(out)[:120],
            "error": bool(c.get("error"))}
