"""The OpenAI Agents SDK's streamed run against `windlass serve` with default
settings: a function tool runs in the SDK and the agent reaches a final answer."""

import asyncio

from agents import Agent, OpenAIResponsesModel, Runner, function_tool, set_tracing_disabled
from openai import AsyncOpenAI

set_tracing_disabled(True)  # no trace export: nothing leaves the machine


@function_tool
def get_weather(city: str) -> str:
    """Weather for a city."""
    return f"18C and windy in {city}"


def test_run_streamed_with_a_function_tool(windlass, fake):
    fake.script(
        {"tool_calls": [{"name": "get_weather", "arguments": '{"city":"Oslo"}', "id": "call_a1"}]},
        {"text": "Oslo: ", "echo_tool_output": True},
    )
    client = AsyncOpenAI(base_url=windlass.base + "/v1", api_key="test", max_retries=0)
    agent = Agent(
        name="weather",
        instructions="Answer with the tool.",
        tools=[get_weather],
        model=OpenAIResponsesModel(model="m", openai_client=client),
    )

    async def run():
        result = Runner.run_streamed(agent, "Weather in Oslo?")
        kinds = [e.type async for e in result.stream_events()]
        return result, kinds

    result, kinds = asyncio.run(run())
    assert result.final_output == "Oslo: 18C and windy in Oslo"
    assert "run_item_stream_event" in kinds
    sent = fake.requests()[-1]["messages"]
    assert sent[-1]["role"] == "tool"
    assert sent[-1]["content"] == "18C and windy in Oslo"
