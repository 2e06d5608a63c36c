"""Files, vector stores and containers through the official OpenAI SDK.

With `scripts/embed-server.sh` running the real all-MiniLM-L6-v2 model
(WINDLASS_TEST_EMBED), the gateway is configured with it as its embedding
model and stores are hybrid; otherwise they are keyword-only.
"""

import os
import tempfile
from pathlib import Path

import openai
import pytest

from conftest import Windlass

NOTES = "Office notes.\nThe office cat is named Biscuit and sleeps by the radiator.\n"
POLICY = "# Refund policy\n\nRefunds are paid within 30 days of the request.\n"


@pytest.fixture(scope="module")
def gateway(fake):
    embed = os.environ.get("WINDLASS_TEST_EMBED")
    if embed is None:
        w = Windlass(fake.upstream)
        w.embedding_model = None
    else:
        model = os.environ.get("WINDLASS_TEST_EMBED_MODEL", "all-minilm-l6-v2")
        cfg = Path(tempfile.mkdtemp()) / "windlass.toml"
        cfg.write_text(f'[retrieval]\nembedding_model = "{model}"\n')
        # The embedding server is the one upstream: the model routes to it.
        w = Windlass(embed, "--config", str(cfg))
        w.embedding_model = model
    yield w
    w.close()


@pytest.fixture(scope="module")
def sdk(gateway):
    return openai.OpenAI(base_url=gateway.base + "/v1", api_key="test", max_retries=0)


def _file(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_files_create_list_retrieve_content_delete(sdk, tmp_path):
    path = _file(tmp_path, "notes.txt", NOTES)
    created = sdk.files.create(file=path.open("rb"), purpose="assistants")
    assert created.id.startswith("file-")
    assert created.filename == "notes.txt"
    assert created.bytes == len(NOTES.encode())
    assert created.purpose == "assistants"
    assert any(f.id == created.id for f in sdk.files.list(purpose="assistants"))
    assert sdk.files.retrieve(created.id).filename == "notes.txt"
    assert sdk.files.content(created.id).read() == NOTES.encode()
    deleted = sdk.files.delete(created.id)
    assert deleted.deleted and deleted.id == created.id
    with pytest.raises(openai.NotFoundError):
        sdk.files.retrieve(created.id)


def test_vector_store_upload_and_poll_then_search(sdk, gateway, tmp_path):
    store = sdk.vector_stores.create(
        name="kb", description="office notes and policies", metadata={"team": "ops"}
    )
    assert store.id.startswith("vs_")
    assert store.name == "kb" and store.metadata == {"team": "ops"}
    # Stored and returned (a field the SDK may or may not declare).
    kept = sdk.vector_stores.retrieve(store.id).to_dict()
    assert kept["description"] == "office notes and policies"
    mode = store.model_extra.get("search_mode")
    assert mode == ("hybrid" if gateway.embedding_model else "keyword")

    for name, text in [("notes.txt", NOTES), ("policy.md", POLICY)]:
        vsf = sdk.vector_stores.files.upload_and_poll(
            vector_store_id=store.id,
            file=_file(tmp_path, name, text).open("rb"),
            poll_interval_ms=100,
        )
        assert vsf.status == "completed", vsf.last_error
        assert vsf.usage_bytes > 0

    again = sdk.vector_stores.retrieve(store.id)
    assert again.file_counts.completed == 2 and again.status == "completed"
    listed = sdk.vector_stores.files.list(vector_store_id=store.id, filter="completed")
    assert len(listed.data) == 2

    page = sdk.vector_stores.search(store.id, query="What is the office cat called?")
    assert page.data, "no results"
    top = page.data[0]
    assert top.filename == "notes.txt"
    assert "Biscuit" in top.content[0].text
    assert 0 < top.score <= 1

    page = sdk.vector_stores.search(
        store.id, query=["refund", "days"], max_num_results=1, rewrite_query=False
    )
    assert [r.filename for r in page.data] == ["policy.md"]
    # No model rewrites queries here: rewrite_query=True is refused, not ignored.
    with pytest.raises(openai.BadRequestError) as refused:
        sdk.vector_stores.search(store.id, query="refund", rewrite_query=True)
    assert refused.value.body["param"] == "rewrite_query"

    with pytest.raises(openai.BadRequestError):
        sdk.vector_stores.search(store.id, query="x", max_num_results=99)
    with pytest.raises(openai.NotFoundError):
        sdk.vector_stores.search("vs_nope", query="x")

    assert sdk.vector_stores.delete(store.id).deleted


def test_vector_store_file_batch_and_unreadable_file(sdk, tmp_path):
    good = sdk.files.create(file=_file(tmp_path, "a.md", "apples are red").open("rb"), purpose="assistants")
    bad = sdk.files.create(file=_file(tmp_path, "b.pdf", "%PDF-1.4 not really").open("rb"), purpose="assistants")
    store = sdk.vector_stores.create(name="batch")
    batch = sdk.vector_stores.file_batches.create_and_poll(
        vector_store_id=store.id, file_ids=[good.id, bad.id], poll_interval_ms=100
    )
    assert batch.id.startswith("vsfb_")
    assert batch.file_counts.completed == 1 and batch.file_counts.failed == 1
    failed = sdk.vector_stores.files.retrieve(file_id=bad.id, vector_store_id=store.id)
    assert failed.status == "failed" and failed.last_error.code == "invalid_file"


def test_containers(sdk, tmp_path):
    data = sdk.files.create(file=_file(tmp_path, "data.csv", "x,y\n1,2\n").open("rb"), purpose="user_data")
    c = sdk.containers.create(name="work", file_ids=[data.id])
    assert c.id.startswith("cntr_") and c.status == "running"
    assert any(x.id == c.id for x in sdk.containers.list())
    uploaded = sdk.containers.files.create(c.id, file=_file(tmp_path, "hello.txt", "hi").open("rb"))
    assert uploaded.path == "/mnt/data/hello.txt"
    paths = sorted(f.path for f in sdk.containers.files.list(c.id))
    assert paths == ["/mnt/data/data.csv", "/mnt/data/hello.txt"]
    body = sdk.containers.files.content.retrieve(uploaded.id, container_id=c.id)
    assert body.read() == b"hi"
    sdk.containers.files.delete(uploaded.id, container_id=c.id)
    sdk.containers.delete(c.id)
    with pytest.raises(openai.NotFoundError):
        sdk.containers.retrieve(c.id)


def test_embeddings(sdk, gateway):
    if not gateway.embedding_model:
        pytest.skip("no embedding model (run under scripts/embed-server.sh)")
    got = sdk.embeddings.create(model=gateway.embedding_model, input=["a cat", "a dog"])
    assert len(got.data) == 2 and len(got.data[0].embedding) == 384
