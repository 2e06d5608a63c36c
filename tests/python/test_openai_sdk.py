"""The official OpenAI Python SDK against `windlass serve` (scripted upstream)."""

import openai
import pytest
from openai import OpenAI

from conftest import Fake, Windlass

WEATHER = {
    "type": "function",
    "name": "get_weather",
    "description": "Weather for a city",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
}


def test_create_retrieve_input_items_delete(client, fake):
    fake.script({"text": "Hello from the model", "usage": [12, 4]})
    r = client.responses.create(model="m", input="Say hello", instructions="Be brief")
    assert r.status == "completed"
    assert r.output_text == "Hello from the model"
    assert r.usage.total_tokens == 16
    got = client.responses.retrieve(r.id)
    assert got.model_dump() == r.model_dump()
    items = client.responses.input_items.list(r.id)
    texts = [c.text for i in items.data for c in i.content]
    assert texts == ["Say hello"]
    sent = fake.requests()[-1]["messages"]
    assert sent[0] == {"role": "system", "content": "Be brief"}
    client.responses.delete(r.id)
    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve(r.id)


def test_stream_helper_accepts_the_stream(client, fake):
    fake.script({"text": "streamed answer in pieces", "reasoning": "think first", "chunk_chars": 3})
    deltas = []
    with client.responses.stream(model="m", input="stream please") as stream:
        for event in stream:
            if event.type == "response.output_text.delta":
                deltas.append(event.delta)
        final = stream.get_final_response()
    assert "".join(deltas) == "streamed answer in pieces"
    assert final.status == "completed"
    assert final.output_text == "streamed answer in pieces"
    assert [o.type for o in final.output] == ["reasoning", "message"]
    assert client.responses.retrieve(final.id).output_text == final.output_text


def test_previous_response_id_remembers(client, fake):
    fake.script({"text": "Nice to meet you, Alice."}, {"text": "Your name is Alice."})
    first = client.responses.create(model="m", input="My name is Alice.")
    second = client.responses.create(model="m", input="What is my name?", previous_response_id=first.id)
    assert second.previous_response_id == first.id
    msgs = fake.requests()[-1]["messages"]
    assert [m["role"] for m in msgs] == ["user", "assistant", "user"]
    assert msgs[0]["content"] == "My name is Alice."
    assert msgs[1]["content"] == "Nice to meet you, Alice."


# The opt-in mode, per request: a pause for the client ends `requires_action`.
OPT_IN = {"X-Windlass-Client-Tools-Status": "requires_action"}


def test_stream_helper_function_tool_round_trip(client, fake):
    """Default settings: a pause for the client ends `completed` with
    `response.completed`, which the SDK's stream helper requires."""
    fake.script(
        {"tool_calls": [{"name": "get_weather", "arguments": '{"city":"Paris"}', "id": "call_s1"}]},
        {"text": "Sunny in Paris.", "chunk_chars": 5},
    )
    with client.responses.stream(model="m", input="Weather in Paris?", tools=[WEATHER]) as stream:
        types = [e.type for e in stream]
        first = stream.get_final_response()
    assert first.status == "completed"
    assert types[-1] == "response.completed"
    assert "response.function_call_arguments.done" in types
    call = [o for o in first.output if o.type == "function_call"][0]
    assert (call.name, call.call_id, call.arguments) == ("get_weather", "call_s1", '{"city":"Paris"}')
    with client.responses.stream(
        model="m",
        previous_response_id=first.id,
        tools=[WEATHER],
        input=[{"type": "function_call_output", "call_id": call.call_id, "output": "sunny, 24C"}],
    ) as stream:
        deltas = [e.delta for e in stream if e.type == "response.output_text.delta"]
        final = stream.get_final_response()
    assert final.status == "completed"
    assert "".join(deltas) == final.output_text == "Sunny in Paris."
    msgs = fake.requests()[-1]["messages"]
    assert msgs[-1] == {"role": "tool", "tool_call_id": "call_s1", "content": "sunny, 24C"}


def test_bad_client_tools_status_header_is_a_400(client, fake):
    before = len(fake.requests())
    with pytest.raises(openai.BadRequestError) as e:
        client.responses.create(
            model="m", input="hi", extra_headers={"X-Windlass-Client-Tools-Status": "later"}
        )
    assert e.value.body["param"] == "X-Windlass-Client-Tools-Status"
    assert len(fake.requests()) == before


def test_requires_action_round_trip(client, fake):
    fake.script(
        {"tool_calls": [{"name": "get_weather", "arguments": '{"city":"Paris"}', "id": "call_w1"}]},
        {"text": "It is sunny in Paris."},
    )
    r = client.responses.create(model="m", input="Weather in Paris?", tools=[WEATHER], extra_headers=OPT_IN)
    assert r.status == "requires_action"
    call = [o for o in r.output if o.type == "function_call"][0]
    assert call.name == "get_weather" and call.call_id == "call_w1"
    final = client.responses.create(
        model="m",
        previous_response_id=r.id,
        tools=[WEATHER],
        input=[{"type": "function_call_output", "call_id": call.call_id, "output": "sunny, 24C"}],
    )
    assert final.status == "completed"
    assert final.output_text == "It is sunny in Paris."
    msgs = fake.requests()[-1]["messages"]
    assert msgs[1]["tool_calls"][0]["id"] == "call_w1"
    assert msgs[2] == {"role": "tool", "tool_call_id": "call_w1", "content": "sunny, 24C"}


def test_unknown_call_id_is_a_400(client):
    with pytest.raises(openai.BadRequestError) as e:
        client.responses.create(
            model="m",
            input=[{"type": "function_call_output", "call_id": "call_nope", "output": "x"}],
        )
    assert "call_nope" in str(e.value)


def test_errors_are_openai_shaped(client):
    # OpenAI answers an unknown previous response with a 400 naming it.
    with pytest.raises(openai.BadRequestError) as e:
        client.responses.create(model="m", input="hi", previous_response_id="resp_missing")
    assert e.value.body["param"] == "previous_response_id"
    with pytest.raises(openai.BadRequestError) as e:
        client.responses.create(model="m", input="hi", extra_body={"bogus_field": 1})
    assert e.value.body["param"] == "bogus_field"


@pytest.fixture(scope="module")
def completed_mode():
    """A gateway with `client_tools_status = completed` and a server-side `add` tool."""
    f = Fake("--gateway", "--client-tools-completed")
    yield f, OpenAI(base_url=f.gateway + "/v1", api_key="test", max_retries=0)
    f.close()


def _plain(v):
    """Drops the fields the SDK's stream helper adds itself (parsed*)."""
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items() if not k.startswith("parsed")}
    if isinstance(v, list):
        return [_plain(x) for x in v]
    return v


ADD = {
    "type": "function",
    "name": "add",
    "parameters": {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}},
}


def test_three_turn_loop_streams_as_one_stream(completed_mode):
    fake, client = completed_mode
    fake.script(
        {"tool_calls": [{"name": "add", "arguments": '{"a":17,"b":25}'}]},
        {"tool_calls": [{"name": "add", "arguments": '{"a":40,"b":2}'}, {"name": "add", "arguments": '{"a":1,"b":1}'}]},
        {"text": "The answer is 42."},
    )
    seen = []
    with client.responses.stream(model="m", input="Add things", tools=[ADD]) as stream:
        for event in stream:
            seen.append(event.type)
        final = stream.get_final_response()
    assert seen.count("response.created") == 1 and seen.count("response.completed") == 1
    assert final.status == "completed"
    assert [o.type for o in final.output] == [
        "function_call", "function_call_output",
        "function_call", "function_call", "function_call_output", "function_call_output",
        "message",
    ]
    assert final.output_text == "The answer is 42."
    assert _plain(client.responses.retrieve(final.id).model_dump()) == _plain(final.model_dump())


def test_client_tools_completed_mode(completed_mode):
    fake, client = completed_mode
    fake.script({"tool_calls": [{"name": "get_weather", "arguments": '{"city":"Oslo"}', "id": "call_o"}]}, {"text": "Cold."})
    with client.responses.stream(model="m", input="Weather?", tools=[WEATHER, ADD]) as stream:
        final = stream.get_final_response()
    assert final.status == "completed"
    assert final.output[0].type == "function_call"
    done = client.responses.create(
        model="m",
        previous_response_id=final.id,
        tools=[WEATHER, ADD],
        input=[{"type": "function_call_output", "call_id": "call_o", "output": "-5C"}],
    )
    assert done.output_text == "Cold."


def test_server_opt_in_requires_action_and_header_override(fake):
    """`--client-tools-status requires-action` on the real binary; a request's
    header can still ask for OpenAI's `completed`."""
    w = Windlass(fake.upstream, "--client-tools-status", "requires-action")
    try:
        client = OpenAI(base_url=w.base + "/v1", api_key="test", max_retries=0)
        fake.script({"tool_calls": [{"name": "get_weather", "arguments": "{}", "id": "call_r1"}]})
        r = client.responses.create(model="m", input="Weather?", tools=[WEATHER])
        assert r.status == "requires_action"
        fake.script({"tool_calls": [{"name": "get_weather", "arguments": "{}", "id": "call_r2"}]})
        with client.responses.stream(
            model="m",
            input="Weather?",
            tools=[WEATHER],
            extra_headers={"X-Windlass-Client-Tools-Status": "completed"},
        ) as stream:
            final = stream.get_final_response()
        assert final.status == "completed"
        assert final.output[-1].call_id == "call_r2"
    finally:
        w.close()
