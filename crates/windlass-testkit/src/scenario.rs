//! Loop scenarios (seed 000, the agentic loop): run a request as JSON or as
//! SSE with the same checks, and read what the upstream received. With the
//! output readers and the probe executor, everything a scenario test uses
//! is one `use windlass_testkit::scenario::*`.

use serde_json::{json, Value};

pub use crate::check::{final_text, output, output_types, outputs_of, TWO_CALLS_THEN_ANSWER};
use crate::gateway::Gateway;
pub use crate::probe::{Probe, ProbeEnd, ProbeEndKind};
use crate::sse_check::SseCapture;

/// The two surfaces every scenario is checked on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Json,
    Sse,
}

pub const MODES: [Mode; 2] = [Mode::Json, Mode::Sse];

/// A `{"type":"function"}` tool of the request.
pub fn func(name: &str) -> Value {
    json!({
        "type": "function",
        "name": name,
        "description": format!("the {name} tool"),
        "parameters": {"type": "object", "properties": {}},
    })
}

pub fn funcs(names: &[&str]) -> Value {
    Value::Array(names.iter().map(|n| func(n)).collect())
}

/// What a client got back for one create request.
pub struct Run {
    /// The JSON body, or the response of the SSE terminal event.
    pub resp: Value,
    /// The whole stream (SSE mode only).
    pub sse: Option<SseCapture>,
}

impl Run {
    pub fn status(&self) -> &str {
        self.resp["status"].as_str().unwrap_or_default()
    }

    pub fn id(&self) -> String {
        self.resp["id"].as_str().expect("response id").to_owned()
    }

    /// The SSE terminal event's type (`None` in JSON mode).
    pub fn terminal(&self) -> Option<String> {
        self.sse.as_ref().map(terminal)
    }
}

/// `POST /v1/responses` as JSON or as SSE. Checks the call succeeded, the
/// stream grammar (SSE), the lifecycle events (created / in_progress once,
/// nothing else but the one terminal event), and that the stored response
/// equals what the client got.
pub async fn create(gw: &Gateway, mode: Mode, body: &Value) -> Run {
    match mode {
        Mode::Json => {
            let (status, r) = gw.post_json("/v1/responses", body).await;
            assert_eq!(status, 200, "JSON create failed: {r}");
            assert_stored_equals(gw, &r).await;
            Run { resp: r, sse: None }
        }
        Mode::Sse => {
            let cap = gw.stream(body).await;
            let fin = check_stream(gw, &cap).await;
            Run {
                resp: fin,
                sse: Some(cap),
            }
        }
    }
}

/// Strict checks of one stream; returns the terminal response.
pub async fn check_stream(gw: &Gateway, cap: &SseCapture) -> Value {
    cap.assert_well_formed();
    let life = lifecycle(cap);
    assert_eq!(
        life.len(),
        3,
        "lifecycle events must be created, in_progress and one terminal (FR-023..025): {life:?}"
    );
    assert_eq!(life[0], "response.created");
    assert_eq!(life[1], "response.in_progress");
    let fin = cap.final_response().clone();
    assert_stored_equals(gw, &fin).await;
    fin
}

/// `GET /v1/responses/{id}` returns exactly `resp`.
pub async fn assert_stored_equals(gw: &Gateway, resp: &Value) {
    let id = resp["id"].as_str().expect("response id");
    let (s, got) = gw.get_json(&format!("/v1/responses/{id}")).await;
    assert_eq!(s, 200, "GET {id}: {got}");
    assert_eq!(
        &got, resp,
        "stored response differs from what the client got"
    );
}

/// Response lifecycle events (`response.created`, ..., terminal), in order.
pub fn lifecycle(cap: &SseCapture) -> Vec<String> {
    const LIFE: [&str; 8] = [
        "response.created",
        "response.in_progress",
        "response.queued",
        "response.completed",
        "response.failed",
        "response.incomplete",
        "response.cancelled",
        "response.requires_action",
    ];
    cap.types()
        .into_iter()
        .filter(|t| LIFE.contains(t))
        .map(str::to_owned)
        .collect()
}

pub fn terminal(cap: &SseCapture) -> String {
    cap.types().last().expect("events").to_string()
}

/// `added:<item type>` / `done:<item type>` for every output item event.
pub fn item_events(cap: &SseCapture) -> Vec<String> {
    cap.events
        .iter()
        .filter_map(|(name, d)| {
            let kind = match name.as_str() {
                "response.output_item.added" => "added",
                "response.output_item.done" => "done",
                _ => return None,
            };
            Some(format!(
                "{kind}:{}",
                d["item"]["type"].as_str().unwrap_or("?")
            ))
        })
        .collect()
}

/// `messages` of an upstream chat-completions request.
pub fn messages(req: &Value) -> Vec<Value> {
    req["messages"].as_array().cloned().unwrap_or_default()
}

pub fn roles(req: &Value) -> Vec<String> {
    messages(req)
        .iter()
        .map(|m| m["role"].as_str().unwrap_or("?").to_owned())
        .collect()
}

/// `(tool_call_id, content)` of every `role: tool` message, in order.
pub fn tool_messages(req: &Value) -> Vec<(String, String)> {
    messages(req)
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| {
            (
                m["tool_call_id"].as_str().unwrap_or("?").to_owned(),
                m["content"].as_str().unwrap_or("?").to_owned(),
            )
        })
        .collect()
}

/// `(id, name, arguments)` of every tool call in the assistant messages.
pub fn assistant_calls(req: &Value) -> Vec<(String, String, String)> {
    messages(req)
        .iter()
        .filter(|m| m["role"] == "assistant")
        .flat_map(|m| m["tool_calls"].as_array().cloned().unwrap_or_default())
        .map(|c| {
            (
                c["id"].as_str().unwrap_or("?").to_owned(),
                c["function"]["name"].as_str().unwrap_or("?").to_owned(),
                c["function"]["arguments"]
                    .as_str()
                    .unwrap_or("?")
                    .to_owned(),
            )
        })
        .collect()
}

/// Names of the tools sent upstream.
pub fn upstream_tool_names(req: &Value) -> Vec<String> {
    req["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| t["function"]["name"].as_str().unwrap_or("?").to_owned())
        .collect()
}
