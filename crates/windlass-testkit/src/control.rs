//! Scripting a [`FakeUpstream`] over HTTP, for tests written in other
//! languages (the OpenAI Python SDK checks): a JSON form of [`Reply`].

use std::time::Duration;

use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::reply::{Reply, ToolCallSpec};
use crate::upstream::FakeUpstream;

/// One scripted reply in JSON: `{"text": "..", "tool_calls": [{"name","arguments","id"}], ...}`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReplySpec {
    pub text: Option<String>,
    pub reasoning: Option<String>,
    #[serde(default)]
    pub tool_calls: Vec<ToolCallJson>,
    pub error: Option<ErrorJson>,
    pub chunk_chars: Option<usize>,
    pub usage: Option<(u64, u64)>,
    pub delay_ms: Option<u64>,
    pub first_byte_delay_ms: Option<u64>,
    pub finish_reason: Option<String>,
    /// The text ended at this stop sequence ([`Reply::stop_sequence`]).
    pub stop_sequence: Option<String>,
    /// The reasoning's signature ([`Reply::reasoning_signature`]).
    pub reasoning_signature: Option<String>,
    pub cut_after: Option<usize>,
    /// Append the last tool message's content to `text` ([`Reply::echo_tool_output`]).
    #[serde(default)]
    pub echo_tool_output: bool,
    /// Answer from each request instead ([`Reply::assistant`]); other
    /// fields are ignored.
    #[serde(default)]
    pub assistant: bool,
}

#[derive(Debug, Deserialize)]
pub struct ToolCallJson {
    pub name: String,
    pub arguments: String,
    pub id: Option<String>,
}

#[derive(Debug, Deserialize)]
pub struct ErrorJson {
    pub status: u16,
    pub message: String,
}

impl ReplySpec {
    pub fn into_reply(self) -> Reply {
        if self.assistant {
            return Reply::assistant();
        }
        if let Some(e) = self.error {
            return Reply::error(e.status, e.message);
        }
        let calls: Vec<ToolCallSpec> = self
            .tool_calls
            .into_iter()
            .map(|c| {
                let spec = ToolCallSpec::new(c.name, c.arguments);
                match c.id {
                    Some(id) => spec.id(id),
                    None => spec,
                }
            })
            .collect();
        let mut r = match (self.text, calls.is_empty()) {
            (Some(t), true) => Reply::text(t),
            (Some(t), false) => Reply::text_then_tools(t, calls),
            (None, false) => Reply::tool_calls(calls),
            (None, true) => Reply::text(""),
        };
        if let Some(t) = self.reasoning {
            r = r.reasoning(t);
        }
        if let Some(n) = self.chunk_chars {
            r = r.chunk_chars(n);
        }
        if let Some((p, c)) = self.usage {
            r = r.usage(p, c);
        }
        if let Some(ms) = self.delay_ms {
            r = r.delay_between_chunks(Duration::from_millis(ms));
        }
        if let Some(ms) = self.first_byte_delay_ms {
            r = r.first_byte_delay(Duration::from_millis(ms));
        }
        if let Some(f) = self.finish_reason {
            r = r.finish_reason(f);
        }
        if let Some(s) = self.stop_sequence {
            r = r.stop_sequence(s);
        }
        if let Some(s) = self.reasoning_signature {
            r = r.reasoning_signature(s);
        }
        if let Some(n) = self.cut_after {
            r = r.cut_after(n);
        }
        if self.echo_tool_output {
            r = r.echo_tool_output();
        }
        r
    }
}

/// `POST /replies` (a list of [`ReplySpec`], queued in order), `POST /default`
/// (one spec), `GET /requests` (bodies received), `GET /request_headers`
/// (each request's headers, as an object of lowercase names), `POST /reset`
/// (forget recorded requests).
pub fn control_router(upstream: FakeUpstream) -> Router {
    Router::new()
        .route("/replies", post(push_replies))
        .route("/default", post(set_default))
        .route("/requests", get(requests))
        .route("/request_headers", get(request_headers))
        .route("/reset", post(reset))
        .with_state(upstream)
}

async fn push_replies(
    State(up): State<FakeUpstream>,
    Json(specs): Json<Vec<ReplySpec>>,
) -> StatusCode {
    up.push_all(specs.into_iter().map(ReplySpec::into_reply));
    StatusCode::NO_CONTENT
}

async fn set_default(State(up): State<FakeUpstream>, Json(spec): Json<ReplySpec>) -> StatusCode {
    up.set_default(spec.into_reply());
    StatusCode::NO_CONTENT
}

async fn requests(State(up): State<FakeUpstream>) -> Json<Value> {
    Json(json!(up.requests()))
}

async fn request_headers(State(up): State<FakeUpstream>) -> Json<Value> {
    let all: Vec<Value> = up
        .recorded_requests()
        .iter()
        .map(|r| {
            let map: serde_json::Map<String, Value> = r
                .headers
                .iter()
                .filter_map(|(k, v)| Some((k.as_str().to_owned(), json!(v.to_str().ok()?))))
                .collect();
            Value::Object(map)
        })
        .collect();
    Json(Value::Array(all))
}

async fn reset(State(up): State<FakeUpstream>) -> StatusCode {
    up.clear_requests();
    StatusCode::NO_CONTENT
}
