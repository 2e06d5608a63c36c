"""What current OpenAI clients send, through the official SDK: `client_metadata`,
`namespace` and `custom` tools, hosted tools Windlass cannot run."""

from conftest import Fake, Windlass  # noqa: F401  (fixtures come from conftest)

NAMESPACE = {
    "type": "namespace",
    "name": "crm",
    "description": "Customer records",
    "tools": [
        {
            "type": "function",
            "name": "lookup",
            "description": "Find a customer",
            "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
            "strict": False,
        },
        {"type": "custom", "name": "note", "description": "Free-form note"},
    ],
}
PATCH = {
    "type": "custom",
    "name": "apply_patch",
    "description": "Apply a patch",
    "format": {"type": "grammar", "syntax": "lark", "definition": 'start: "*** Begin Patch"'},
}
WEB = {"type": "web_search", "external_web_access": False}


def test_namespace_custom_and_hosted_tools_round_trip(client, fake):
    fake.script(
        {"tool_calls": [{"name": "crm__lookup", "arguments": '{"q":"Ada"}', "id": "call_ns"}]},
        {"tool_calls": [{"name": "apply_patch", "arguments": '{"input":"*** Begin Patch"}', "id": "call_cu"}]},
        {"text": "Done."},
    )
    tools = [NAMESPACE, PATCH, WEB]
    with client.responses.stream(
        model="m",
        input="Find Ada",
        tools=tools,
        extra_body={"client_metadata": {"session_id": "s-1"}},
    ) as stream:
        first = stream.get_final_response()
    assert first.status == "completed"
    call = first.output[-1]
    assert (call.type, call.namespace, call.name, call.call_id) == ("function_call", "crm", "lookup", "call_ns")
    # The hosted tool stays in the response's tools; the model never saw it.
    assert [t.type for t in first.tools] == ["namespace", "custom", "web_search"]
    sent = fake.requests()[-1]
    names = [t["function"]["name"] for t in sent["tools"]]
    assert names == ["crm__lookup", "crm__note", "apply_patch"]
    assert "client_metadata" not in sent
    grammar_doc = sent["tools"][2]["function"]["parameters"]["properties"]["input"]["description"]
    assert '"*** Begin Patch"' in grammar_doc

    events = []
    with client.responses.stream(
        model="m",
        previous_response_id=first.id,
        tools=tools,
        input=[{"type": "function_call_output", "call_id": "call_ns", "output": "Ada, id 7"}],
    ) as stream:
        events = [e.type for e in stream]
        second = stream.get_final_response()
    custom = second.output[-1]
    assert (custom.type, custom.name, custom.input, custom.call_id) == (
        "custom_tool_call",
        "apply_patch",
        "*** Begin Patch",
        "call_cu",
    )
    assert "response.custom_tool_call_input.done" in events
    sent = fake.requests()[-1]["messages"]
    assert sent[-2]["tool_calls"][0]["function"]["name"] == "crm__lookup"
    assert sent[-1] == {"role": "tool", "tool_call_id": "call_ns", "content": "Ada, id 7"}

    final = client.responses.create(
        model="m",
        previous_response_id=second.id,
        tools=tools,
        input=[{"type": "custom_tool_call_output", "call_id": "call_cu", "output": "patched"}],
    )
    assert final.output_text == "Done."
    sent = fake.requests()[-1]["messages"]
    assert sent[-2]["tool_calls"][0]["function"] == {
        "name": "apply_patch",
        "arguments": '{"input":"*** Begin Patch"}',
    }
    assert sent[-1] == {"role": "tool", "tool_call_id": "call_cu", "content": "patched"}
    items = client.responses.input_items.list(final.id)
    assert [i.type for i in items.data] == ["custom_tool_call_output"]


def test_unknown_fields_are_still_refused(client):
    import openai
    import pytest

    with pytest.raises(openai.BadRequestError) as e:
        client.responses.create(model="m", input="hi", extra_body={"client_metadatas": {}})
    assert e.value.body["param"] == "client_metadatas"
