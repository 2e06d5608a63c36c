"""Runs a task through a Windlass gateway's Responses API (the product's loop).

Tools: the rig's MCP `add` server as `{"type": "mcp", "server_label": "calc"}`
and the gateway's built-ins as the `windlass` MCP label. Turns and per-turn
tokens come from `GET /v1/responses/{id}/trace`, the calls from the
response's `mcp_call` items.
"""

import json
import urllib.request

from openai import OpenAI

from .record import make_record


class WindlassRunner:
    def __init__(self, base_url, model, mcp_url, api_key="unused", extra_body=None):
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key = api_key
        self.extra_body = extra_body or {}
        self.client = OpenAI(base_url=self.base_url, api_key=api_key, timeout=7200, max_retries=0)
        self.tools = {
            "calc": {"type": "mcp", "server_label": "calc", "server_url": mcp_url,
                     "require_approval": "never", "allowed_tools": ["add"]},
            "builtins": {"type": "mcp", "server_label": "windlass", "require_approval": "never"},
        }

    def trace(self, response_id):
        req = urllib.request.Request(f"{self.base_url}/responses/{response_id}/trace",
                                     headers={"authorization": f"Bearer {self.api_key}"})
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return json.load(r)
        except Exception:  # noqa: BLE001 - a missing trace leaves turns unknown
            return None

    def run(self, task, workdir):
        tools = [self.tools[k] for k in task.offered]
        try:
            resp = self.client.responses.create(model=self.model, input=task.prompt, tools=tools,
                                                temperature=0, extra_body=self.extra_body or None)
        except Exception as e:  # noqa: BLE001 - one failed task must not stop the set
            return make_record(task, workdir, answer="", status="error", turns=None, input_tokens=None,
                               output_tokens=None, calls=[], error=str(e))
        calls, messages = [], []
        for item in resp.output:
            if item.type == "mcp_call":
                calls.append({"name": item.name, "arguments": item.arguments,
                              "output": item.output, "error": error_text(item.error)})
            elif item.type == "message":
                messages.append("".join(getattr(c, "text", "") or "" for c in item.content))
        trace = self.trace(resp.id) or {}
        steps = trace.get("steps") or []
        error = resp.error.message if resp.status == "failed" and resp.error else None
        last = messages[-1] if messages else ""
        rec = make_record(
            task, workdir, answer=resp.output_text or "", status=resp.status,
            turns=len(steps) if trace else None,
            input_tokens=resp.usage.input_tokens if resp.usage else None,
            output_tokens=resp.usage.output_tokens if resp.usage else None,
            calls=calls, error=error,
            extra={"messages": len(messages), "response_id": resp.id,
                   "incomplete": getattr(resp.incomplete_details, "reason", None)},
        )
        if len(messages) > 1:
            # What the task's rule says about the last message alone (the
            # completion check leaves the draft answer in `output` as well).
            alone = make_record(task, workdir, answer=last, status=resp.status, turns=None,
                                input_tokens=None, output_tokens=None, calls=calls, error=error)
            rec["ok_last_message"] = alone["ok"]
        return rec


def error_text(error):
    """An mcp_call's error as text (the SDK gives a string or an object with content)."""
    if error is None or isinstance(error, str):
        return error
    content = getattr(error, "content", None)
    if isinstance(content, list):
        return " ".join(c.get("text", "") if isinstance(c, dict) else getattr(c, "text", "") for c in content)
    return str(error)
