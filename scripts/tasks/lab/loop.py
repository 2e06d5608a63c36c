"""The lab loop (experiment harness, not the product): Windlass's loop shape
against the real model, with the techniques of `techniques.py` switchable.

With no technique it sends what the gateway sends with `[loop]
completion_check = false`: the user's input, the tools as `<label>__<tool>`
functions, `tool_choice: "auto"`, temperature 0, no stream; tool calls are
replayed as the model made them (malformed arguments included) with their
outputs; the first text answer is final; 10 model turns at most (the
gateway's default).
"""

import json
import os
from collections import Counter

import httpx

from ..memo import key
from ..record import make_record
from . import techniques as T


class LabLoop:
    def __init__(self, upstream, model, tools, techniques, max_turns=10, verify_max=2, memo=None):
        unknown = set(techniques) - set(T.ALL)
        if unknown:
            raise ValueError(f"unknown techniques: {sorted(unknown)}")
        self.upstream = upstream.rstrip("/")
        self.model = model
        self.tools = tools
        self.on = set(techniques)
        self.max_turns = max_turns
        self.verify_max = verify_max
        self.http = httpx.AsyncClient(timeout=900)
        self.memo = memo

    async def ask(self, body):
        """The model's answer to a request: from the memo, else from upstream
        (then memoized). {"message", "usage", "source"} or {"error"}."""
        k = key(self.upstream, body) if self.memo else None
        if k:
            hit = self.memo.get(k)
            if hit is not None:
                return hit
        r = await self.http.post(f"{self.upstream}/chat/completions", json=body)
        if r.status_code != 200:
            return {"error": f"upstream {r.status_code}: {r.text[:300]}"}
        data = r.json()
        answer = {"message": data["choices"][0]["message"], "usage": data.get("usage") or {}}
        if k:
            self.memo.put(k, answer, "lab")
        return {**answer, "source": "asked"}

    async def run_async(self, task, workdir):
        run = Run(self, task)
        await run.go()
        extra = {"texts": len(run.texts), "ok_concat": None, "ok_keep_draft": None}
        rec = make_record(task, workdir, answer=run.answer(), status=run.status, turns=run.turns,
                          input_tokens=run.input_tokens, output_tokens=run.output_tokens,
                          calls=run.done, error=run.error, extra=extra)
        for field, answer in (("ok_concat", "".join(run.texts)), ("ok_keep_draft", run.keep_draft_answer())):
            alt = make_record(task, workdir, answer=answer, status=run.status, turns=None,
                              input_tokens=None, output_tokens=None, calls=run.done, error=run.error)
            rec[field] = alt["ok"]
        rec["verifications"] = run.verifications
        rec["required_turns"] = run.required_turns
        rec["answers_from"] = dict(run.memo_hits)
        if os.environ.get("LAB_TRACE"):
            with open(os.environ["LAB_TRACE"], "a", encoding="utf-8") as f:
                f.write(json.dumps({"task": task.name, "messages": run.messages}) + "\n")
        return rec


class Run:
    """One task through the lab loop."""

    def __init__(self, loop, task):
        self.loop = loop
        self.on = loop.on
        self.task = task
        self.declared = loop.tools.declared(task.offered)
        self.messages = [{"role": "user", "content": task.prompt}]
        self.done = []  # calls the model made: name, arguments, output, error
        self.texts = []  # every text answer, in order
        self.turns = self.input_tokens = self.output_tokens = 0
        self.status, self.error = "completed", None
        self.verifications = self.required_turns = 0
        self.calls_at_verify = None  # len(done) when the last verification was sent
        self.draft = None  # the answer the last verification was about
        self.seed_sent = False
        self.force = False
        self.tool_choice = "auto"
        self.memo_hits = Counter()  # where each turn's answer came from
        self.planned = []  # `tally`: the call lines the request needs

    async def upstream(self, messages, tools=True):
        body = {"model": self.loop.model, "messages": messages, "temperature": 0.0, "stream": False}
        if tools:
            body["tools"] = self.declared
            body["tool_choice"] = "required" if self.force else self.tool_choice
            if "answer-tool" in self.on:
                body["tools"] = self.declared + [T.ANSWER_TOOL]
                body["tool_choice"] = "required"
        answer = await self.loop.ask(body)
        if "error" in answer:
            self.status, self.error = "failed", answer["error"]
            return None
        self.turns += 1
        self.memo_hits[answer.get("source") or "asked"] += 1
        usage = answer.get("usage") or {}
        self.input_tokens += usage.get("prompt_tokens", 0)
        self.output_tokens += usage.get("completion_tokens", 0)
        return answer["message"]

    async def go(self):
        if "plan" in self.on:
            plan = await self.upstream([{"role": "user", "content": T.PLAN_PROMPT.format(
                request=self.task.prompt)}], tools=False)
            if plan is None:
                return
            self.messages.insert(0, {"role": "system", "content": T.PLAN_SYSTEM.format(
                plan=(plan.get("content") or "").strip())})
        if "tally" in self.on:
            names = ", ".join(t["function"]["name"].split("__")[-1] for t in self.declared)
            plan = await self.upstream([{"role": "user", "content": T.TALLY_PROMPT.format(
                tools=names, request=self.task.prompt)}], tools=False)
            if plan is None:
                return
            self.planned = T.planned_calls(plan.get("content"))
        while True:
            if self.turns >= self.loop.max_turns:
                self.status = "incomplete"
                return
            if "last-turn" in self.on and self.turns == self.loop.max_turns - 1 and self.done:
                # The last turn allowed: no more calls, an answer from what is known.
                self.messages.append({"role": "user", "content": T.LAST_TURN_PROMPT})
                self.tool_choice = "none"
            msg = await self.upstream(self.messages)
            if msg is None:
                return
            calls = msg.get("tool_calls") or []
            self.force = False
            final = next((c for c in calls if (c.get("function") or {}).get("name") == "final_answer"), None)
            if final is not None:
                try:
                    answer = json.loads(final["function"].get("arguments") or "{}").get("answer", "")
                except (ValueError, AttributeError):
                    answer = final["function"].get("arguments") or ""
                self.texts.append(str(answer))
                return
            if calls:
                await self.run_calls(msg, calls)
                continue
            text = msg.get("content") or ""
            self.texts.append(text)
            if not self.after_answer(text):
                return

    async def run_calls(self, msg, calls):
        replayed, outputs = [], []
        for call in calls:
            fn = call.get("function") or {}
            name, args = fn.get("name", ""), fn.get("arguments") or ""
            output, is_error, replay_args = await self.execute(name, args)
            self.done.append({"name": name, "arguments": args, "output": None if is_error else output,
                              "error": output if is_error else None, "shown": output})
            replayed.append({"id": call.get("id"), "type": "function",
                             "function": {"name": name, "arguments": replay_args}})
            if "progress" in self.on:
                output = T.progress(output, self.task.prompt, self.done)
            outputs.append({"role": "tool", "tool_call_id": call.get("id"), "content": output})
        self.messages.append({"role": "assistant", "content": msg.get("content") or "", "tool_calls": replayed})
        self.messages.extend(outputs)

    async def execute(self, name, args):
        """(output text, is_error, arguments to replay upstream)."""
        schema = self.loop.tools.schema(name)
        if not arguments_parse(args):
            if "replay" in self.on:
                return T.malformed_output(args, schema), True, "{}"
            output, is_error = await self.loop.tools.call(name, args)
            return output, is_error, args
        if "guard" in self.on:
            earlier = T.repeated(name, args, self.done)
            if earlier is not None and earlier.get("output") is not None:
                return T.repeat_output({"name": name, "output": earlier["output"]}), False, args
        if "schema" in self.on:
            err = T.schema_error(schema, args)
            if err:
                return err, True, args
        output, is_error = await self.loop.tools.call(name, args)
        if "annotate" in self.on:
            output = T.annotate(output, self.task.prompt)
        return output, is_error, args

    def after_answer(self, text):
        """True when the loop goes on after this text answer."""
        if self.turns >= self.loop.max_turns:
            return False
        if "required" in self.on and not self.done and self.required_turns < 2 and T.call_as_text(text):
            # A call written as text before any real call: ask for the real one.
            self.required_turns += 1
            self.force = True
            self.messages += [{"role": "assistant", "content": text},
                              {"role": "user", "content": T.REQUIRED_PROMPT}]
            return True
        if not self.done:
            return False
        if "seed-check" in self.on and not self.seed_sent:
            self.seed_sent = True
            self.messages += [{"role": "assistant", "content": text},
                              {"role": "system", "content": T.SEED_PROMPT}]
            return True
        just_verified = self.calls_at_verify == len(self.done)
        if "required" in self.on and self.required_turns < 2 and (
                T.call_as_text(text) or (just_verified and T.shows_missing_step(text))):
            self.required_turns += 1
            self.force = True
            self.messages += [{"role": "assistant", "content": text},
                              {"role": "user", "content": T.REQUIRED_PROMPT}]
            return True
        succeeded = sum(1 for c in self.done if c.get("output") is not None)
        if "tally" in self.on and self.required_turns < 2 and succeeded < len(self.planned):
            self.required_turns += 1
            self.force = True
            self.messages += [{"role": "assistant", "content": text},
                              {"role": "user", "content": T.tally_prompt(self.planned[succeeded])}]
            return True
        if "verify" in self.on and self.verifications < self.loop.verify_max and not just_verified:
            self.verifications += 1
            self.calls_at_verify = len(self.done)
            self.draft = text
            self.messages += [{"role": "assistant", "content": text},
                              {"role": "user", "content": T.verify_prompt(self.task.prompt, [
                                  {**c, "output": c["shown"]} for c in self.done])}]
            return True
        return False

    def answer(self):
        return self.texts[-1] if self.texts else ""

    def keep_draft_answer(self):
        """The variant that keeps the draft when the verification led to no call."""
        if self.draft is not None and self.calls_at_verify == len(self.done):
            return self.draft
        return self.answer()


def arguments_parse(args):
    try:
        return isinstance(json.loads(args), dict)
    except (TypeError, ValueError):
        return False
