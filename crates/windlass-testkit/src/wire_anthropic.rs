//! Anthropic's Messages API wire (`POST /v1/messages`) for a [`Turn`]: the
//! `message` object, and its streamed events as Anthropic documents them
//! (`message_start`, `ping`, `content_block_start` / `_delta` / `_stop`,
//! `message_delta`, `message_stop`).

use serde_json::{json, Value};

use crate::event_frames::EventFrames;
use crate::sse::{pieces, Frames};
use crate::turn::Turn;

fn stop_reason(turn: &Turn<'_>) -> String {
    if turn.reply.stop_sequence.is_some() {
        return "stop_sequence".into();
    }
    match turn.finish_reason() {
        "stop" => "end_turn".into(),
        "tool_calls" => "tool_use".into(),
        "length" => "max_tokens".into(),
        "content_filter" => "refusal".into(),
        other => other.into(),
    }
}

/// Anthropic counts cache reads apart from `input_tokens`.
fn usage(turn: &Turn<'_>, output: bool) -> Value {
    let u = turn.usage.unwrap_or(crate::turn::UsageNumbers {
        prompt: 0,
        completion: 0,
        cached: 0,
        reasoning: 0,
    });
    json!({
        "input_tokens": u.prompt.saturating_sub(u.cached),
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": u.cached,
        "output_tokens": if output { u.completion } else { 1 },
    })
}

/// The finished content blocks.
fn blocks(turn: &Turn<'_>) -> Vec<Value> {
    let reply = turn.reply;
    let mut out = Vec::new();
    if let Some(r) = &reply.reasoning {
        out.push(json!({"type": "thinking", "thinking": r,
                        "signature": reply.reasoning_signature.clone().unwrap_or_default()}));
    }
    if let Some(c) = &reply.content {
        out.push(json!({"type": "text", "text": c}));
    }
    for (call, id) in reply.tool_calls.iter().zip(&turn.call_ids) {
        let input: Value = serde_json::from_str(&call.arguments).unwrap_or_else(|_| json!({}));
        out.push(json!({"type": "tool_use", "id": id, "name": call.name, "input": input}));
    }
    out
}

fn message(turn: &Turn<'_>, finished: bool) -> Value {
    json!({
        "id": turn.id, "type": "message", "role": "assistant", "model": turn.model,
        "content": if finished { blocks(turn) } else { Vec::new() },
        "stop_reason": if finished { json!(stop_reason(turn)) } else { Value::Null },
        "stop_sequence": if finished { json!(turn.reply.stop_sequence) } else { Value::Null },
        "usage": usage(turn, finished),
    })
}

/// The non-streamed body.
pub(crate) fn message_body(turn: &Turn<'_>) -> Value {
    message(turn, true)
}

/// Anthropic's error object for an OpenAI-shaped scripted error body.
pub(crate) fn error_body(status: u16, openai_body: &str) -> String {
    let message = serde_json::from_str::<Value>(openai_body)
        .ok()
        .and_then(|v| {
            v.pointer("/error/message")
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .unwrap_or_else(|| openai_body.to_owned());
    let kind = match status {
        400 | 422 => "invalid_request_error",
        401 => "authentication_error",
        403 => "permission_error",
        404 => "not_found_error",
        429 => "rate_limit_error",
        529 => "overloaded_error",
        _ => "api_error",
    };
    json!({"type": "error", "error": {"type": kind, "message": message}}).to_string()
}

/// The streamed events.
pub(crate) fn encode(turn: &Turn<'_>) -> Frames {
    let n = turn.reply.chunk_chars;
    let mut f = EventFrames::default();
    // A model streams its own argument text, not a re-serialization.
    let mut raw_arguments = turn.reply.tool_calls.iter().map(|c| c.arguments.as_str());
    f.push(&json!({"type": "message_start", "message": message(turn, false)}));
    f.push(&json!({"type": "ping"}));
    for (index, block) in blocks(turn).into_iter().enumerate() {
        let kind = block["type"].as_str().unwrap_or_default().to_owned();
        let (start, deltas): (Value, Vec<Value>) = match kind.as_str() {
            "thinking" => {
                let text = block["thinking"].as_str().unwrap_or_default();
                let mut d: Vec<Value> = pieces(text, n)
                    .map(|p| json!({"type": "thinking_delta", "thinking": p}))
                    .collect();
                d.push(json!({"type": "signature_delta", "signature": block["signature"]}));
                (
                    json!({"type": "thinking", "thinking": "", "signature": ""}),
                    d,
                )
            }
            "text" => {
                let text = block["text"].as_str().unwrap_or_default();
                let d = pieces(text, n)
                    .map(|p| json!({"type": "text_delta", "text": p}))
                    .collect();
                (json!({"type": "text", "text": ""}), d)
            }
            _ => {
                let arguments = raw_arguments.next().unwrap_or("{}");
                let d = pieces(arguments, n)
                    .map(|p| json!({"type": "input_json_delta", "partial_json": p}))
                    .collect();
                let mut start = block.clone();
                start["input"] = json!({});
                (start, d)
            }
        };
        f.push(&json!({"type": "content_block_start", "index": index, "content_block": start}));
        for delta in deltas {
            f.push(&json!({"type": "content_block_delta", "index": index, "delta": delta}));
        }
        f.push(&json!({"type": "content_block_stop", "index": index}));
    }
    f.push(&json!({"type": "message_delta",
                   "delta": {"stop_reason": stop_reason(turn),
                             "stop_sequence": turn.reply.stop_sequence},
                   "usage": {"output_tokens": turn.usage.map_or(0, |u| u.completion)}}));
    f.push(&json!({"type": "message_stop"}));
    f.finish(
        &turn.reply.end,
        |message| json!({"type": "error", "error": {"type": "api_error", "message": message}}),
    )
}
