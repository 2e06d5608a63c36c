use std::collections::VecDeque;

use serde_json::{json, Value};
use windlass_engine::{FinishReason, ModelEvent, ModelRequest, ModelTool, ModelToolChoice};
use windlass_protocol::anthropic::REDACTED_THINKING_PREFIX as REDACTED_PREFIX;
use windlass_protocol::{Item, ReasoningEffort};

use super::*;
use crate::codec::EventDecoder;

fn feed(events: &[Value]) -> Vec<ModelEvent> {
    let mut d = AnthropicDecoder::default();
    let mut out = VecDeque::new();
    for e in events {
        d.data(&e.to_string(), &mut out).unwrap();
    }
    assert!(d.is_done());
    out.into()
}

/// The event sequence Anthropic documents for extended thinking then a
/// tool call, with prompt caching.
#[test]
fn streamed_thinking_text_and_tool_use() {
    let events = feed(&[
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message",
               "role": "assistant", "content": [], "model": "claude-sonnet-4-5",
               "stop_reason": null, "usage": {"input_tokens": 25, "cache_creation_input_tokens": 0,
               "cache_read_input_tokens": 5, "output_tokens": 1}}}),
        json!({"type": "ping"}),
        json!({"type": "content_block_start", "index": 0,
               "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
        json!({"type": "content_block_delta", "index": 0,
               "delta": {"type": "thinking_delta", "thinking": "Check the weather."}}),
        json!({"type": "content_block_delta", "index": 0,
               "delta": {"type": "signature_delta", "signature": "EqQBCgIYAh"}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "content_block_start", "index": 1,
               "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 1,
               "delta": {"type": "text_delta", "text": "Let me look."}}),
        json!({"type": "content_block_stop", "index": 1}),
        json!({"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use",
               "id": "toolu_1", "name": "get_weather", "input": {}}}),
        json!({"type": "content_block_delta", "index": 2,
               "delta": {"type": "input_json_delta", "partial_json": "{\"city\": \"Paris\"}"}}),
        json!({"type": "content_block_stop", "index": 2}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null},
               "usage": {"output_tokens": 15}}),
        json!({"type": "message_stop"}),
    ]);
    assert_eq!(
        events,
        [
            ModelEvent::ReasoningDelta("Check the weather.".into()),
            ModelEvent::ReasoningEncrypted("EqQBCgIYAh".into()),
            ModelEvent::TextDelta("Let me look.".into()),
            ModelEvent::ToolCallDelta {
                index: 0,
                id: Some("toolu_1".into()),
                name: Some("get_weather".into()),
                arguments: String::new()
            },
            ModelEvent::ToolCallDelta {
                index: 0,
                id: None,
                name: None,
                arguments: "{\"city\": \"Paris\"}".into()
            },
            ModelEvent::Usage(crate::ending::usage(30, 15, 5, 0)),
            ModelEvent::Finished(FinishReason::ToolCalls),
        ]
    );
}

#[test]
fn a_whole_message_cut_by_max_tokens_and_errors() {
    let body = json!({"id": "msg_2", "type": "message", "role": "assistant",
        "content": [{"type": "redacted_thinking", "data": "EmwKAhgB"},
                    {"type": "text", "text": "Once upon"}],
        "stop_reason": "max_tokens", "usage": {"input_tokens": 7, "output_tokens": 2}});
    let events = decode_message(body.to_string().as_bytes()).unwrap();
    assert_eq!(
        events,
        [
            ModelEvent::ReasoningEncrypted(format!("{REDACTED_PREFIX}EmwKAhgB")),
            ModelEvent::TextDelta("Once upon".into()),
            ModelEvent::Usage(crate::ending::usage(7, 2, 0, 0)),
            ModelEvent::Finished(FinishReason::Length),
        ]
    );
    let err =
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}});
    let e = decode_message(err.to_string().as_bytes()).unwrap_err();
    assert!(
        matches!(e, windlass_engine::ProviderError::Status { status: 529, ref message, .. } if message == "Overloaded"),
        "{e:?}"
    );
}

#[test]
fn the_transcript_becomes_alternating_messages() {
    let transcript: Vec<Item> = serde_json::from_value(json!([
        {"type": "message", "role": "developer", "content": "Be brief."},
        {"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "What is this?"},
            {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo="}]},
        {"type": "reasoning", "summary": [], "encrypted_content": "sig-1",
         "content": [{"type": "reasoning_text", "text": "Look first."}]},
        {"type": "function_call", "call_id": "toolu_a", "name": "zoom", "arguments": "{\"x\":1}"},
        {"type": "function_call", "call_id": "toolu_b", "name": "zoom", "arguments": "{\"x\":2}"},
        {"type": "function_call_output", "call_id": "toolu_a", "output": "a cat"},
        {"type": "function_call_output", "call_id": "toolu_b", "output": "Error: blurry",
         "is_error": true},
    ]))
    .unwrap();
    let req = ModelRequest {
        model: "claude".into(),
        instructions: Some("You are helpful.".into()),
        transcript: transcript.into(),
        tools: vec![ModelTool {
            name: "zoom".into(),
            description: None,
            parameters: json!({"type": "object"}),
            strict: None,
        }]
        .into(),
        tool_choice: ModelToolChoice::Required,
        parallel_tool_calls: Some(false),
        reasoning_effort: Some(ReasoningEffort::Low),
        ..ModelRequest::default()
    };
    let body: Value = serde_json::from_slice(&encode_messages_request(&req).unwrap()).unwrap();
    assert_eq!(body["system"], "You are helpful.\n\nBe brief.");
    assert_eq!(body["max_tokens"], 8192 + 1024);
    assert_eq!(
        body["thinking"],
        json!({"type": "enabled", "budget_tokens": 1024})
    );
    assert_eq!(
        body["tool_choice"],
        json!({"type": "any", "disable_parallel_tool_use": true})
    );
    assert_eq!(body["tools"][0]["input_schema"], json!({"type": "object"}));
    let messages = body["messages"].as_array().unwrap();
    let shape: Vec<(String, Vec<String>)> = messages
        .iter()
        .map(|m| {
            let types = m["content"].as_array().unwrap();
            (
                m["role"].as_str().unwrap().to_owned(),
                types
                    .iter()
                    .map(|b| b["type"].as_str().unwrap().to_owned())
                    .collect(),
            )
        })
        .collect();
    let owned = |r: &str, t: &[&str]| (r.to_owned(), t.iter().map(|s| s.to_string()).collect());
    assert_eq!(
        shape,
        [
            owned("user", &["text", "image"]),
            owned("assistant", &["thinking", "tool_use", "tool_use"]),
            owned("user", &["tool_result", "tool_result"]),
        ]
    );
    assert_eq!(
        messages[0]["content"][1]["source"],
        json!({"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="})
    );
    assert_eq!(
        messages[1]["content"][0],
        json!({"type": "thinking", "thinking": "Look first.", "signature": "sig-1"})
    );
    assert_eq!(messages[1]["content"][1]["input"], json!({"x": 1}));
    assert_eq!(messages[2]["content"][1]["is_error"], true);
    assert_eq!(
        messages[2]["content"][1]["content"][0]["text"],
        "Error: blurry"
    );
}

#[test]
fn json_output_formats_are_refused_before_anything_runs() {
    let req: ModelRequest = ModelRequest {
        text_format: Some(serde_json::from_value(json!({"type": "json_object"})).unwrap()),
        ..ModelRequest::default()
    };
    let e = AnthropicWire.check(&req).unwrap_err();
    assert!(
        matches!(e, windlass_engine::ProviderError::Unsupported { ref param, .. } if param.as_deref() == Some("text.format")),
        "{e:?}"
    );
}

#[test]
fn stop_sequences_go_up_and_the_matched_one_comes_back() {
    let req = ModelRequest {
        model: "claude".into(),
        transcript: vec![Item::user_text("count")].into(),
        stop: vec!["END".into()],
        top_k: Some(5),
        ..ModelRequest::default()
    };
    let body: Value = serde_json::from_slice(&encode_messages_request(&req).unwrap()).unwrap();
    assert_eq!(body["stop_sequences"], json!(["END"]));
    assert_eq!(body["top_k"], 5);
    let plain = ModelRequest {
        stop: Vec::new(),
        top_k: None,
        ..req
    };
    let body: Value = serde_json::from_slice(&encode_messages_request(&plain).unwrap()).unwrap();
    assert!(body.get("stop_sequences").is_none() && body.get("top_k").is_none());

    let events = feed(&[
        json!({"type": "message_start", "message": {"usage": {"input_tokens": 3, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": "1 2 3 "}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "stop_sequence", "stop_sequence": "END"},
               "usage": {"output_tokens": 4}}),
        json!({"type": "message_stop"}),
    ]);
    assert_eq!(
        events.last(),
        Some(&ModelEvent::Finished(FinishReason::StopSequence(
            "END".into()
        )))
    );
    let whole = json!({"content": [{"type": "text", "text": "1 2"}], "stop_reason": "stop_sequence",
                       "stop_sequence": "END", "usage": {"input_tokens": 1, "output_tokens": 1}});
    let events = decode_message(whole.to_string().as_bytes()).unwrap();
    assert_eq!(
        events.last(),
        Some(&ModelEvent::Finished(FinishReason::StopSequence(
            "END".into()
        )))
    );
}
