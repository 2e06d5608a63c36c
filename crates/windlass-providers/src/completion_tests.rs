//! `decode_completion`: non-streamed bodies.

use windlass_engine::{FinishReason, ModelEvent, ProviderError};
use windlass_protocol::{InputTokensDetails, OutputTokensDetails, Usage};

use super::*;

fn usage() -> Usage {
    Usage {
        input_tokens: 10,
        output_tokens: 5,
        total_tokens: 15,
        input_tokens_details: InputTokensDetails { cached_tokens: 4 },
        output_tokens_details: OutputTokensDetails {
            reasoning_tokens: 2,
        },
    }
}

#[test]
fn completion_body_with_tool_calls() {
    let body = br#"{"id":"c","object":"chat.completion","choices":[{"index":0,"finish_reason":"tool_calls",
        "message":{"role":"assistant","content":"Checking.","reasoning_content":"need data",
        "tool_calls":[{"id":"call_1","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Paris\"}"}},
                      {"id":"call_2","type":"function","function":{"name":"time","arguments":{"tz":"UTC"}}}]}}],
        "usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15,"prompt_tokens_details":{"cached_tokens":4},"completion_tokens_details":{"reasoning_tokens":2}}}"#;
    assert_eq!(
        decode_completion(body).expect("decodes"),
        vec![
            ModelEvent::ReasoningDelta("need data".into()),
            ModelEvent::TextDelta("Checking.".into()),
            ModelEvent::ToolCallDelta {
                index: 0,
                id: Some("call_1".into()),
                name: Some("weather".into()),
                arguments: "{\"city\":\"Paris\"}".into()
            },
            ModelEvent::ToolCallDelta {
                index: 1,
                id: Some("call_2".into()),
                name: Some("time".into()),
                arguments: "{\"tz\":\"UTC\"}".into()
            },
            ModelEvent::Usage(usage()),
            ModelEvent::Finished(FinishReason::ToolCalls),
        ]
    );
}

#[test]
fn completion_body_text_and_missing_usage_details() {
    let body = br#"{"choices":[{"index":0,"finish_reason":"length","message":{"role":"assistant","content":"hi","refusal":null}}],
        "usage":{"prompt_tokens":3,"completion_tokens":2}}"#;
    assert_eq!(
        decode_completion(body).expect("decodes"),
        vec![
            ModelEvent::TextDelta("hi".into()),
            ModelEvent::Usage(Usage {
                input_tokens: 3,
                output_tokens: 2,
                total_tokens: 5,
                ..Usage::default()
            }),
            ModelEvent::Finished(FinishReason::Length),
        ]
    );
}

#[test]
fn completion_body_errors() {
    assert!(matches!(
        decode_completion(br#"{"error":{"message":"boom","code":503}}"#),
        Err(ProviderError::Status { status: 503, .. })
    ));
    assert!(matches!(
        decode_completion(br#"{"choices":[]}"#),
        Err(ProviderError::Protocol(_))
    ));
    assert!(matches!(
        decode_completion(b"<html>"),
        Err(ProviderError::Protocol(_))
    ));
}
