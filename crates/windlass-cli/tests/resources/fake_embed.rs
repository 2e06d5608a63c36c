//! A stand-in for an embedding model server (`POST /v1/embeddings`, OpenAI's
//! shape) where the real one (`scripts/embed-server.sh`) is not running:
//! each text becomes a normalised bag of hashed words, so texts sharing
//! words are close. It can be told to hang, to hold an ingestion mid-file.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use axum::routing::post;
use axum::{Json, Router};
use serde_json::{json, Value};

/// Dimensions of the vectors unless told otherwise.
const DIMENSIONS: usize = 64;

#[derive(Clone, Default)]
pub(crate) struct FakeEmbed {
    pub stall: Arc<AtomicBool>,
    pub requests: Arc<AtomicUsize>,
    pub addr: Option<SocketAddr>,
    dimensions: usize,
}

impl FakeEmbed {
    pub(crate) async fn start() -> FakeEmbed {
        FakeEmbed::with_dimensions(DIMENSIONS).await
    }

    /// Vectors of `dimensions` (all-MiniLM-L6-v2's shape is 384).
    pub(crate) async fn with_dimensions(dimensions: usize) -> FakeEmbed {
        let mut fake = FakeEmbed {
            dimensions,
            ..FakeEmbed::default()
        };
        let state = fake.clone();
        let app = Router::new().route(
            "/v1/embeddings",
            post(move |Json(body): Json<Value>| {
                let state = state.clone();
                async move { state.answer(body).await }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        fake.addr = Some(listener.local_addr().expect("addr"));
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        fake
    }

    /// The API root, e.g. `http://127.0.0.1:PORT/v1`.
    pub(crate) fn url(&self) -> String {
        format!("http://{}/v1", self.addr.expect("started"))
    }

    async fn answer(&self, body: Value) -> Json<Value> {
        self.requests.fetch_add(1, Ordering::SeqCst);
        while self.stall.load(Ordering::SeqCst) {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        let texts: Vec<String> = match &body["input"] {
            Value::String(s) => vec![s.clone()],
            Value::Array(a) => a
                .iter()
                .map(|v| v.as_str().unwrap_or_default().to_owned())
                .collect(),
            _ => Vec::new(),
        };
        let data: Vec<Value> = texts
            .iter()
            .enumerate()
            .map(|(i, t)| json!({"object": "embedding", "index": i, "embedding": vector(t, self.dimensions)}))
            .collect();
        Json(json!({
            "object": "list", "data": data, "model": body["model"],
            "usage": {"prompt_tokens": texts.len(), "total_tokens": texts.len()}
        }))
    }
}

fn vector(text: &str, dimensions: usize) -> Vec<f32> {
    let mut v = vec![0f32; dimensions];
    for word in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        let h = word
            .to_lowercase()
            .bytes()
            .fold(1469598103934665603u64, |h, b| {
                (h ^ u64::from(b)).wrapping_mul(1099511628211)
            });
        v[(h % dimensions as u64) as usize] += 1.0;
    }
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-6);
    v.iter().map(|x| x / norm).collect()
}
