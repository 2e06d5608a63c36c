"""WebSocket mode and compaction through the official OpenAI Python SDK
(`client.responses.connect()`, `client.responses.compact()`), against
`windlass serve` in front of the scripted upstream."""

import pytest

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

TERMINAL = {"response.completed", "response.failed", "response.incomplete"}


def until_done(connection):
    """The events of one response, up to its terminal (or error) event."""
    events = []
    for event in connection:
        events.append(event)
        if event.type in TERMINAL or event.type == "error":
            return events
    raise AssertionError(f"socket closed after {[e.type for e in events]}")


def test_one_socket_carries_three_chained_responses_with_a_tool_call(client, fake):
    fake.script(
        {"text": "Noted: you live in Oslo."},
        {"tool_calls": [{"name": "get_weather", "arguments": '{"city":"Oslo"}'}]},
        {"text": "It is sunny in Oslo."},
    )
    with client.responses.connect() as connection:
        connection.response.create(model="m", input="I live in Oslo.")
        first = until_done(connection)
        assert first[0].type == "response.created"
        r1 = first[-1].response
        assert r1.status == "completed"
        assert r1.output_text == "Noted: you live in Oslo."

        connection.response.create(
            model="m", previous_response_id=r1.id, input="Weather at home?", tools=[WEATHER]
        )
        second = until_done(connection)
        assert [e.sequence_number for e in second] == list(range(len(second)))
        r2 = second[-1].response
        call = r2.output[0]
        assert call.type == "function_call" and call.name == "get_weather"
        assert r2.previous_response_id == r1.id

        connection.response.create(
            model="m",
            previous_response_id=r2.id,
            tools=[WEATHER],
            input=[{"type": "function_call_output", "call_id": call.call_id, "output": "sunny, 21C"}],
        )
        third = until_done(connection)
        r3 = third[-1].response
        assert r3.status == "completed"
        assert r3.output_text == "It is sunny in Oslo."
        deltas = "".join(e.delta for e in third if e.type == "response.output_text.delta")
        assert deltas == "It is sunny in Oslo."

    # The last model turn saw the whole chain, tool result included.
    sent = fake.requests()[-1]["messages"]
    assert sent[0]["content"] == "I live in Oslo."
    assert any(m["role"] == "tool" and m["content"] == "sunny, 21C" for m in sent)
    # Stored like any other response.
    assert client.responses.retrieve(r3.id).output_text == "It is sunny in Oslo."


def test_websocket_refusals_arrive_as_error_events(client, fake):
    fake.script({"text": "still here"})
    with client.responses.connect() as connection:
        connection.send({"type": "response.create", "model": "m", "input": "x", "stream": True})
        [error] = until_done(connection)
        assert error.type == "error"
        raw = error.model_dump()
        assert raw["status"] == 400 and raw["error"]["param"] == "stream"
        connection.response.create(model="m", input="x")
        assert until_done(connection)[-1].response.output_text == "still here"


def test_compact_then_continue_from_its_output(client, fake):
    fake.script({"text": "Launch Tuesday; support first.", "usage": [30, 7]}, {"text": "Tuesday."})
    compacted = client.responses.compact(
        model="m",
        input=[
            {"role": "user", "content": "We launch on Tuesday."},
            {"role": "assistant", "content": "Understood, support gets told first."},
        ],
    )
    assert compacted.object == "response.compaction"
    assert compacted.usage.total_tokens == 37
    kinds = [item.type for item in compacted.output]
    assert kinds == ["message", "compaction"]
    summary_pass = fake.requests()[-1]["messages"]
    assert summary_pass[0]["role"] == "system" and "compacting" in summary_pass[0]["content"]

    window = [item.model_dump(exclude_none=True) for item in compacted.output]
    r = client.responses.create(model="m", input=[*window, {"role": "user", "content": "When?"}])
    assert r.output_text == "Tuesday."
    sent = fake.requests()[-1]["messages"]
    texts = [m["content"] if isinstance(m["content"], str) else m["content"][0]["text"] for m in sent]
    assert any("Launch Tuesday; support first." in t for t in texts)
    assert not any("Understood" in t for t in texts), texts


def test_a_forged_compaction_item_is_refused(client):
    import openai

    with pytest.raises(openai.BadRequestError) as err:
        client.responses.create(
            model="m",
            input=[{"type": "compaction", "encrypted_content": "gAAAA-not-ours"}, {"role": "user", "content": "x"}],
        )
    assert err.value.body["param"] == "input[0].encrypted_content"
