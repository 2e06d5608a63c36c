//! The embeddings client over real HTTP: batches, order by `index`, the
//! transport's retries on 503, errors named, the key sent as a bearer.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use axum::{Json, Router};
use serde_json::{json, Value};
use windlass_engine::{Embedder, ProviderError};
use windlass_protocol::{EmbeddingInput, EmbeddingRequest};
use windlass_providers::{ChatProviderConfig, EmbeddingsClient};

#[derive(Default)]
struct Seen {
    calls: AtomicUsize,
    bodies: Mutex<Vec<Value>>,
    auth: Mutex<Vec<String>>,
}

/// Answers each input with `[len, index]`, in reverse order; the first call
/// gets a 503 when `flaky`.
async fn serve(flaky: bool) -> (String, Arc<Seen>) {
    let seen = Arc::new(Seen::default());
    let app = Router::new()
        .route(
            "/v1/embeddings",
            post(move |State(seen): State<Arc<Seen>>, headers: HeaderMap, Json(body): Json<Value>| async move {
                let n = seen.calls.fetch_add(1, Ordering::SeqCst);
                if let Some(a) = headers.get("authorization") {
                    seen.auth.lock().unwrap().push(a.to_str().unwrap().to_owned());
                }
                seen.bodies.lock().unwrap().push(body.clone());
                if flaky && n == 0 {
                    return (StatusCode::SERVICE_UNAVAILABLE, Json(json!({"error": {"message": "warming up"}})));
                }
                if body["input"][0] == "reject me" {
                    return (StatusCode::BAD_REQUEST, Json(json!({"error": {"message": "input too long", "type": "invalid_request_error"}})));
                }
                let inputs = body["input"].as_array().unwrap();
                let mut data: Vec<Value> = inputs
                    .iter()
                    .enumerate()
                    .map(|(i, t)| json!({"object": "embedding", "index": i, "embedding": [t.as_str().unwrap().len() as f32, i as f32]}))
                    .collect();
                data.reverse();
                (StatusCode::OK, Json(json!({"object": "list", "model": body["model"], "data": data,
                    "usage": {"prompt_tokens": 3, "total_tokens": 3}})))
            }),
        )
        .with_state(seen.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{addr}/v1"), seen)
}

fn texts(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

#[tokio::test]
async fn batches_in_order_with_retries_and_the_key() {
    let (url, seen) = serve(true).await;
    let mut cfg = ChatProviderConfig::new(url);
    cfg.api_key = Some("sk-test".into());
    let client = EmbeddingsClient::new(cfg, "emb-model")
        .unwrap()
        .with_batch_size(2);
    assert_eq!(client.model(), "emb-model");
    let out = client
        .embed(&texts(&["a", "bb", "ccc", "dddd", "eeeee"]))
        .await
        .unwrap();
    assert_eq!(
        out,
        vec![
            vec![1.0, 0.0],
            vec![2.0, 1.0],
            vec![3.0, 0.0],
            vec![4.0, 1.0],
            vec![5.0, 0.0]
        ]
    );
    // One 503 retried, then three batches.
    assert_eq!(seen.calls.load(Ordering::SeqCst), 4);
    let bodies = seen.bodies.lock().unwrap();
    assert_eq!(
        bodies[1],
        json!({"model": "emb-model", "input": ["a", "bb"], "encoding_format": "float"})
    );
    assert_eq!(bodies[3]["input"], json!(["eeeee"]));
    assert!(seen
        .auth
        .lock()
        .unwrap()
        .iter()
        .all(|a| a == "Bearer sk-test"));
}

#[tokio::test]
async fn upstream_errors_are_provider_errors() {
    let (url, _) = serve(false).await;
    let client = EmbeddingsClient::new(ChatProviderConfig::new(url), "m").unwrap();
    match client.embed(&texts(&["reject me"])).await {
        Err(ProviderError::Status {
            status, message, ..
        }) => {
            assert_eq!(status, 400);
            assert!(message.contains("input too long"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    let mut cfg = ChatProviderConfig::new("http://127.0.0.1:9/v1");
    cfg.max_retries = 0;
    let dead = EmbeddingsClient::new(cfg, "m").unwrap();
    assert!(matches!(
        dead.embed(&texts(&["x"])).await,
        Err(ProviderError::Connect(_))
    ));
}

#[tokio::test]
async fn create_forwards_a_request_as_is() {
    let (url, seen) = serve(false).await;
    let client = EmbeddingsClient::new(ChatProviderConfig::new(url), "configured").unwrap();
    let req = EmbeddingRequest {
        model: "asked-for".into(),
        input: EmbeddingInput::Texts(texts(&["hi"])),
        encoding_format: None,
        dimensions: None,
        user: Some("u1".into()),
    };
    let resp = client.create(&req).await.unwrap();
    assert_eq!(resp.model, "asked-for");
    assert_eq!(resp.usage.unwrap().total_tokens, 3);
    assert_eq!(
        seen.bodies.lock().unwrap()[0],
        json!({"model": "asked-for", "input": ["hi"], "user": "u1"})
    );
}
