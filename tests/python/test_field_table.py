"""Every field of the OpenAI SDK's own `ResponseCreateParams` is in the field
table of docs/upstream-fields.md, and each one the table calls refused is a
400 naming it: nothing is accepted and silently ignored. A field the SDK adds
later fails here until the table says what happens to it."""

import re
import typing
from pathlib import Path

import openai
import pytest
from openai.types.responses import response_create_params as params

DOC = Path(__file__).resolve().parents[2] / "docs" / "upstream-fields.md"


def sdk_fields() -> set:
    fields = set()
    for cls in (params.ResponseCreateParamsNonStreaming, params.ResponseCreateParamsStreaming):
        fields |= set(typing.get_type_hints(cls, include_extras=False).keys())
    return fields


def table() -> dict:
    text = DOC.read_text()
    section = text.split("## Every `responses.create` field", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        m = re.match(r"\| `([a-z_]+)` \| (.+) \|$", line)
        if m:
            rows[m.group(1)] = m.group(2)
    return rows


def test_every_sdk_field_is_in_the_table():
    fields, rows = sdk_fields(), table()
    assert "model" in fields and "stream" in fields, sorted(fields)
    missing = sorted(fields - rows.keys())
    assert not missing, f"openai {openai.__version__}: not in docs/upstream-fields.md: {missing}"
    stale = sorted(rows.keys() - fields)
    assert not stale, f"in the table but not in the SDK: {stale}"


REFUSED_SAMPLES = {
    "access_programs": {"programs": []},
    "background_options": {"completion_window": "2h"},
    "image": {"detail": "low"},
    "moderation": {"type": "auto"},
    "prompt_cache_options": {"ttl": "24h"},
    "prompt_cache_retention": "24h",
}


@pytest.mark.parametrize("field", sorted(REFUSED_SAMPLES))
def test_refused_fields_are_400s_naming_them(client, fake, field):
    assert table()[field].startswith("refused"), field
    before = len(fake.requests())
    with pytest.raises(openai.BadRequestError) as err:
        client.responses.create(model="m", input="hi", extra_body={field: REFUSED_SAMPLES[field]})
    assert err.value.body["param"] == field
    assert len(fake.requests()) == before


def test_the_samples_cover_every_refused_field():
    refused = {f for f, what in table().items() if what.startswith("refused")}
    assert refused == set(REFUSED_SAMPLES)


def test_unknown_stream_options_are_refused(client):
    with pytest.raises(openai.BadRequestError) as err:
        client.responses.create(model="m", input="hi", stream=True, stream_options={"include_usage": True})
    assert "stream_options" in (err.value.body.get("param") or "")
