"""`POST /v1/responses/input_tokens` through the OpenAI SDK against a real
llama.cpp server (the rig's llama-server; skipped when none answers): the
count is the upstream tokenizer's, equal to the prompt tokens the same
server reports for the same request (an opt-in check, outside CI)."""

import os
import urllib.request

import pytest
from conftest import Windlass

LLAMA = os.environ.get("WINDLASS_RIG_LLAMA", "http://127.0.0.1:8082")
MODEL = os.environ.get("WINDLASS_RIG_LLAMA_MODEL", "qwen2.5-0.5b")

WEATHER = {
    "type": "function",
    "name": "get_weather",
    "description": "Weather for a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}


def _up() -> bool:
    try:
        with urllib.request.urlopen(LLAMA + "/health", timeout=2) as r:
            return r.status == 200
    except OSError:
        return False


pytestmark = pytest.mark.skipif(not _up(), reason=f"no llama.cpp server at {LLAMA} (rig)")


@pytest.fixture(scope="module")
def llama_client():
    from openai import OpenAI

    w = Windlass(LLAMA + "/v1")
    yield OpenAI(base_url=w.base + "/v1", api_key="test", max_retries=0)
    w.close()


@pytest.mark.parametrize("tools", [[], [WEATHER]])
def test_the_count_is_what_llama_cpp_reports_as_prompt_tokens(llama_client, tools):
    body = {
        "model": MODEL,
        "instructions": "You are terse. Answer in one word.",
        "input": [
            {"role": "user", "content": "Name a colour."},
            {"role": "assistant", "content": "Teal."},
            {"role": "user", "content": "Another one, please?"},
        ],
        "tools": tools,
    }
    counted = llama_client.responses.input_tokens.count(**body)
    assert counted.model_extra.get("count_method") == "upstream"
    answered = llama_client.responses.create(**body, max_output_tokens=16, store=False, tool_choice="none")
    assert counted.input_tokens == answered.usage.input_tokens, (counted, answered.usage)
