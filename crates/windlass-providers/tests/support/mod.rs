//! A minimal scripted chat completions server for the provider's tests.
//!
//! Kept here rather than using `windlass-testkit` so these tests control the
//! exact bytes and timing (cuts, stalls before headers) and do not depend on
//! another crate's behaviour.

#![allow(dead_code)]

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::{get, post};
use axum::Router;
use futures::StreamExt;
use serde_json::{json, Value};

/// How a streamed answer ends after its frames.
#[derive(Clone, Debug)]
pub(crate) enum End {
    /// The body ends normally.
    Close,
    /// The connection is aborted (no terminating chunk).
    Cut,
    /// Nothing more is sent, and the connection stays open.
    Stall,
    /// This frame again and again, `gap` apart, until the client leaves.
    Forever(String),
}

/// One scripted answer to `POST /chat/completions`.
#[derive(Clone, Debug)]
pub(crate) enum Script {
    Sse {
        frames: Vec<String>,
        gap: Duration,
        end: End,
    },
    Json {
        status: u16,
        body: String,
        headers: Vec<(&'static str, String)>,
    },
    /// Never sends response headers.
    Hang,
}

impl Script {
    pub(crate) fn sse(frames: Vec<String>) -> Self {
        Script::Sse {
            frames,
            gap: Duration::ZERO,
            end: End::Close,
        }
    }

    pub(crate) fn sse_then(frames: Vec<String>, end: End) -> Self {
        Script::Sse {
            frames,
            gap: Duration::from_millis(5),
            end,
        }
    }

    pub(crate) fn json(status: u16, body: Value) -> Self {
        Script::Json {
            status,
            body: body.to_string(),
            headers: Vec::new(),
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Recorded {
    pub body: Value,
    pub headers: HeaderMap,
    pub peer: SocketAddr,
}

#[derive(Default)]
struct Shared {
    scripts: Mutex<VecDeque<Script>>,
    requests: Mutex<Vec<Recorded>>,
    /// Streamed bodies dropped by the server (finished or abandoned).
    bodies_dropped: AtomicUsize,
}

pub(crate) struct Fake {
    pub base_url: String,
    shared: Arc<Shared>,
}

impl Fake {
    pub(crate) async fn start() -> Fake {
        let shared = Arc::new(Shared::default());
        let app = Router::new()
            .route("/v1/chat/completions", post(chat))
            .route("/v1/models", get(models))
            .with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        tokio::spawn(async move {
            axum::serve(
                listener,
                app.into_make_service_with_connect_info::<SocketAddr>(),
            )
            .await
            .expect("serve");
        });
        Fake {
            base_url: format!("http://{addr}/v1"),
            shared,
        }
    }

    pub(crate) fn push(&self, script: Script) {
        self.shared.scripts.lock().expect("lock").push_back(script);
    }

    pub(crate) fn requests(&self) -> Vec<Recorded> {
        self.shared.requests.lock().expect("lock").clone()
    }

    pub(crate) fn count(&self) -> usize {
        self.shared.requests.lock().expect("lock").len()
    }

    pub(crate) fn bodies_dropped(&self) -> usize {
        self.shared.bodies_dropped.load(Ordering::SeqCst)
    }
}

async fn models() -> axum::Json<Value> {
    axum::Json(json!({"object": "list", "data": [
        {"id": "qwen3-8b", "object": "model", "created": 1700000000, "owned_by": "vllm"},
        {"id": "llama", "object": "model"}
    ]}))
}

/// Counts the streamed body as gone when dropped.
struct Guard(Arc<Shared>);

impl Drop for Guard {
    fn drop(&mut self) {
        self.0.bodies_dropped.fetch_add(1, Ordering::SeqCst);
    }
}

async fn chat(
    State(shared): State<Arc<Shared>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let body = serde_json::from_slice(&body).unwrap_or(Value::Null);
    shared.requests.lock().expect("lock").push(Recorded {
        body,
        headers,
        peer,
    });
    let script = shared.scripts.lock().expect("lock").pop_front();
    match script.unwrap_or_else(|| Script::json(500, json!({"error": {"message": "no script"}}))) {
        Script::Hang => {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            Response::new(Body::empty())
        }
        Script::Json {
            status,
            body,
            headers,
        } => {
            let mut builder = Response::builder()
                .status(StatusCode::from_u16(status).expect("status"))
                .header("content-type", "application/json");
            for (k, v) in headers {
                builder = builder.header(k, v);
            }
            builder.body(Body::from(body)).expect("response")
        }
        Script::Sse { frames, gap, end } => {
            let guard = Guard(shared.clone());
            let frames: VecDeque<String> = frames.into();
            let stream = futures::stream::unfold(
                (frames, end, guard, true),
                move |(mut frames, end, guard, first)| async move {
                    if !first && !gap.is_zero() {
                        tokio::time::sleep(gap).await;
                    }
                    if let Some(f) = frames.pop_front() {
                        return Some((Ok(Bytes::from(f)), (frames, end, guard, false)));
                    }
                    match &end {
                        End::Close => None,
                        End::Cut => Some((
                            Err(std::io::Error::other("cut")),
                            (frames, End::Close, guard, false),
                        )),
                        End::Stall => {
                            futures::future::pending::<()>().await;
                            None
                        }
                        End::Forever(f) => {
                            let f = f.clone();
                            Some((Ok(Bytes::from(f)), (frames, end, guard, false)))
                        }
                    }
                },
            );
            Response::builder()
                .header("content-type", "text/event-stream")
                .body(Body::from_stream(stream.boxed()))
                .expect("response")
        }
    }
}

/// A bare TCP server that answers every request with `head` (raw HTTP
/// bytes) and then keeps the connection open without sending more: it
/// controls exactly which bytes arrive, which hyper's server does not allow
/// (it holds the headers back until the first body bytes). Returns the base
/// URL and a counter of requests.
pub(crate) async fn raw_server(head: &'static str) -> (String, Arc<AtomicUsize>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let count = Arc::new(AtomicUsize::new(0));
    let counter = count.clone();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let counter = counter.clone();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 64 * 1024];
                let mut seen = Vec::new();
                // Read until the end of the request headers; the body is
                // small and arrives with them or right after.
                while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
                    match socket.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => seen.extend_from_slice(&buf[..n]),
                    }
                }
                counter.fetch_add(1, Ordering::SeqCst);
                if socket.write_all(head.as_bytes()).await.is_err() {
                    return;
                }
                // Hold the connection open until the client leaves.
                while let Ok(n) = socket.read(&mut buf).await {
                    if n == 0 {
                        break;
                    }
                }
            });
        }
    });
    (format!("http://{addr}/v1"), count)
}

/// `data: <json>\n\n`
pub(crate) fn frame(v: Value) -> String {
    format!("data: {v}\n\n")
}

pub(crate) fn delta(d: Value) -> String {
    frame(
        json!({"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m",
        "choices": [{"index": 0, "delta": d, "finish_reason": null}]}),
    )
}

pub(crate) fn finish(reason: &str) -> String {
    frame(
        json!({"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m",
        "choices": [{"index": 0, "delta": {}, "finish_reason": reason}]}),
    )
}

pub(crate) fn usage(prompt: u64, completion: u64) -> String {
    frame(
        json!({"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m",
        "choices": [], "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
        "total_tokens": prompt + completion}}),
    )
}

pub(crate) const DONE: &str = "data: [DONE]\n\n";
