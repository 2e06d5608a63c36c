"""The techniques the lab loop can switch on, each a small pure function or
text, so the loop in `loop.py` stays one readable piece.

Names (the `--techniques` list):
- `seed-check`: today's completion check: after the first text answer of a
  response that used tools, the seed's verification prompt as a system
  message after the answer; the next answer is final. The client sees both
  answers (`ok_concat`), as Windlass's output does today.
- `verify`: after a text answer of a response that used tools, a USER
  message that restates the request and the tool results so far and asks
  for the missing steps (no yes/no question). Only the final answer counts.
- `guard`: a call identical to an earlier one (same tool, same arguments)
  is not run again; its output is the result the model already has plus a
  nudge to go on.
- `schema`: arguments checked against the tool's JSON schema before the
  call; the error output names the field.
- `replay`: malformed arguments go back upstream as `{}` (every server
  parses that) while the error output quotes what was sent; without it they
  go back as sent, as Windlass does today.
- `required`: one more turn with `tool_choice: "required"` when an answer
  is a tool call or result written as text, or when the answer to a
  verification turn says a step remains (at most two per response).
- `plan`: one tool-free turn first that lists the steps; the plan goes to
  the model as a system message.
- `last-turn`: the last model turn the limit allows is sent with
  `tool_choice: "none"` and a user message asking for the final answer from
  the results so far, so a run that would end `incomplete` with no answer
  answers instead.
- `tally`: one tool-free turn first asks which tool calls the request needs
  (one line each, or `none`); the list is not shown to the model again. When
  the model answers with fewer successful calls than listed, the next turn
  is sent with `tool_choice: "required"` and a user message naming the first
  step not done (at most two per response). A judgment the loop makes by
  counting, not by asking the model whether it is done.
- `answer-tool`: every turn is sent with `tool_choice: "required"` and one
  more function, `final_answer(answer)`; the run ends when the model calls
  it (its `answer` is the final text). Finishing becomes a decision the model
  makes by a call, as every other step.
- `progress`: each tool result carries the request and every call made so
  far with its result, and asks for the next step's call or, when every step
  is done, the answer (no extra turn).
- `annotate`: each tool result carries a one-line reminder of the request
  and to call the next tool if a step remains (no extra turn).
"""

import json
import re

import jsonschema

ALL = ["seed-check", "verify", "guard", "schema", "replay", "required", "plan", "annotate", "last-turn", "tally", "answer-tool", "progress"]

SEED_PROMPT = (
    "Before I accept your answer, please verify:\n"
    "1. Have you completed all parts of the task?\n"
    "2. Have you verified your results (e.g., by reading output files)?\n"
    "If the task is not fully complete, continue working. If it is complete, restate your final answer."
)


def verify_prompt(request, calls):
    lines = [f"- {c['name']}({c['arguments']}) returned: {one_line(c['output'])}" for c in calls]
    return (
        "Check your work against the request before you give the final answer.\n"
        f"The request: {request}\n"
        "The tool calls made so far and their results:\n" + "\n".join(lines) + "\n"
        "If a step of the request has not been done yet, call the tool for that step now "
        "(a real tool call, not text). If every step is done, reply with the final answer only."
    )


LAST_TURN_PROMPT = ("This is your last turn: no more tool calls. Give the final answer to the request "
                    "now, from the tool results above.")

REQUIRED_PROMPT = ("Do not write tool calls or their results as text. Call the tool for the next missing "
                   "step of the request now.")

PLAN_PROMPT = (
    "List, as short numbered steps, what has to be done to complete the request below. "
    "Do not do the steps and do not answer it yet.\nRequest: {request}"
)

PLAN_SYSTEM = "A plan for the user's request:\n{plan}\nFollow it step by step, one tool call per step where a tool is needed."


def annotate(output, request):
    return (f"{output}\n(The request was: {request} If a step of it is still to do, call the tool "
            "for that step; otherwise answer.)")


def one_line(text, limit=200):
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit] + "..."


def canonical(arguments):
    try:
        return json.dumps(json.loads(arguments), sort_keys=True)
    except (TypeError, ValueError):
        return arguments


def repeated(name, arguments, done):
    """The earlier identical call of this response, if any."""
    key = (name, canonical(arguments))
    return next((c for c in done if (c["name"], canonical(c["arguments"])) == key), None)


def repeat_output(call):
    return (f"You already called {call['name']} with these arguments; the result was: "
            f"{one_line(call['output'])}. Do not repeat the call: use that result for the next step, "
            "or give the final answer if every step is done.")


def schema_error(schema, arguments):
    """An error output naming the field, or None when the arguments fit."""
    try:
        args = json.loads(arguments) if arguments else {}
    except ValueError:
        return None  # malformed JSON is the parser's error, not the schema's
    if not schema:
        return None
    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(args), key=lambda e: list(e.path))
    if not errors:
        return None
    e = errors[0]
    field = ".".join(str(p) for p in e.path)
    if e.validator == "required":
        missing = [r for r in schema.get("required", []) if r not in args]
        return f"Error: the argument `{missing[0] if missing else '?'}` is required. " + fields_hint(schema)
    if e.validator == "additionalProperties":
        return f"Error: {e.message}. " + fields_hint(schema)
    return f"Error: the argument `{field}` is invalid: {e.message}. " + fields_hint(schema)


def fields_hint(schema):
    props = schema.get("properties", {})
    parts = [f"{k} ({v.get('type', 'any')})" for k, v in props.items()]
    return "The arguments are a JSON object with: " + ", ".join(parts) + "." if parts else ""


def malformed_output(arguments, schema):
    return (f"Error: your arguments were not valid JSON: {arguments!s}. Call the tool again with a "
            "complete JSON object. " + fields_hint(schema or {}))


MISSING = re.compile(
    r"\b(not (yet )?(been )?(done|complete|completed|finished)|missing|next step|still need|remaining|"
    r"need to (add|call|compute|write|read)|let'?s (add|call|now)|i will (now )?(add|call))\b", re.I)
AS_TEXT = re.compile(r'"name"\s*:\s*"[\w.-]+"|<tool_call>|tool result|```json', re.I)


def shows_missing_step(text):
    return bool(MISSING.search(text or "") or AS_TEXT.search(text or ""))


def call_as_text(text):
    return bool(AS_TEXT.search(text or ""))


TALLY_PROMPT = (
    "Which tool calls does the request below need, in order? Tools: {tools}.\n"
    "Write one line per call, like `add(10, 20)`; where a value comes from an earlier call, write "
    "`result` for it. Write only `none` if the request needs no tool. Do not do the calls and do not "
    "answer the request.\nRequest: {request}"
)

STEP_LINE = re.compile(r"^\s*(?:\d+[.)]\s*|[-*]\s*)?`?([A-Za-z_][\w.]*)\s*\(")


def planned_calls(text):
    """The call lines of a tally answer (`none`, prose or an empty list: [])."""
    lines = []
    for line in (text or "").splitlines():
        m = STEP_LINE.match(line)
        if m and m.group(1).lower() not in ("none",):
            lines.append(line.strip().strip("`"))
    return lines


def tally_prompt(step):
    return (f"The request is not finished: this step has not been done yet: {step}. "
            "Call the tool for it now, with the values from the results so far.")


ANSWER_TOOL = {"type": "function", "function": {
    "name": "final_answer",
    "description": "Give the final answer to the user's request. Call it only when every step of the "
                   "request is done.",
    "parameters": {"type": "object", "properties": {"answer": {"type": "string"}},
                   "required": ["answer"]}}}


def progress(output, request, done):
    """A tool result with the request and the calls so far (this one last)."""
    lines = [f"{i}. {c['name'].split('__')[-1]}({c['arguments']}) = {one_line(c['shown'], 80)}"
             for i, c in enumerate(done, 1)]
    return (f"{output}\n\n[The request: {request}\nCalls made so far:\n" + "\n".join(lines) +
            "\nIf the request needs another step, call the tool for it. If every step is done, "
            "stop calling tools and give the final answer.]")
