//! Non-streamed replies, errors, models listing and request recording.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use common::{chat_body, post};
use serde_json::{json, Value};
use windlass_testkit::{FakeUpstream, Reply, ToolCallSpec};

#[tokio::test]
async fn text_completion_shape() {
    let upstream = FakeUpstream::start().await;
    upstream.push(
        Reply::text("Hello there")
            .reasoning("be polite")
            .usage(20, 9)
            .cached_tokens(16)
            .reasoning_tokens(3),
    );
    let resp = post(&upstream, &chat_body(false, false)).await;
    assert_eq!(resp.status(), 200);
    assert!(resp.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("application/json"));
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["object"], "chat.completion");
    assert!(body["id"].as_str().unwrap().starts_with("chatcmpl-"));
    assert!(body["created"].as_u64().unwrap() > 0);
    assert_eq!(body["model"], "test-model");
    let choice = &body["choices"][0];
    assert_eq!(choice["index"], 0);
    assert_eq!(choice["finish_reason"], "stop");
    assert_eq!(choice["message"]["role"], "assistant");
    assert_eq!(choice["message"]["content"], "Hello there");
    assert_eq!(choice["message"]["reasoning_content"], "be polite");
    assert!(choice["message"].get("tool_calls").is_none());
    assert_eq!(
        body["usage"],
        json!({
            "prompt_tokens": 20,
            "completion_tokens": 9,
            "total_tokens": 29,
            "prompt_tokens_details": {"cached_tokens": 16},
            "completion_tokens_details": {"reasoning_tokens": 3},
        })
    );
}

#[tokio::test]
async fn tool_call_completion_shape() {
    let upstream = FakeUpstream::start().await;
    upstream.push(Reply::tool_calls(vec![
        ToolCallSpec::new("a", "{}"),
        ToolCallSpec::new("b", r#"{"x":1}"#).id("call_x"),
    ]));
    upstream.push(Reply::tool_call("get_weather", r#"{"city":"Paris"}"#).with_call_id("call_w"));
    let body: Value = post(&upstream, &chat_body(false, false))
        .await
        .json()
        .await
        .unwrap();
    let message = &body["choices"][0]["message"];
    assert_eq!(
        message["content"],
        Value::Null,
        "content is null with only tool calls"
    );
    assert_eq!(
        message["tool_calls"],
        json!([
            {"id": "call_1", "type": "function", "function": {"name": "a", "arguments": "{}"}},
            {"id": "call_x", "type": "function", "function": {"name": "b", "arguments": "{\"x\":1}"}},
        ])
    );
    assert_eq!(body["choices"][0]["finish_reason"], "tool_calls");
    assert!(body["usage"]["prompt_tokens"].as_u64().unwrap() > 0);
    assert!(body["usage"]["completion_tokens"].as_u64().unwrap() > 0);

    let body: Value = post(&upstream, &chat_body(false, false))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        body["choices"][0]["message"]["tool_calls"][0]["id"],
        "call_w"
    );
}

#[tokio::test]
async fn no_usage_omits_usage() {
    let upstream = FakeUpstream::start().await;
    upstream.push(Reply::text("x").no_usage());
    let body: Value = post(&upstream, &chat_body(false, false))
        .await
        .json()
        .await
        .unwrap();
    assert!(body.get("usage").is_none());
}

#[tokio::test]
async fn error_replies() {
    let upstream = FakeUpstream::start().await;
    upstream.push(Reply::error(500, "upstream exploded"));
    upstream.push(Reply::error(429, "slow down").header("retry-after", "2"));
    upstream.push(Reply::error_raw(502, "<html>bad gateway</html>"));

    // Errors are plain HTTP errors even for streamed requests.
    let resp = post(&upstream, &chat_body(true, false)).await;
    assert_eq!(resp.status(), 500);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["error"]["message"], "upstream exploded");
    assert_eq!(body["error"]["type"], "server_error");
    assert_eq!(body["error"]["code"], 500);

    let resp = post(&upstream, &chat_body(false, false)).await;
    assert_eq!(resp.status(), 429);
    assert_eq!(resp.headers()["retry-after"], "2");
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["error"]["type"], "rate_limit_error");

    let resp = post(&upstream, &chat_body(false, false)).await;
    assert_eq!(resp.status(), 502);
    assert!(resp.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/plain"));
    assert_eq!(resp.text().await.unwrap(), "<html>bad gateway</html>");
}

#[tokio::test]
async fn default_reply_when_queue_is_empty() {
    let upstream = FakeUpstream::start().await;
    let resp = post(&upstream, &chat_body(false, false)).await;
    assert_eq!(resp.status(), 500);
    let body: Value = resp.json().await.unwrap();
    assert!(body["error"]["message"]
        .as_str()
        .unwrap()
        .contains("no scripted reply"));

    upstream.set_default(Reply::text("always"));
    upstream.push(Reply::text("first"));
    assert_eq!(upstream.pending_replies(), 1);
    for expected in ["first", "always", "always"] {
        let body: Value = post(&upstream, &chat_body(false, false))
            .await
            .json()
            .await
            .unwrap();
        assert_eq!(body["choices"][0]["message"]["content"], expected);
    }
    assert_eq!(upstream.pending_replies(), 0);
}

#[tokio::test]
async fn replies_are_served_fifo() {
    let upstream = FakeUpstream::start().await;
    upstream.push_all(["one", "two", "three"].map(Reply::text));
    for expected in ["one", "two", "three"] {
        let body: Value = post(&upstream, &chat_body(false, false))
            .await
            .json()
            .await
            .unwrap();
        assert_eq!(body["choices"][0]["message"]["content"], expected);
    }
}

#[tokio::test]
async fn requests_are_recorded_in_order() {
    let upstream = FakeUpstream::start().await;
    upstream.set_default(Reply::text("ok"));
    assert_eq!(upstream.last_request(), None);
    for i in 0..3 {
        let mut body = chat_body(i == 1, false);
        body["n_marker"] = json!(i);
        let _ = post(&upstream, &body).await.text().await.unwrap();
    }
    assert_eq!(upstream.request_count(), 3);
    let requests = upstream.requests();
    assert_eq!(requests.len(), 3);
    for (i, r) in requests.iter().enumerate() {
        assert_eq!(r["n_marker"], i);
        assert_eq!(r["messages"][0]["content"], "Hello, who are you?");
    }
    assert_eq!(upstream.last_request().unwrap()["n_marker"], 2);
    let recorded = upstream.last_recorded_request().unwrap();
    assert!(recorded.header("content-type").unwrap().contains("json"));

    // Error replies are recorded too; recording can be switched off.
    upstream.push(Reply::error(400, "bad"));
    assert_eq!(
        post(&upstream, &chat_body(false, false)).await.status(),
        400
    );
    assert_eq!(upstream.requests().len(), 4);
    upstream.set_record_requests(false);
    let _ = post(&upstream, &chat_body(false, false)).await.text().await;
    assert_eq!(upstream.requests().len(), 4);
    assert_eq!(upstream.request_count(), 5);
}

#[tokio::test]
async fn invalid_json_is_rejected_and_recorded() {
    let upstream = FakeUpstream::start().await;
    upstream.push(Reply::text("unused"));
    let resp = reqwest::Client::new()
        .post(format!("{}/chat/completions", upstream.base_url()))
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 400);
    assert_eq!(
        upstream.last_request(),
        Some(Value::String("{not json".into()))
    );
    assert_eq!(upstream.pending_replies(), 1, "no scripted reply consumed");
}

#[tokio::test]
async fn models_endpoint() {
    let upstream = FakeUpstream::start().await;
    let url = format!("{}/models", upstream.base_url());
    let body: Value = reqwest::get(&url).await.unwrap().json().await.unwrap();
    assert_eq!(body["object"], "list");
    assert_eq!(body["data"][0]["id"], "fake-model");
    assert_eq!(body["data"][0]["object"], "model");
    assert_eq!(body["data"][0]["owned_by"], "windlass-testkit");
    assert!(body["data"][0]["created"].as_u64().unwrap() > 0);

    upstream.set_models(vec!["a".into(), "b".into()]);
    let body: Value = reqwest::get(&url).await.unwrap().json().await.unwrap();
    let ids: Vec<_> = body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].clone())
        .collect();
    assert_eq!(ids, [json!("a"), json!("b")]);
    assert_eq!(
        upstream.request_count(),
        0,
        "models calls are not chat requests"
    );
}

#[tokio::test]
async fn base_url_points_at_the_server() {
    let upstream = FakeUpstream::start().await;
    let addr = upstream.addr();
    assert!(addr.ip().is_loopback());
    assert_eq!(
        upstream.base_url(),
        format!("http://127.0.0.1:{}/v1", addr.port())
    );
    let resp = reqwest::get(format!("http://{addr}/health")).await.unwrap();
    assert_eq!(resp.status(), 200);
    let resp = reqwest::get(format!("http://{addr}/v1/nope"))
        .await
        .unwrap();
    assert_eq!(resp.status(), 404);
}
