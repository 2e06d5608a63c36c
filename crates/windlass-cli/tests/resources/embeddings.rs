//! An embedding model in the upstream table: `POST /v1/embeddings` routed
//! by model, hybrid vector stores (`[retrieval] embedding_model`). Against
//! the real all-MiniLM-L6-v2 when `scripts/embed-server.sh` runs
//! (`WINDLASS_TEST_EMBED`), else against a stand-in (`fake_embed.rs`).

use serde_json::{json, Value};

use crate::fake_embed::FakeEmbed;
use crate::support::{config, databases, Server};

/// The embeddings upstream's root and model name.
async fn embedding_upstream() -> (String, String, Option<FakeEmbed>) {
    if let Ok(url) = std::env::var("WINDLASS_TEST_EMBED") {
        let model = std::env::var("WINDLASS_TEST_EMBED_MODEL")
            .unwrap_or_else(|_| "all-minilm-l6-v2".into());
        return (url, model, None);
    }
    let fake = FakeEmbed::start().await;
    (fake.url(), "all-minilm-l6-v2".into(), Some(fake))
}

/// A chat upstream for `chat-*` models and the embedding upstream for
/// `embed` (renamed to the model's own name), with retrieval on `embed`.
fn table(embed_url: &str, model: &str) -> std::path::PathBuf {
    config(&format!(
        "[[upstreams]]\nname = \"chat\"\nurl = \"http://127.0.0.1:1/v1\"\nmodels = [\"chat-*\"]\n\
         [[upstreams]]\nname = \"embedder\"\nurl = \"{embed_url}\"\n\
         models = [{{ name = \"embed\", upstream_name = \"{model}\" }}]\n\
         [[upstreams]]\nname = \"claude\"\nkind = \"anthropic\"\nurl = \"http://127.0.0.1:1/v1\"\nmodels = [\"claude-*\"]\n\
         [retrieval]\nembedding_model = \"embed\"\n"
    ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn embeddings_are_routed_by_model() {
    let (url, model, _fake) = embedding_upstream().await;
    let cfg = table(&url, &model);
    let db = databases().await.remove(0);
    let server = Server::start(&db, Some(&cfg)).await;
    let me = server.me();
    let (status, got) = me
        .post(
            "/v1/embeddings",
            &json!({"model": "embed", "input": ["a cat", "a dog"]}),
        )
        .await;
    assert_eq!(status, 200, "{got}");
    assert_eq!(got["object"], "list");
    let data = got["data"].as_array().unwrap();
    assert_eq!(data.len(), 2);
    assert_eq!(data[1]["index"], 1);
    assert!(data[0]["embedding"].as_array().unwrap().len() >= 32);
    let (status, one) = me
        .post(
            "/v1/embeddings",
            &json!({"model": "embed", "input": "hello"}),
        )
        .await;
    assert_eq!(
        (status, one["data"].as_array().map(Vec::len)),
        (200, Some(1))
    );

    let cases: [(Value, u16, &str); 4] = [
        (json!({"model": "nope", "input": "x"}), 404, "model"),
        (json!({"model": "claude-3", "input": "x"}), 404, "model"),
        (json!({"model": "embed", "input": []}), 400, "input"),
        (json!({"model": "embed", "input": ["ok", ""]}), 400, "input"),
    ];
    for (body, want, param) in cases {
        let (status, err) = me.post("/v1/embeddings", &body).await;
        assert_eq!(status, want, "{body}: {err}");
        assert_eq!(err["error"]["param"], param, "{err}");
        assert!(err["error"]["message"].as_str().is_some());
    }
    let (status, err) = me.post("/v1/embeddings", &json!({"input": "x"})).await;
    assert_eq!(status, 400, "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_created_with_an_embedding_model_is_searched_hybrid() {
    let (url, model, _fake) = embedding_upstream().await;
    let cfg = table(&url, &model);
    for db in databases().await {
        let server = Server::start(&db, Some(&cfg)).await;
        let me = server.me();
        let a = me
            .upload_file(
                "pets.txt",
                b"Our office cat Biscuit sleeps on the warm radiator all afternoon.",
            )
            .await;
        let b = me
            .upload_file(
                "money.txt",
                b"Refunds are paid to the original card within thirty days.",
            )
            .await;
        let (status, store) = me
            .post("/v1/vector_stores", &json!({"file_ids": [a, b]}))
            .await;
        assert_eq!(status, 200, "{store}");
        assert_eq!(store["search_mode"], "hybrid");
        assert_eq!(store["embedding_model"], model.as_str());
        let vs = store["id"].as_str().unwrap();
        for f in [&a, &b] {
            assert_eq!(me.settled(vs, f).await["status"], "completed");
        }
        let (status, found) = me
            .post(
                &format!("/v1/vector_stores/{vs}/search"),
                &json!({"query": "where does the cat sleep?"}),
            )
            .await;
        assert_eq!(status, 200, "{found}");
        assert_eq!(found["data"][0]["filename"], "pets.txt");
        let weights = json!({"query": "refund card", "ranking_options": {"hybrid_search": {"embedding_weight": 1.0, "text_weight": 0.0}}});
        let (status, found) = me
            .post(&format!("/v1/vector_stores/{vs}/search"), &weights)
            .await;
        assert_eq!(status, 200, "{found}");
        assert_eq!(found["data"][0]["filename"], "money.txt");
    }
}
