use std::collections::VecDeque;

use serde_json::{json, Value};
use windlass_engine::{FinishReason, ModelEvent, ModelRequest, ProviderError};

use super::*;
use crate::codec::EventDecoder;

fn feed(events: &[Value]) -> (Vec<ModelEvent>, Result<(), ProviderError>) {
    let mut d = ResponsesDecoder::default();
    let mut out = VecDeque::new();
    let mut result = Ok(());
    for e in events {
        result = d.data(&e.to_string(), &mut out);
        if result.is_err() {
            break;
        }
    }
    (out.into(), result)
}

fn call(index: u32, id: Option<&str>, name: Option<&str>, args: &str) -> ModelEvent {
    ModelEvent::ToolCallDelta {
        index,
        id: id.map(Into::into),
        name: name.map(Into::into),
        arguments: args.into(),
    }
}

/// The event sequence OpenAI documents for a reasoning model calling a tool.
#[test]
fn streamed_reasoning_and_tool_call() {
    let (events, result) = feed(&[
        json!({"type": "response.created", "sequence_number": 0,
               "response": {"id": "resp_1", "status": "in_progress", "output": []}}),
        json!({"type": "response.output_item.added", "output_index": 0,
               "item": {"type": "reasoning", "id": "rs_1", "summary": []}}),
        json!({"type": "response.reasoning_summary_text.delta", "output_index": 0,
               "summary_index": 0, "delta": "Need the weather."}),
        json!({"type": "response.output_item.done", "output_index": 0,
               "item": {"type": "reasoning", "id": "rs_1", "encrypted_content": "gAAAA",
                        "summary": [{"type": "summary_text", "text": "Need the weather."}]}}),
        json!({"type": "response.output_item.added", "output_index": 1,
               "item": {"type": "function_call", "id": "fc_1", "call_id": "call_1",
                        "name": "get_weather", "arguments": "", "status": "in_progress"}}),
        json!({"type": "response.function_call_arguments.delta", "output_index": 1,
               "item_id": "fc_1", "delta": "{\"city\":"}),
        json!({"type": "response.function_call_arguments.delta", "output_index": 1,
               "item_id": "fc_1", "delta": "\"Paris\"}"}),
        json!({"type": "response.output_item.done", "output_index": 1,
               "item": {"type": "function_call", "id": "fc_1", "call_id": "call_1",
                        "name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}}),
        json!({"type": "response.completed", "response": {"id": "resp_1", "status": "completed",
               "usage": {"input_tokens": 50, "input_tokens_details": {"cached_tokens": 10},
                         "output_tokens": 20, "output_tokens_details": {"reasoning_tokens": 12},
                         "total_tokens": 70}}}),
    ]);
    assert_eq!(result, Ok(()));
    let usage = crate::ending::usage(50, 20, 10, 12);
    assert_eq!(
        events,
        [
            ModelEvent::ReasoningSummaryDelta {
                summary_index: 0,
                delta: "Need the weather.".into()
            },
            ModelEvent::ReasoningEncrypted("gAAAA".into()),
            call(0, Some("call_1"), Some("get_weather"), ""),
            call(0, None, None, "{\"city\":"),
            call(0, None, None, "\"Paris\"}"),
            ModelEvent::Usage(usage),
            ModelEvent::Finished(FinishReason::ToolCalls),
        ]
    );
}

#[test]
fn error_events_and_failed_responses_are_errors() {
    let (_, result) = feed(&[json!({"type": "error", "code": "server_error",
                                    "message": "overloaded", "sequence_number": 3})]);
    assert!(
        matches!(result, Err(ProviderError::Status { ref message, .. }) if message == "overloaded")
    );
    let (_, result) = feed(&[json!({"type": "response.failed", "response": {
        "status": "failed", "error": {"code": "server_error", "message": "boom"}}})]);
    assert!(matches!(result, Err(ProviderError::Status { ref message, .. }) if message == "boom"));
}

#[test]
fn a_whole_incomplete_response() {
    let body = json!({"id": "resp_2", "object": "response", "status": "incomplete",
        "incomplete_details": {"reason": "max_output_tokens"},
        "output": [{"type": "message", "id": "msg_1", "role": "assistant", "status": "incomplete",
                    "content": [{"type": "output_text", "text": "Once upon", "annotations": []}]}],
        "usage": {"input_tokens": 5, "output_tokens": 2, "total_tokens": 7}});
    let events = decode_response(body.to_string().as_bytes()).unwrap();
    assert_eq!(
        events,
        [
            ModelEvent::TextDelta("Once upon".into()),
            ModelEvent::Usage(crate::ending::usage(5, 2, 0, 0)),
            ModelEvent::Finished(FinishReason::Length),
        ]
    );
}

#[test]
fn the_turn_goes_up_stateless_without_windlass_ids() {
    let transcript: Vec<windlass_protocol::Item> = serde_json::from_value(json!([
        {"type": "message", "id": "msg_w1", "role": "user", "content": "hi", "status": "completed"},
        {"type": "reasoning", "id": "rs_w1", "summary": [],
         "content": [{"type": "reasoning_text", "text": "plain"}]},
        {"type": "reasoning", "id": "rs_w2", "summary": [], "encrypted_content": "gAAAA",
         "content": [{"type": "reasoning_text", "text": "sealed"}]},
        {"type": "function_call", "id": "fc_w1", "call_id": "c1", "name": "f", "arguments": "{}"},
        {"type": "function_call_output", "id": "fco_w1", "call_id": "c1", "output": "Error: x",
         "is_error": true},
    ]))
    .unwrap();
    let req = ModelRequest {
        model: "gpt-x".into(),
        transcript: transcript.into(),
        stream: true,
        ..ModelRequest::default()
    };
    let body: Value = serde_json::from_slice(&encode_responses(&req).unwrap()).unwrap();
    assert_eq!(body["store"], false);
    assert_eq!(body["stream"], true);
    assert_eq!(
        body["input"],
        json!([
            {"type": "message", "role": "user", "content": "hi"},
            {"type": "reasoning", "summary": [], "encrypted_content": "gAAAA"},
            {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": "Error: x"},
        ])
    );
    assert!(body.get("tools").is_none() && body.get("tool_choice").is_none());
}

#[test]
fn streamed_text_keeps_its_logprobs_and_summary_parts_their_index() {
    let (events, result) = feed(&[
        json!({"type": "response.reasoning_summary_text.delta", "output_index": 0,
               "summary_index": 0, "delta": "First."}),
        json!({"type": "response.reasoning_summary_text.delta", "output_index": 0,
               "summary_index": 1, "delta": "Second."}),
        json!({"type": "response.output_text.delta", "output_index": 1, "content_index": 0,
               "delta": "Hi", "logprobs": [{"token": "Hi", "logprob": -0.5,
               "top_logprobs": [{"token": "Hi", "logprob": -0.5}, {"token": "Yo", "logprob": -1.5}]}]}),
        json!({"type": "response.output_text.delta", "output_index": 1, "content_index": 0,
               "delta": "!", "logprobs": []}),
        json!({"type": "response.completed", "response": {"status": "completed"}}),
    ]);
    assert_eq!(result, Ok(()));
    let summary = |i: u32, d: &str| ModelEvent::ReasoningSummaryDelta {
        summary_index: i,
        delta: d.into(),
    };
    assert_eq!(events[0], summary(0, "First."));
    assert_eq!(events[1], summary(1, "Second."));
    let ModelEvent::TextDeltaLogprobs { delta, logprobs } = &events[2] else {
        panic!("{:?}", events[2]);
    };
    assert_eq!(delta, "Hi");
    assert_eq!(logprobs[0].token, "Hi");
    assert_eq!(logprobs[0].bytes, b"Hi".to_vec());
    assert_eq!(logprobs[0].top_logprobs[1].token, "Yo");
    assert_eq!(logprobs[0].top_logprobs[1].logprob, -1.5);
    assert_eq!(events[3], ModelEvent::TextDelta("!".into()));
}

#[test]
fn a_whole_response_gives_summaries_and_logprobs_too() {
    let body = json!({"status": "completed", "output": [
        {"type": "reasoning", "summary": [{"type": "summary_text", "text": "Plan."}]},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text",
          "text": "Ok", "annotations": [],
          "logprobs": [{"token": "Ok", "logprob": -0.1, "bytes": [79, 107], "top_logprobs": []}]}]}
    ]});
    let events = decode_response(body.to_string().as_bytes()).expect("decodes");
    assert_eq!(
        events[0],
        ModelEvent::ReasoningSummaryDelta {
            summary_index: 0,
            delta: "Plan.".into()
        }
    );
    assert!(
        matches!(&events[1], ModelEvent::TextDeltaLogprobs { delta, logprobs }
            if delta == "Ok" && logprobs[0].logprob == -0.1 && logprobs[0].bytes == [79, 107]),
        "{events:?}"
    );
}

#[test]
fn stop_sequences_and_top_k_are_refused_by_name() {
    for (stop, top_k, param) in [
        (vec!["END".to_owned()], None, "stop"),
        (Vec::new(), Some(3), "top_k"),
    ] {
        let req = ModelRequest {
            model: "m".into(),
            transcript: vec![windlass_protocol::Item::user_text("hi")].into(),
            stop,
            top_k,
            ..ModelRequest::default()
        };
        match ResponsesWire.check(&req) {
            Err(ProviderError::Unsupported { param: p, message }) => {
                assert_eq!(p.as_deref(), Some(param));
                assert!(message.contains("Responses upstream"), "{message}");
            }
            other => panic!("{param}: {other:?}"),
        }
    }
}
