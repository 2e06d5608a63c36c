use std::collections::VecDeque;

use serde_json::json;

use windlass_engine::{FinishReason, ModelEvent, ProviderError};
use windlass_protocol::{InputTokensDetails, OutputTokensDetails, Usage};

use super::*;
use crate::sse::SseParser;

/// Runs an SSE body (in the given chunks) through parser and decoder the
/// way the pump does.
fn run(chunks: &[&[u8]]) -> Vec<Result<ModelEvent, ProviderError>> {
    let mut parser = SseParser::new();
    let mut dec = StreamDecoder::new();
    let mut out = VecDeque::new();
    let mut result = Vec::new();
    let mut failed = None;
    for c in chunks {
        if let Err(e) = parser.feed(c, |d| dec.data(d, &mut out)) {
            failed = Some(e);
            break;
        }
    }
    if failed.is_none() && !dec.is_done() {
        failed = parser
            .finish(|d| dec.data(d, &mut out))
            .and_then(|()| dec.end_of_body(&mut out))
            .err();
    }
    result.extend(out.into_iter().map(Ok));
    result.extend(failed.map(Err));
    result
}

fn run_str(body: &str) -> Vec<Result<ModelEvent, ProviderError>> {
    run(&[body.as_bytes()])
}

fn data(json: &str) -> String {
    format!("data: {json}\n\n")
}

fn delta(d: &str) -> String {
    data(&format!(
        r#"{{"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{{"index":0,"delta":{d},"finish_reason":null}}]}}"#
    ))
}

fn finish(reason: &str) -> String {
    data(&format!(
        r#"{{"choices":[{{"index":0,"delta":{{}},"finish_reason":"{reason}"}}]}}"#
    ))
}

const USAGE: &str = r#"{"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15,"prompt_tokens_details":{"cached_tokens":4},"completion_tokens_details":{"reasoning_tokens":2}}}"#;

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

const DONE: &str = "data: [DONE]\n\n";

fn text(t: &str) -> Result<ModelEvent, ProviderError> {
    Ok(ModelEvent::TextDelta(t.into()))
}

fn finished(r: FinishReason) -> Result<ModelEvent, ProviderError> {
    Ok(ModelEvent::Finished(r))
}

fn sample_stream() -> String {
    [
        delta(r#"{"role":"assistant","content":""}"#),
        delta(r#"{"reasoning_content":"think"}"#),
        delta(r#"{"reasoning":"ing"}"#),
        delta(r#"{"content":"Hel"}"#),
        ": keep-alive\r\n\r\n".into(),
        delta(r#"{"content":"lo \"w\" \u00e9\n"}"#),
        delta(r#"{"refusal":"no"}"#),
        finish("stop"),
        data(USAGE),
        DONE.into(),
    ]
    .concat()
}

fn sample_events() -> Vec<Result<ModelEvent, ProviderError>> {
    vec![
        Ok(ModelEvent::ReasoningDelta("think".into())),
        Ok(ModelEvent::ReasoningDelta("ing".into())),
        text("Hel"),
        text("lo \"w\" é\n"),
        Ok(ModelEvent::RefusalDelta("no".into())),
        Ok(ModelEvent::Usage(usage())),
        finished(FinishReason::Stop),
    ]
}

#[test]
fn decodes_a_stream_with_usage_after_finish() {
    assert_eq!(run_str(&sample_stream()), sample_events());
}

#[test]
fn every_split_point_gives_the_same_events() {
    let body = sample_stream();
    let bytes = body.as_bytes();
    for cut in 0..=bytes.len() {
        let (a, b) = bytes.split_at(cut);
        assert_eq!(run(&[a, b]), sample_events(), "cut at {cut}");
    }
}

#[test]
fn crlf_stream() {
    let body = sample_stream().replace('\n', "\r\n");
    assert_eq!(run_str(&body), sample_events());
}

#[test]
fn both_reasoning_fields_in_one_delta_count_once() {
    let body = [
        delta(r#"{"reasoning_content":"r","reasoning":"r"}"#),
        finish("stop"),
        DONE.into(),
    ]
    .concat();
    assert_eq!(
        run_str(&body),
        vec![
            Ok(ModelEvent::ReasoningDelta("r".into())),
            finished(FinishReason::Stop)
        ]
    );
}

#[test]
fn data_after_done_is_ignored() {
    let body = [
        finish("length"),
        DONE.into(),
        delta(r#"{"content":"late"}"#),
    ]
    .concat();
    assert_eq!(run_str(&body), vec![finished(FinishReason::Length)]);
}

#[test]
fn finish_reasons() {
    for (wire, reason) in [
        ("stop", FinishReason::Stop),
        ("length", FinishReason::Length),
        ("tool_calls", FinishReason::ToolCalls),
        ("function_call", FinishReason::ToolCalls),
        ("content_filter", FinishReason::ContentFilter),
        ("abort", FinishReason::Other("abort".into())),
    ] {
        assert_eq!(
            run_str(&[finish(wire), DONE.into()].concat()),
            vec![finished(reason)]
        );
    }
}

#[test]
fn finish_without_done_is_complete_and_usage_on_every_chunk_is_sent_once() {
    let with_usage = |d: &str| {
        data(&format!(
            r#"{{"choices":[{{"index":0,"delta":{d}}}],"usage":{{"prompt_tokens":1,"completion_tokens":1}}}}"#
        ))
    };
    let body = [
        with_usage(r#"{"content":"a"}"#),
        finish("stop"),
        data(USAGE),
    ]
    .concat();
    assert_eq!(
        run_str(&body),
        vec![
            text("a"),
            Ok(ModelEvent::Usage(usage())),
            finished(FinishReason::Stop)
        ]
    );
}

#[test]
fn end_without_finish_or_done_is_interrupted() {
    let out = run_str(&delta(r#"{"content":"a"}"#));
    assert_eq!(out[0], text("a"));
    assert!(
        matches!(out[1], Err(ProviderError::Interrupted(_))),
        "{out:?}"
    );
    assert_eq!(out.len(), 2);
}

#[test]
fn done_without_finish_reason_is_a_stop() {
    let body = [delta(r#"{"content":"a"}"#), DONE.into()].concat();
    assert_eq!(
        run_str(&body),
        vec![text("a"), finished(FinishReason::Stop)]
    );
}

#[test]
fn error_objects_in_the_stream() {
    let body = [
        delta(r#"{"content":"a"}"#),
        data(r#"{"error":{"object":"error","message":"CUDA out of memory","type":"InternalServerError","code":500}}"#),
        DONE.into(),
    ]
    .concat();
    assert_eq!(
        run_str(&body),
        vec![
            text("a"),
            Err(ProviderError::Status {
                status: 500,
                message: "CUDA out of memory".into(),
                code: Some("500".into())
            })
        ]
    );
    let out = run_str(&data(r#"{"error":"model crashed"}"#));
    assert!(
        matches!(&out[..], [Err(ProviderError::Status { status: 500, message, .. })] if message == "model crashed"),
        "{out:?}"
    );
    let out = run_str(&data(r#"{"object":"error","message":"bad"}"#));
    assert!(
        matches!(&out[..], [Err(ProviderError::Status { message, .. })] if message == "bad"),
        "{out:?}"
    );
}

#[test]
fn invalid_json_is_a_protocol_error() {
    let out = run_str("data: {not json\n\n");
    assert!(
        matches!(&out[..], [Err(ProviderError::Protocol(_))]),
        "{out:?}"
    );
}

fn call_delta(
    index: u32,
    id: Option<&str>,
    name: Option<&str>,
    args: &str,
) -> Result<ModelEvent, ProviderError> {
    Ok(ModelEvent::ToolCallDelta {
        index,
        id: id.map(Into::into),
        name: name.map(Into::into),
        arguments: args.into(),
    })
}

#[test]
fn tool_call_deltas_for_two_calls() {
    let body = [
        delta(r#"{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"weather","arguments":""}}]}"#),
        delta(r#"{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}}]}"#),
        delta(r#"{"tool_calls":[{"index":0,"function":{"arguments":"\"Paris\"}"}}]}"#),
        delta(r#"{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"time","arguments":"{}"}}]}"#),
        finish("tool_calls"),
        DONE.into(),
    ]
    .concat();
    assert_eq!(
        run_str(&body),
        vec![
            call_delta(0, Some("call_a"), Some("weather"), ""),
            call_delta(0, None, None, "{\"city\":"),
            call_delta(0, None, None, "\"Paris\"}"),
            call_delta(1, Some("call_b"), Some("time"), "{}"),
            finished(FinishReason::ToolCalls),
        ]
    );
}

#[test]
fn repeated_ids_and_names_are_announced_once_and_stop_becomes_tool_calls() {
    let body = [
        delta(r#"{"tool_calls":[{"index":0,"id":"c","function":{"name":"f","arguments":"{"}}]}"#),
        delta(r#"{"tool_calls":[{"index":0,"id":"c","function":{"name":"f","arguments":"}"}}]}"#),
        delta(r#"{"tool_calls":[{"index":0,"id":"","function":{"name":"","arguments":""}}]}"#),
        finish("stop"),
        DONE.into(),
    ]
    .concat();
    assert_eq!(
        run_str(&body),
        vec![
            call_delta(0, Some("c"), Some("f"), "{"),
            call_delta(0, None, None, "}"),
            finished(FinishReason::ToolCalls),
        ]
    );
}

#[test]
fn missing_tool_call_index_is_inferred_from_ids() {
    let body = [
        delta(r#"{"tool_calls":[{"id":"a","function":{"name":"f","arguments":"{}"}}]}"#),
        delta(r#"{"tool_calls":[{"id":"b","function":{"name":"g","arguments":"{"}}]}"#),
        delta(r#"{"tool_calls":[{"function":{"arguments":"}"}}]}"#),
        finish("tool_calls"),
    ]
    .concat();
    assert_eq!(
        run_str(&body),
        vec![
            call_delta(0, Some("a"), Some("f"), "{}"),
            call_delta(1, Some("b"), Some("g"), "{"),
            call_delta(1, None, None, "}"),
            finished(FinishReason::ToolCalls),
        ]
    );
}

#[test]
fn other_choices_are_ignored() {
    let body = [
        data(r#"{"choices":[{"index":1,"delta":{"content":"no"}},{"index":0,"delta":{"content":"yes"}}]}"#),
        data(r#"{"choices":null}"#),
        finish("stop"),
    ]
    .concat();
    assert_eq!(
        run_str(&body),
        vec![text("yes"), finished(FinishReason::Stop)]
    );
}

/// Only `[DONE]` (or only usage, then `[DONE]`) is an empty completion:
/// a protocol error, as a JSON completion without choices is.
#[test]
fn a_stream_without_choices_fails() {
    for body in [DONE.to_owned(), [data(USAGE), DONE.into()].concat()] {
        let events = run_str(&body);
        assert!(
            matches!(events.as_slice(), [Err(ProviderError::Protocol(_))]),
            "{body}: {events:?}"
        );
    }
}

#[test]
fn chunks_with_logprobs_carry_them_with_their_text() {
    let body = [
        data(r#"{"choices":[{"index":0,"delta":{"content":"Hel"},"logprobs":{"content":[{"token":"Hel","logprob":-0.25,"bytes":[72,101,108],"top_logprobs":[{"token":"Hel","logprob":-0.25,"bytes":[72,101,108]},{"token":"Hi","logprob":-2.0,"bytes":null}]}]}}]}"#),
        data(r#"{"choices":[{"index":0,"delta":{"content":"lo"},"logprobs":null}]}"#),
        data(r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#),
        "data: [DONE]\n\n".to_owned(),
    ]
    .concat();
    let events: Vec<ModelEvent> = run_str(&body).into_iter().map(Result::unwrap).collect();
    let ModelEvent::TextDeltaLogprobs { delta, logprobs } = &events[0] else {
        panic!("{events:?}");
    };
    assert_eq!(delta, "Hel");
    assert_eq!(logprobs.len(), 1);
    assert_eq!(logprobs[0].logprob, -0.25);
    assert_eq!(logprobs[0].bytes, b"Hel".to_vec());
    assert_eq!(logprobs[0].top_logprobs[1].token, "Hi");
    // `bytes: null` becomes the token's own bytes.
    assert_eq!(logprobs[0].top_logprobs[1].bytes, b"Hi".to_vec());
    assert_eq!(events[1], ModelEvent::TextDelta("lo".into()));
    assert_eq!(events[2], ModelEvent::Finished(FinishReason::Stop));
}

#[test]
fn a_completion_with_logprobs_carries_them() {
    let body = r#"{"choices":[{"index":0,"message":{"role":"assistant","content":"Yes"},
        "logprobs":{"content":[{"token":"Yes","logprob":-0.01,"top_logprobs":[]}]},
        "finish_reason":"stop"}]}"#;
    let events = decode_completion(body.as_bytes()).expect("decodes");
    assert!(
        matches!(&events[0], ModelEvent::TextDeltaLogprobs { delta, logprobs }
            if delta == "Yes" && logprobs[0].token == "Yes" && logprobs[0].logprob == -0.01),
        "{events:?}"
    );
}

/// vLLM names the stop string that ended the text in `stop_reason` (a
/// token id is a number; other servers send none).
#[test]
fn vllm_stop_reason_names_the_stop_sequence() {
    let chunk = |stop: &str| {
        data(&format!(
            r#"{{"choices":[{{"index":0,"delta":{{}},"finish_reason":"stop","stop_reason":{stop}}}]}}"#
        ))
    };
    for (stop, want) in [
        (r#""END""#, FinishReason::StopSequence("END".into())),
        ("128001", FinishReason::Stop),
        ("null", FinishReason::Stop),
    ] {
        let events = run_str(&format!(
            "{}{}data: [DONE]\n\n",
            delta(r#"{"content":"a b"}"#),
            chunk(stop)
        ));
        assert_eq!(events.last(), Some(&finished(want)), "{stop}");
    }
    let body = json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": "a b"},
                                   "finish_reason": "stop", "stop_reason": "END"}]});
    let events = decode_completion(body.to_string().as_bytes()).unwrap();
    assert_eq!(
        events.last(),
        Some(&ModelEvent::Finished(FinishReason::StopSequence(
            "END".into()
        )))
    );
}
