"""Memo of model answers by request (lab loop only).

At temperature 0 the model's answer is a function of its request, so the
lab loop keeps every chat-completions answer it gets, keyed by the parts of
the request that reach the model (model, messages without call ids, tools,
tool_choice, sampling), and asks llama-server only for requests it has not
seen. Settings then share their common prefix of turns: a technique costs
only the turns where it changes the transcript. The recording proxy
(`record_proxy.py`) files the gateway's own exchanges under the same keys,
so the share of the lab loop's plain requests found there shows how exactly
it reproduces the gateway's requests.

Turn and token counts of the records include memoized turns, as if asked.
"""

import hashlib
import json
import sqlite3


def key(upstream, body):
    """The memo key of a chat-completions request body."""

    def message(m):
        out = {"role": m.get("role"), "content": m.get("content") or ""}
        calls = m.get("tool_calls") or []
        if calls:
            out["tool_calls"] = [{"name": (c.get("function") or {}).get("name"),
                                  "arguments": (c.get("function") or {}).get("arguments")} for c in calls]
        return out

    shape = {
        "upstream": upstream.rstrip("/"),
        "model": body.get("model"),
        "messages": [message(m) for m in body.get("messages", [])],
        "tools": body.get("tools") or [],
        "tool_choice": body.get("tool_choice") if body.get("tools") else None,
        "temperature": body.get("temperature"),
        "max_tokens": body.get("max_tokens"),
    }
    return hashlib.sha256(json.dumps(shape, sort_keys=True).encode()).hexdigest()


class Memo:
    def __init__(self, path):
        self.db = sqlite3.connect(path, timeout=30)
        self.db.execute("create table if not exists answers (key text primary key, answer text, source text)")
        self.db.commit()

    def get(self, k):
        """The memoized answer with its `source` ("gateway" or "lab"), or None."""
        row = self.db.execute("select answer, source from answers where key = ?", (k,)).fetchone()
        return {**json.loads(row[0]), "source": row[1]} if row else None

    def put(self, k, answer, source):
        self.db.execute("insert or replace into answers values (?, ?, ?)", (k, json.dumps(answer), source))
        self.db.commit()
