"""OpenAI's client-executed tool types through the official OpenAI Python
SDK against `windlass serve` (scripted upstream): `local_shell` and
`apply_patch` calls come back as the SDK's own typed items and continue
with their output items, streamed and not."""

import json

from openai.types.responses import ResponseApplyPatchToolCall


def test_local_shell_round_trip(client, fake):
    fake.script(
        {"tool_calls": [{"name": "local_shell", "id": "call_ls1",
                         "arguments": '{"command":["ls","-1"],"workdir":"/srv"}'}]},
        {"text": "Listed: ", "echo_tool_output": True},
    )
    with client.responses.stream(model="m", input="List /srv", tools=[{"type": "local_shell"}]) as stream:
        types = [e.type for e in stream]
        first = stream.get_final_response()
    assert first.status == "completed"
    assert "response.function_call_arguments.delta" not in types
    call = first.output[0]
    assert call.type == "local_shell_call"
    assert call.call_id == "call_ls1"
    assert call.action.command == ["ls", "-1"]
    assert call.action.working_directory == "/srv"

    final = client.responses.create(
        model="m",
        previous_response_id=first.id,
        tools=[{"type": "local_shell"}],
        input=[{"type": "local_shell_call_output", "id": call.call_id,
                "output": json.dumps({"output": "a.txt\nb.txt\n"})}],
    )
    assert final.status == "completed"
    assert "a.txt" in final.output_text
    msgs = fake.requests()[-1]["messages"]
    assert msgs[1]["tool_calls"][0]["function"]["name"] == "local_shell"
    assert msgs[2]["role"] == "tool" and msgs[2]["tool_call_id"] == "call_ls1"


def test_apply_patch_round_trip(client, fake):
    diff = "@@\n-hello\n+hello, world\n"
    fake.script(
        {"tool_calls": [{"name": "apply_patch", "id": "call_ap1",
                         "arguments": json.dumps({"type": "update_file", "path": "greet.txt", "diff": diff})}]},
        {"text": "Patched: ", "echo_tool_output": True},
    )
    first = client.responses.create(model="m", input="Fix greet.txt", tools=[{"type": "apply_patch"}])
    call = first.output[0]
    assert isinstance(call, ResponseApplyPatchToolCall)
    assert (call.operation.type, call.operation.path, call.operation.diff) == ("update_file", "greet.txt", diff)

    with client.responses.stream(
        model="m",
        previous_response_id=first.id,
        tools=[{"type": "apply_patch"}],
        input=[{"type": "apply_patch_call_output", "call_id": call.call_id,
                "status": "completed", "output": "Updated greet.txt"}],
    ) as stream:
        for _ in stream:
            pass
        final = stream.get_final_response()
    assert final.status == "completed"
    assert "Updated greet.txt" in final.output_text
