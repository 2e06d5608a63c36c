//! Non-streamed JSON bodies: `chat.completion` objects (error bodies are in
//! `error_body.rs`).

use serde_json::{json, Map, Value};

use crate::turn::Turn;

/// A choice's `logprobs`: each token at -0.5, with itself and `"~"` as the
/// top alternatives.
pub(crate) fn logprobs_json(tokens: &[&str]) -> Value {
    let content: Vec<Value> = tokens
        .iter()
        .map(|t| {
            json!({"token": t, "logprob": -0.5, "bytes": t.as_bytes(),
                   "top_logprobs": [{"token": t, "logprob": -0.5, "bytes": t.as_bytes()},
                                    {"token": "~", "logprob": -2.5, "bytes": [126]}]})
        })
        .collect();
    json!({ "content": content })
}

/// The full non-streamed `chat.completion` object for `turn`.
pub(crate) fn completion_body(turn: &Turn<'_>) -> Value {
    let reply = turn.reply;
    let mut message = Map::new();
    message.insert("role".into(), "assistant".into());
    message.insert(
        "content".into(),
        match &reply.content {
            Some(c) => Value::String(c.clone()),
            None if reply.tool_calls.is_empty() => Value::String(String::new()),
            None => Value::Null,
        },
    );
    if let Some(r) = &reply.reasoning {
        message.insert(reply.reasoning_field.clone(), Value::String(r.clone()));
    }
    if !reply.tool_calls.is_empty() {
        let calls = reply
            .tool_calls
            .iter()
            .zip(&turn.call_ids)
            .map(|(c, id)| {
                json!({
                    "id": id,
                    "type": "function",
                    "function": { "name": c.name, "arguments": c.arguments },
                })
            })
            .collect();
        message.insert("tool_calls".into(), Value::Array(calls));
    }
    let mut body = json!({
        "id": turn.id,
        "object": "chat.completion",
        "created": turn.created,
        "model": turn.model,
        "choices": [{
            "index": 0,
            "message": message,
            "logprobs": match (&reply.content, reply.logprobs) {
                (Some(c), true) => {
                    let tokens: Vec<&str> = crate::sse::pieces(c, reply.chunk_chars).collect();
                    logprobs_json(&tokens)
                }
                _ => Value::Null,
            },
            "finish_reason": turn.finish_reason(),
            "stop_reason": turn.reply.stop_sequence,
        }],
    });
    if let Some(u) = turn.usage {
        body["usage"] = u.to_json();
    }
    body
}
