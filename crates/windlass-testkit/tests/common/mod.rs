//! Helpers shared by the integration tests: a real reqwest client and an SSE
//! reader.
#![allow(dead_code)]

use std::time::Duration;

use futures::StreamExt;
use serde_json::{json, Value};
use windlass_testkit::FakeUpstream;

/// A chat-completions request body.
pub(crate) fn chat_body(stream: bool, include_usage: bool) -> Value {
    let mut body = json!({
        "model": "test-model",
        "messages": [{"role": "user", "content": "Hello, who are you?"}],
    });
    if stream {
        body["stream"] = json!(true);
        if include_usage {
            body["stream_options"] = json!({"include_usage": true});
        }
    }
    body
}

/// POSTs `body` to the upstream's chat-completions endpoint.
pub(crate) async fn post(upstream: &FakeUpstream, body: &Value) -> reqwest::Response {
    post_with(&reqwest::Client::new(), upstream, body).await
}

pub(crate) async fn post_with(
    client: &reqwest::Client,
    upstream: &FakeUpstream,
    body: &Value,
) -> reqwest::Response {
    client
        .post(format!("{}/chat/completions", upstream.base_url()))
        .json(body)
        .send()
        .await
        .expect("request failed")
}

/// What a client saw of a streamed body.
#[derive(Debug, Default)]
pub(crate) struct Streamed {
    /// Raw body text received.
    pub raw: String,
    /// The body ended with a transport error (cut connection).
    pub errored: bool,
    /// Reading stopped because `limit` elapsed (stalled body).
    pub timed_out: bool,
}

impl Streamed {
    /// Payloads of the complete `data:` events, `[DONE]` included.
    pub(crate) fn data(&self) -> Vec<&str> {
        let complete = match self.raw.rfind("\n\n") {
            Some(i) => &self.raw[..i + 2],
            None => "",
        };
        complete
            .split("\n\n")
            .filter(|e| !e.is_empty())
            .map(|e| {
                e.strip_prefix("data: ")
                    .expect("every event is `data: ...`")
            })
            .collect()
    }

    /// JSON chunks (everything but `[DONE]`).
    pub(crate) fn chunks(&self) -> Vec<Value> {
        self.data()
            .into_iter()
            .filter(|d| *d != "[DONE]")
            .map(|d| serde_json::from_str(d).expect("chunk is JSON"))
            .collect()
    }

    pub(crate) fn ends_with_done(&self) -> bool {
        self.raw.ends_with("data: [DONE]\n\n")
    }
}

/// Reads a streamed body until it ends, errors, or `limit` elapses.
pub(crate) async fn read_stream(resp: reqwest::Response, limit: Duration) -> Streamed {
    let mut out = Streamed::default();
    let mut body = resp.bytes_stream();
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        match tokio::time::timeout_at(deadline, body.next()).await {
            Err(_) => {
                out.timed_out = true;
                break;
            }
            Ok(None) => break,
            Ok(Some(Err(_))) => {
                out.errored = true;
                break;
            }
            Ok(Some(Ok(bytes))) => out.raw.push_str(std::str::from_utf8(&bytes).unwrap()),
        }
    }
    out
}

/// Concatenated `delta.<field>` strings of all chunks.
pub(crate) fn joined_delta(chunks: &[Value], field: &str) -> String {
    chunks
        .iter()
        .filter_map(|c| c["choices"].get(0))
        .filter_map(|c| c["delta"][field].as_str())
        .collect()
}
