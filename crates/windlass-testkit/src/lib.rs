//! # windlass-testkit
//!
//! Layer: dev only (tests and benchmarks); no product crate depends on it.
//!
//! A scripted fake OpenAI-compatible upstream: a real HTTP server on a random
//! loopback port that stands in for vLLM / llama.cpp / OpenAI in integration
//! tests and benchmarks.
//!
//! * `POST /v1/chat/completions` pops the next scripted [`Reply`] (FIFO; a
//!   default reply when the queue is empty) and answers it streamed (SSE,
//!   `chat.completion.chunk` objects then `data: [DONE]`) when the request
//!   has `"stream": true`, or as one `chat.completion` JSON object otherwise.
//!   Every request is recorded before the reply starts.
//! * `POST /v1/responses` (OpenAI Responses API) and `POST /v1/messages`
//!   (Anthropic Messages API) answer the same scripted replies in those
//!   vendors' documented wire formats, streamed events included, so one
//!   script drives every upstream kind.
//! * `GET /v1/models` lists the ids set with [`FakeUpstream::set_models`].
//! * `GET /health` answers 200.
//!
//! Replies can mimic the failure modes of real servers: slow first byte,
//! slow tokens, stalls before or during the stream, connections cut mid-stream,
//! HTTP errors and in-stream error events. Streams abandoned by the client are
//! counted ([`FakeUpstream::disconnects`]).
//!
//! ```
//! use std::time::Duration;
//! use windlass_testkit::{FakeUpstream, Reply, ToolCallSpec};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let upstream = FakeUpstream::start().await;
//! upstream.push(Reply::text("Hello there").reasoning("Greet them").usage(12, 3));
//! upstream.push(Reply::tool_calls(vec![
//!     ToolCallSpec::new("get_weather", r#"{"city":"Paris"}"#),
//!     ToolCallSpec::new("get_time", "{}").id("call_x"),
//! ]));
//! upstream.push(
//!     Reply::text("slow and broken")
//!         .first_byte_delay(Duration::from_millis(5))
//!         .delay_between_chunks(Duration::from_millis(1))
//!         .cut_after(3),
//! );
//!
//! let client = reqwest::Client::new();
//! let url = format!("{}/chat/completions", upstream.base_url());
//! let body: serde_json::Value = client
//!     .post(&url)
//!     .json(&serde_json::json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]}))
//!     .send()
//!     .await
//!     .unwrap()
//!     .json()
//!     .await
//!     .unwrap();
//! assert_eq!(body["choices"][0]["message"]["content"], "Hello there");
//! assert_eq!(body["usage"]["total_tokens"], 15);
//! assert_eq!(upstream.last_request().unwrap()["model"], "m");
//! # }
//! ```
//!
//! Besides the upstream, what the integration tests share:
//! [`Gateway`] (a real Windlass server in process), [`check`] (the error
//! shape, output readers), [`db`] (the SQLite file as an operator reads
//! it), [`live`] (streams read while they run), [`scenario`] (loop runs as
//! JSON and SSE, what the upstream received), [`probe`] (an executor that
//! reports how calls ended) and [`tenants`] (keys of several tenants).

// Test support, never product code: a fixture that cannot start panics, which
// fails the test that uses it with the reason.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod assistant;
pub mod check;
mod completion;
pub mod control;
pub mod db;
mod error_body;
mod event_frames;
mod gateway;
pub mod http;
pub mod live;
pub mod mcp;
pub mod messages;
mod mock_executor;
pub mod probe;
mod pump;
mod reply;
pub mod scenario;
pub mod search_backend;
mod server;
mod sse;
mod sse_check;
mod state;
pub mod tenants;
mod turn;
mod upstream;
mod wire_anthropic;
mod wire_responses;

pub use gateway::{Gateway, GatewayOptions};
pub use mcp::{everything_stdio_command, python_stdio_command, McpFixture, PyMcp};
pub use mock_executor::{MockBehavior, MockExecutor};
pub use reply::{Reply, ToolCallSpec, DEFAULT_CHUNK_CHARS};
pub use sse_check::SseCapture;
pub use state::RecordedRequest;
pub use upstream::FakeUpstream;
