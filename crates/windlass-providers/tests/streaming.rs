//! The provider against a local fake upstream: successful turns.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod support;

use std::time::Duration;

use futures::StreamExt;
use serde_json::json;
use support::{delta, finish, frame, usage, Fake, Script, DONE};
use windlass_engine::{
    FinishReason, ModelEvent, ModelProvider, ModelRequest, ModelStream, ModelTool, ProviderError,
};
use windlass_protocol::{Item, Usage};
use windlass_providers::{ChatCompletionsProvider, ChatProviderConfig};

fn provider(fake: &Fake) -> ChatCompletionsProvider {
    ChatCompletionsProvider::new(ChatProviderConfig {
        api_key: Some("sk-test".into()),
        extra_headers: vec![("x-tenant".into(), "t1".into())],
        ..ChatProviderConfig::new(format!("{}/", fake.base_url))
    })
    .expect("provider")
}

fn request(stream: bool) -> ModelRequest {
    ModelRequest {
        model: "m".into(),
        instructions: Some("be brief".into()),
        transcript: vec![Item::user_text("hi")].into(),
        stream,
        ..ModelRequest::default()
    }
}

async fn collect(stream: ModelStream) -> Vec<Result<ModelEvent, ProviderError>> {
    tokio::time::timeout(Duration::from_secs(10), stream.collect())
        .await
        .expect("stream ends")
}

fn call(
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

/// Asked for a reasoning summary, a chat completions upstream's reasoning
/// text is given as the summary (it has nothing else).
#[tokio::test]
async fn reasoning_text_becomes_the_summary_when_one_is_asked_for() {
    let fake = Fake::start().await;
    fake.push(Script::sse(vec![
        delta(json!({"reasoning_content": "think"})),
        delta(json!({"content": "ok"})),
        finish("stop"),
        DONE.into(),
    ]));
    let mut req = request(true);
    req.reasoning_summary = Some(windlass_protocol::ReasoningSummary::Auto);
    let stream = provider(&fake).start(req).await.expect("starts");
    assert_eq!(
        collect(stream).await,
        vec![
            Ok(ModelEvent::ReasoningSummaryDelta {
                summary_index: 0,
                delta: "think".into()
            }),
            Ok(ModelEvent::TextDelta("ok".into())),
            Ok(ModelEvent::Finished(FinishReason::Stop)),
        ]
    );
    // Nothing about summaries goes up: chat completions has no such field.
    let body = &fake.requests()[0].body;
    assert!(body.get("reasoning").is_none() && body.get("reasoning_summary").is_none());
}

#[tokio::test]
async fn streamed_text_with_usage() {
    let fake = Fake::start().await;
    fake.push(Script::sse(vec![
        delta(json!({"role": "assistant", "content": ""})),
        delta(json!({"reasoning_content": "hmm"})),
        delta(json!({"content": "Hel"})),
        delta(json!({"content": "lo"})),
        finish("stop"),
        usage(7, 2),
        DONE.into(),
    ]));
    let stream = provider(&fake).start(request(true)).await.expect("starts");
    assert_eq!(
        collect(stream).await,
        vec![
            Ok(ModelEvent::ReasoningDelta("hmm".into())),
            Ok(ModelEvent::TextDelta("Hel".into())),
            Ok(ModelEvent::TextDelta("lo".into())),
            Ok(ModelEvent::Usage(Usage {
                input_tokens: 7,
                output_tokens: 2,
                total_tokens: 9,
                ..Usage::default()
            })),
            Ok(ModelEvent::Finished(FinishReason::Stop)),
        ]
    );
    let reqs = fake.requests();
    assert_eq!(reqs.len(), 1);
    assert_eq!(
        reqs[0].body,
        json!({
            "model": "m",
            "messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}],
            "stream": true,
            "stream_options": {"include_usage": true}
        })
    );
    let h = &reqs[0].headers;
    assert_eq!(h["authorization"], "Bearer sk-test");
    assert_eq!(h["x-tenant"], "t1");
    assert_eq!(h["content-type"], "application/json");
    assert_eq!(h["accept"], "text/event-stream");
}

#[tokio::test]
async fn streamed_tool_call_deltas_for_two_calls() {
    let fake = Fake::start().await;
    fake.push(Script::sse(vec![
        delta(json!({"role": "assistant", "content": null, "tool_calls": [
            {"index": 0, "id": "call_a", "type": "function", "function": {"name": "weather", "arguments": ""}}]})),
        delta(json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"city\""}}]})),
        delta(json!({"tool_calls": [{"index": 0, "function": {"arguments": ":\"Paris\"}"}}]})),
        delta(json!({"tool_calls": [
            {"index": 1, "id": "call_b", "type": "function", "function": {"name": "time", "arguments": "{}"}}]})),
        finish("tool_calls"),
        DONE.into(),
    ]));
    let mut req = request(true);
    req.tools = vec![ModelTool {
        name: "weather".into(),
        description: None,
        parameters: serde_json::Value::Null,
        strict: None,
    }]
    .into();
    let stream = provider(&fake).start(req).await.expect("starts");
    assert_eq!(
        collect(stream).await,
        vec![
            call(0, Some("call_a"), Some("weather"), ""),
            call(0, None, None, "{\"city\""),
            call(0, None, None, ":\"Paris\"}"),
            call(1, Some("call_b"), Some("time"), "{}"),
            Ok(ModelEvent::Finished(FinishReason::ToolCalls)),
        ]
    );
    assert_eq!(fake.requests()[0].body["tool_choice"], "auto");
}

fn completion_with_calls() -> serde_json::Value {
    json!({"id": "c", "object": "chat.completion", "created": 1, "model": "m",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": null,
            "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "a", "arguments": "{\"x\":1}"}},
                {"id": "call_2", "type": "function", "function": {"name": "b", "arguments": "{}"}}
            ]}}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7}})
}

fn expected_calls() -> Vec<Result<ModelEvent, ProviderError>> {
    vec![
        call(0, Some("call_1"), Some("a"), "{\"x\":1}"),
        call(1, Some("call_2"), Some("b"), "{}"),
        Ok(ModelEvent::Usage(Usage {
            input_tokens: 3,
            output_tokens: 4,
            total_tokens: 7,
            ..Usage::default()
        })),
        Ok(ModelEvent::Finished(FinishReason::ToolCalls)),
    ]
}

#[tokio::test]
async fn non_streaming_tool_calls() {
    let fake = Fake::start().await;
    fake.push(Script::json(200, completion_with_calls()));
    let stream = provider(&fake).start(request(false)).await.expect("starts");
    assert_eq!(collect(stream).await, expected_calls());
    let req = &fake.requests()[0];
    assert_eq!(req.body["stream"], false);
    assert!(req.body.get("stream_options").is_none());
    assert_eq!(req.headers["accept"], "application/json");
}

#[tokio::test]
async fn json_answer_to_a_streaming_request_is_decoded() {
    let fake = Fake::start().await;
    fake.push(Script::json(200, completion_with_calls()));
    let stream = provider(&fake).start(request(true)).await.expect("starts");
    assert_eq!(collect(stream).await, expected_calls());
}

#[tokio::test]
async fn list_models() {
    let fake = Fake::start().await;
    let models = provider(&fake).list_models().await.expect("lists");
    assert_eq!(models.len(), 2);
    assert_eq!(models[0].id, "qwen3-8b");
    assert_eq!(models[0].owned_by.as_deref(), Some("vllm"));
    assert_eq!(models[0].created, Some(1_700_000_000));
    assert_eq!(models[1].id, "llama");
    assert_eq!(models[1].owned_by, None);
}

#[tokio::test]
async fn dropping_the_stream_aborts_the_upstream_request() {
    let fake = Fake::start().await;
    fake.push(Script::Sse {
        frames: vec![delta(json!({"content": "a"}))],
        gap: Duration::from_millis(10),
        end: support::End::Forever(delta(json!({"content": "more"}))),
    });
    let mut stream = provider(&fake).start(request(true)).await.expect("starts");
    assert_eq!(
        stream.next().await,
        Some(Ok(ModelEvent::TextDelta("a".into())))
    );
    assert_eq!(fake.bodies_dropped(), 0, "the upstream is still streaming");
    drop(stream);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while fake.bodies_dropped() == 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "upstream kept streaming after the stream was dropped"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn connections_are_reused_across_turns() {
    let fake = Fake::start().await;
    let p = provider(&fake);
    for i in 0..6 {
        let streamed = i % 2 == 0;
        if streamed {
            fake.push(Script::sse(vec![
                delta(json!({"content": "x"})),
                finish("stop"),
                DONE.into(),
            ]));
        } else {
            fake.push(Script::json(200, completion_with_calls()));
        }
        let stream = p.start(request(streamed)).await.expect("starts");
        assert!(collect(stream).await.iter().all(Result::is_ok));
        // hyper hands a finished connection back to the pool from its own
        // task, a moment after the body ended.
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let peers: Vec<_> = fake.requests().iter().map(|r| r.peer).collect();
    assert!(
        peers.windows(2).all(|w| w[0] == w[1]),
        "a new connection per turn: {peers:?}"
    );
}

#[tokio::test]
async fn streamed_turn_ending_in_done_without_finish_reason() {
    // llama.cpp-style minimal stream, also checks a frame split mid-line
    // across two writes.
    let fake = Fake::start().await;
    let whole = delta(json!({"content": "x"}));
    let (a, b) = whole.split_at(whole.len() / 2);
    fake.push(Script::sse(vec![
        a.into(),
        b.into(),
        frame(json!({"choices": []})),
        DONE.into(),
    ]));
    let stream = provider(&fake).start(request(true)).await.expect("starts");
    assert_eq!(
        collect(stream).await,
        vec![
            Ok(ModelEvent::TextDelta("x".into())),
            Ok(ModelEvent::Finished(FinishReason::Stop))
        ]
    );
}
