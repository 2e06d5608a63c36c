"""Issue 26 through the OpenAI Python SDK: with the completion check on, the
client gets one final assistant message (JSON and stream), on the
chat-completions and Anthropic upstream kinds; the check's prompt goes
upstream as a user turn after the draft."""

import pytest

from conftest import Fake

ADD = {
    "type": "function",
    "name": "add",
    "parameters": {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}},
}
DRAFT = "The sum of 17 and 25 is 42."
CONFIRMATION = "I have verified that the task is complete and the result is 42."


@pytest.fixture(params=["chat", "anthropic"])
def checking(request):
    flags = ["--gateway", "--completion-check"] + (["--anthropic"] if request.param == "anthropic" else [])
    f = Fake(*flags)
    from openai import OpenAI

    yield request.param, f, OpenAI(base_url=f.gateway + "/v1", api_key="test", max_retries=0)
    f.close()


def script(fake):
    fake.script(
        {"tool_calls": [{"name": "add", "arguments": '{"a":17,"b":25}'}]},
        {"text": DRAFT},
        {"text": CONFIRMATION},
    )


def last_turn(kind, body):
    last = body["messages"][-1]
    content = last["content"]
    text = content if isinstance(content, str) else "".join(p.get("text", "") for p in content)
    return last["role"], text


def test_one_final_message_with_the_check_on(checking):
    kind, fake, client = checking
    script(fake)
    r = client.responses.create(model="m", input="What is 17 + 25?", tools=[ADD])
    assert r.status == "completed"
    assert [o.type for o in r.output] == ["function_call", "function_call_output", "message"]
    assert r.output_text == DRAFT
    bodies = fake.requests()
    assert len(bodies) == 3
    role, text = last_turn(kind, bodies[-1])
    assert role == "user" and text.startswith("Before I accept your answer")

    script(fake)
    deltas = []
    with client.responses.stream(model="m", input="What is 17 + 25?", tools=[ADD]) as stream:
        for event in stream:
            if event.type == "response.output_text.delta":
                deltas.append(event.delta)
        final = stream.get_final_response()
    assert "".join(deltas) == DRAFT
    assert [o.type for o in final.output].count("message") == 1
    assert final.output_text == DRAFT
    assert CONFIRMATION not in final.model_dump_json()
