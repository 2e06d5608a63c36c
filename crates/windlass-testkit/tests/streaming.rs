//! Streamed (SSE) replies: chunk shapes, reassembly, tool-call deltas, usage.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use std::time::Duration;

use common::{chat_body, joined_delta, post, read_stream};
use serde_json::Value;
use windlass_testkit::{FakeUpstream, Reply, ToolCallSpec};

const LIMIT: Duration = Duration::from_secs(5);

#[tokio::test]
async fn streamed_text_reassembles_and_ends_with_done() {
    let upstream = FakeUpstream::start().await;
    let text = "Hello there, général Kenobi! 👋";
    upstream.push(Reply::text(text).chunk_chars(5));

    let resp = post(&upstream, &chat_body(true, false)).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(
        resp.headers()["content-type"].to_str().unwrap(),
        "text/event-stream"
    );
    let got = read_stream(resp, LIMIT).await;
    assert!(!got.errored && !got.timed_out);
    assert!(got.ends_with_done(), "missing [DONE]: {}", got.raw);
    assert_eq!(got.data().last(), Some(&"[DONE]"));

    let chunks = got.chunks();
    // role chunk + ceil(31 chars / 5) content chunks + finish chunk
    let content_chunks = chunks
        .iter()
        .filter(|c| {
            c["choices"][0]["delta"]["content"]
                .as_str()
                .is_some_and(|s| !s.is_empty())
        })
        .count();
    assert_eq!(content_chunks, text.chars().count().div_ceil(5));
    assert_eq!(joined_delta(&chunks, "content"), text);

    // The first chunk carries the role, the last one the finish reason.
    assert_eq!(chunks[0]["choices"][0]["delta"]["role"], "assistant");
    let last = chunks.last().unwrap();
    assert_eq!(last["choices"][0]["finish_reason"], "stop");
    for c in &chunks[..chunks.len() - 1] {
        assert_eq!(c["choices"][0]["finish_reason"], Value::Null);
    }
    // Common envelope on every chunk; the model is echoed.
    let id = chunks[0]["id"].as_str().unwrap();
    assert!(id.starts_with("chatcmpl-"));
    for c in &chunks {
        assert_eq!(c["id"], id);
        assert_eq!(c["object"], "chat.completion.chunk");
        assert!(c["created"].as_u64().unwrap() > 0);
        assert_eq!(c["model"], "test-model");
    }
    // No usage unless asked.
    assert!(chunks.iter().all(|c| c.get("usage").is_none()));
}

#[tokio::test]
async fn usage_chunk_only_when_include_usage() {
    let upstream = FakeUpstream::start().await;
    upstream.push(Reply::text("abc").usage(11, 7).cached_tokens(4));
    upstream.push(Reply::text("abc").usage(11, 7));
    upstream.push(Reply::text("abc").no_usage());

    // Asked: final chunk before [DONE] is {"choices":[], "usage":{..}}.
    let got = read_stream(post(&upstream, &chat_body(true, true)).await, LIMIT).await;
    let chunks = got.chunks();
    let last = chunks.last().unwrap();
    assert_eq!(last["choices"], serde_json::json!([]));
    assert_eq!(last["usage"]["prompt_tokens"], 11);
    assert_eq!(last["usage"]["completion_tokens"], 7);
    assert_eq!(last["usage"]["total_tokens"], 18);
    assert_eq!(last["usage"]["prompt_tokens_details"]["cached_tokens"], 4);
    assert_eq!(
        last["usage"]["completion_tokens_details"]["reasoning_tokens"],
        0
    );
    assert_eq!(last["object"], "chat.completion.chunk");
    // Other chunks carry "usage": null, like OpenAI.
    assert!(chunks[..chunks.len() - 1]
        .iter()
        .all(|c| c["usage"].is_null()));
    assert!(got.ends_with_done());

    // Not asked: no usage chunk, the last chunk is the finish chunk.
    let got = read_stream(post(&upstream, &chat_body(true, false)).await, LIMIT).await;
    let chunks = got.chunks();
    assert!(chunks.iter().all(|c| c.get("usage").is_none()));
    assert_eq!(
        chunks.last().unwrap()["choices"][0]["finish_reason"],
        "stop"
    );

    // no_usage(): nothing even when asked.
    let got = read_stream(post(&upstream, &chat_body(true, true)).await, LIMIT).await;
    assert!(got.chunks().iter().all(|c| c["usage"].is_null()));
}

#[tokio::test]
async fn auto_usage_is_non_zero() {
    let upstream = FakeUpstream::start().await;
    upstream.push(Reply::text("some answer").reasoning("hmm, let me think"));
    let got = read_stream(post(&upstream, &chat_body(true, true)).await, LIMIT).await;
    let usage = got.chunks().last().unwrap()["usage"].clone();
    let prompt = usage["prompt_tokens"].as_u64().unwrap();
    let completion = usage["completion_tokens"].as_u64().unwrap();
    let reasoning = usage["completion_tokens_details"]["reasoning_tokens"]
        .as_u64()
        .unwrap();
    assert!(prompt > 0 && completion > 0 && reasoning > 0);
    assert!(
        completion > reasoning,
        "completion tokens include reasoning"
    );
    assert_eq!(usage["total_tokens"].as_u64().unwrap(), prompt + completion);
}

/// Checks the exact delta shape of the tool calls; returns (id, name, args).
fn tool_calls_of(chunks: &[Value]) -> Vec<(String, String, String)> {
    let mut calls: Vec<(String, String, String)> = Vec::new();
    for c in chunks {
        let Some(tcs) = c["choices"][0]["delta"]["tool_calls"].as_array() else {
            continue;
        };
        assert_eq!(tcs.len(), 1, "one tool call per delta");
        let tc = &tcs[0];
        let index = tc["index"].as_u64().unwrap() as usize;
        if tc.get("id").is_some() {
            // First delta of a call: index, id, type, name, empty arguments.
            assert_eq!(index, calls.len(), "tool calls stream in index order");
            assert_eq!(tc["type"], "function");
            assert_eq!(tc["function"]["arguments"], "");
            calls.push((
                tc["id"].as_str().unwrap().to_owned(),
                tc["function"]["name"].as_str().unwrap().to_owned(),
                String::new(),
            ));
        } else {
            // Later deltas: only index + arguments fragment.
            assert_eq!(
                index + 1,
                calls.len(),
                "fragment belongs to the current call"
            );
            let keys: Vec<_> = tc.as_object().unwrap().keys().cloned().collect();
            assert_eq!(keys, ["function", "index"]);
            let fkeys: Vec<_> = tc["function"]
                .as_object()
                .unwrap()
                .keys()
                .cloned()
                .collect();
            assert_eq!(fkeys, ["arguments"]);
            calls[index]
                .2
                .push_str(tc["function"]["arguments"].as_str().unwrap());
        }
    }
    calls
}

#[tokio::test]
async fn tool_call_deltas_mimic_real_servers() {
    let upstream = FakeUpstream::start().await;
    let args = r#"{"city":"Paris","units":"celsius"}"#;
    upstream.push(Reply::tool_call("get_weather", args).chunk_chars(3));

    let got = read_stream(post(&upstream, &chat_body(true, false)).await, LIMIT).await;
    assert!(got.ends_with_done());
    let chunks = got.chunks();
    assert_eq!(chunks[0]["choices"][0]["delta"]["role"], "assistant");
    let calls = tool_calls_of(&chunks);
    assert_eq!(
        calls,
        [("call_1".into(), "get_weather".into(), args.into())]
    );
    // Arguments really were split into several fragments.
    let fragments = chunks
        .iter()
        .filter(|c| {
            c["choices"][0]["delta"]["tool_calls"][0]
                .get("id")
                .is_none()
        })
        .filter(|c| c["choices"][0]["delta"].get("tool_calls").is_some())
        .count();
    assert_eq!(fragments, args.len().div_ceil(3));
    assert_eq!(joined_delta(&chunks, "content"), "");
    assert_eq!(
        chunks.last().unwrap()["choices"][0]["finish_reason"],
        "tool_calls"
    );
}

#[tokio::test]
async fn several_tool_calls_after_text_with_reasoning() {
    let upstream = FakeUpstream::start().await;
    upstream.push(
        Reply::text_then_tools(
            "Let me check.",
            vec![
                ToolCallSpec::new("a", "{}"),
                ToolCallSpec::new("b", r#"{"x":1}"#).id("call_x"),
            ],
        )
        .and_tool_call("c", "")
        .reasoning("I should call tools"),
    );

    let got = read_stream(post(&upstream, &chat_body(true, false)).await, LIMIT).await;
    let chunks = got.chunks();
    assert_eq!(
        joined_delta(&chunks, "reasoning_content"),
        "I should call tools"
    );
    assert_eq!(joined_delta(&chunks, "content"), "Let me check.");
    let calls = tool_calls_of(&chunks);
    assert_eq!(
        calls,
        [
            ("call_1".into(), "a".into(), "{}".into()),
            ("call_x".into(), "b".into(), r#"{"x":1}"#.into()),
            ("call_2".into(), "c".into(), String::new()),
        ]
    );
    // Order: reasoning deltas, then content, then tool calls.
    let kind = |c: &Value| {
        let d = &c["choices"][0]["delta"];
        if d.get("reasoning_content").is_some() {
            1
        } else if d["content"].as_str().is_some_and(|s| !s.is_empty()) {
            2
        } else if d.get("tool_calls").is_some() {
            3
        } else {
            0
        }
    };
    let kinds: Vec<_> = chunks.iter().map(kind).filter(|k| *k != 0).collect();
    let mut sorted = kinds.clone();
    sorted.sort();
    assert_eq!(kinds, sorted);
    assert_eq!(
        chunks.last().unwrap()["choices"][0]["finish_reason"],
        "tool_calls"
    );
}

#[tokio::test]
async fn finish_reason_override_and_reasoning_field() {
    let upstream = FakeUpstream::start().await;
    upstream.push(
        Reply::text("truncat")
            .finish_reason("length")
            .reasoning("r")
            .reasoning_field("reasoning"),
    );
    let chunks = read_stream(post(&upstream, &chat_body(true, false)).await, LIMIT)
        .await
        .chunks();
    assert_eq!(
        chunks.last().unwrap()["choices"][0]["finish_reason"],
        "length"
    );
    assert_eq!(joined_delta(&chunks, "reasoning"), "r");
    assert_eq!(joined_delta(&chunks, "reasoning_content"), "");
}

#[tokio::test]
async fn error_event_mid_stream() {
    let upstream = FakeUpstream::start().await;
    upstream.push(
        Reply::text("abcdefgh")
            .chunk_chars(2)
            .error_event_after(2, "engine died"),
    );
    let got = read_stream(post(&upstream, &chat_body(true, false)).await, LIMIT).await;
    let data = got.data();
    assert_eq!(
        data.len(),
        4,
        "role, one content chunk, error, [DONE]: {data:?}"
    );
    let err: Value = serde_json::from_str(data[2]).unwrap();
    assert_eq!(err["error"]["message"], "engine died");
    assert!(got.ends_with_done());
}

#[tokio::test]
async fn chunks_are_paced_by_delay() {
    let upstream = FakeUpstream::start().await;
    upstream.push(
        Reply::text("abcdef")
            .chunk_chars(1)
            .delay_between_chunks(Duration::from_millis(30)),
    );
    let started = std::time::Instant::now();
    let got = read_stream(post(&upstream, &chat_body(true, false)).await, LIMIT).await;
    // 9 frames (role, 6 content, finish, [DONE]) => 8 gaps of 30 ms.
    assert_eq!(got.data().len(), 9);
    assert!(
        started.elapsed() >= Duration::from_millis(240),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn many_concurrent_streams() {
    let upstream = FakeUpstream::start().await;
    upstream.set_default(Reply::text("the quick brown fox jumps over the lazy dog"));
    upstream.set_record_requests(false);
    let client = reqwest::Client::new();
    let started = std::time::Instant::now();
    let tasks: Vec<_> = (0..500)
        .map(|_| {
            let (client, upstream) = (client.clone(), upstream.clone());
            tokio::spawn(async move {
                let resp = common::post_with(&client, &upstream, &chat_body(true, true)).await;
                let got = read_stream(resp, LIMIT).await;
                assert!(got.ends_with_done());
                joined_delta(&got.chunks(), "content")
            })
        })
        .collect();
    for t in tasks {
        assert_eq!(
            t.await.unwrap(),
            "the quick brown fox jumps over the lazy dog"
        );
    }
    assert_eq!(upstream.request_count(), 500);
    assert!(upstream.requests().is_empty(), "recording was off");
    assert_eq!(upstream.disconnects(), 0);
    eprintln!("500 streamed requests in {:?}", started.elapsed());
}
