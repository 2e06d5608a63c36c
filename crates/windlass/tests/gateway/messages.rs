//! `/v1/messages` (Anthropic's Messages API as a surface) over real HTTP in
//! front of the scripted upstream speaking the chat-completions and the
//! Anthropic wire: the translation both ways, the event grammar, client
//! tools, thinking, token counting and Anthropic's errors.

use serde_json::{json, Value};
use windlass_providers::UpstreamKind;
use windlass_testkit::{Gateway, GatewayOptions, Reply, ToolCallSpec};

const KINDS: [UpstreamKind; 2] = [UpstreamKind::Chat, UpstreamKind::Anthropic];

async fn gateway(kind: UpstreamKind) -> Gateway {
    Gateway::start_with(GatewayOptions {
        kind,
        ..GatewayOptions::default()
    })
    .await
}

fn post(gw: &Gateway, path: &str, body: &Value) -> reqwest::RequestBuilder {
    gw.client
        .post(gw.url(path))
        .header("anthropic-version", "2023-06-01")
        .header("x-api-key", "unused")
        .json(body)
}

async fn create(gw: &Gateway, body: &Value) -> (u16, Value) {
    let resp = post(gw, "/v1/messages", body).send().await.expect("send");
    let status = resp.status().as_u16();
    (status, resp.json().await.expect("json body"))
}

/// `(event name, data)` of every SSE frame, checking each names its type.
async fn stream(gw: &Gateway, body: &Value) -> Vec<(String, Value)> {
    let mut body = body.clone();
    body["stream"] = json!(true);
    let resp = post(gw, "/v1/messages", &body).send().await.expect("send");
    assert_eq!(resp.status(), 200);
    let text = resp.text().await.expect("text");
    assert!(!text.contains("[DONE]"), "no OpenAI sentinel: {text}");
    text.split("\n\n")
        .filter(|f| f.starts_with("event: "))
        .map(|frame| {
            let (event, data) = frame.split_once('\n').expect("two lines");
            let name = event.trim_start_matches("event: ").to_owned();
            let data: Value =
                serde_json::from_str(data.trim_start_matches("data: ")).expect("json data");
            assert_eq!(data["type"], name.as_str(), "{frame}");
            (name, data)
        })
        .collect()
}

fn names(events: &[(String, Value)]) -> Vec<&str> {
    events.iter().map(|(n, _)| n.as_str()).collect()
}

fn hello() -> Value {
    json!({"model": "m", "max_tokens": 100,
           "system": [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}],
           "messages": [{"role": "user", "content": "hi"}]})
}

fn weather_tool() -> Value {
    json!([{"name": "get_weather", "description": "Weather of a city",
            "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}])
}

#[tokio::test]
async fn text_as_json_for_each_kind() {
    for kind in KINDS {
        let gw = gateway(kind).await;
        gw.upstream.push(Reply::text("Hello there").usage(12, 3));
        let (status, msg) = create(&gw, &hello()).await;
        assert_eq!(status, 200, "{kind:?}: {msg}");
        assert_eq!(msg["type"], "message");
        assert_eq!(msg["role"], "assistant");
        assert_eq!(msg["model"], "m");
        assert_eq!(
            msg["content"],
            json!([{"type": "text", "text": "Hello there"}])
        );
        assert_eq!(msg["stop_reason"], "end_turn");
        assert_eq!(msg["stop_sequence"], Value::Null);
        assert_eq!(msg["usage"]["input_tokens"], 12);
        assert_eq!(msg["usage"]["output_tokens"], 3);
        let sent = gw.upstream.last_request().expect("sent");
        match kind {
            UpstreamKind::Anthropic => {
                assert_eq!(sent["system"], "Be brief.", "{sent}");
                assert_eq!(sent["max_tokens"], 100);
                assert_eq!(sent["messages"][0]["content"][0]["text"], "hi");
            }
            _ => {
                assert_eq!(sent["messages"][0]["role"], "system", "{sent}");
                assert_eq!(sent["messages"][0]["content"], "Be brief.");
                assert_eq!(sent["max_tokens"], 100);
            }
        }
        // Stateless unless the operator stores Messages responses.
        let (code, _) = gw
            .get_json(&format!("/v1/responses/{}", msg["id"].as_str().unwrap()))
            .await;
        assert_eq!(code, 404);
    }
}

#[tokio::test]
async fn text_stream_follows_the_grammar() {
    for kind in KINDS {
        let gw = gateway(kind).await;
        gw.upstream.push(
            Reply::text("Hello there, friend")
                .chunk_chars(5)
                .usage(7, 4),
        );
        let events = stream(&gw, &hello()).await;
        let names = names(&events);
        assert_eq!(
            names[..3],
            ["message_start", "ping", "content_block_start"],
            "{kind:?}"
        );
        assert_eq!(
            names[names.len() - 3..],
            ["content_block_stop", "message_delta", "message_stop"]
        );
        assert!(names[3..names.len() - 3]
            .iter()
            .all(|n| *n == "content_block_delta"));
        let start = &events[0].1["message"];
        assert_eq!(start["content"], json!([]));
        assert_eq!(start["stop_reason"], Value::Null);
        let text: String = events
            .iter()
            .filter(|(n, _)| n == "content_block_delta")
            .map(|(_, d)| {
                assert_eq!(d["index"], 0);
                assert_eq!(d["delta"]["type"], "text_delta");
                d["delta"]["text"].as_str().unwrap().to_owned()
            })
            .collect();
        assert_eq!(text, "Hello there, friend");
        let delta = &events[events.len() - 2].1;
        assert_eq!(delta["delta"]["stop_reason"], "end_turn");
        assert_eq!(delta["usage"]["output_tokens"], 4);
        assert_eq!(delta["usage"]["input_tokens"], 7);
    }
}

#[tokio::test]
async fn client_tool_round_trip() {
    for kind in KINDS {
        let gw = gateway(kind).await;
        gw.upstream.push(Reply::text_then_tools(
            "Let me check.",
            [ToolCallSpec::new("get_weather", r#"{"city":"Paris"}"#).id("toolu_1")],
        ));
        let mut body = hello();
        body["tools"] = weather_tool();
        body["tool_choice"] = json!({"type": "auto", "disable_parallel_tool_use": true});
        let events = stream(&gw, &body).await;
        let starts: Vec<&Value> = events
            .iter()
            .filter(|(n, _)| n == "content_block_start")
            .map(|(_, d)| d)
            .collect();
        assert_eq!(starts.len(), 2, "{kind:?}: {events:?}");
        assert_eq!(starts[0]["content_block"]["type"], "text");
        assert_eq!(starts[1]["index"], 1);
        assert_eq!(
            starts[1]["content_block"],
            json!({"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}})
        );
        let json_text: String = events
            .iter()
            .filter(|(_, d)| d["delta"]["type"] == "input_json_delta")
            .map(|(_, d)| d["delta"]["partial_json"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(
            serde_json::from_str::<Value>(&json_text).unwrap(),
            json!({"city": "Paris"})
        );
        let stop = &events[events.len() - 2].1;
        assert_eq!(stop["delta"]["stop_reason"], "tool_use");
        let sent = gw.upstream.last_request().unwrap();
        match kind {
            UpstreamKind::Anthropic => {
                assert_eq!(
                    sent["tool_choice"]["disable_parallel_tool_use"], true,
                    "{sent}"
                );
                assert_eq!(sent["tools"][0]["input_schema"]["type"], "object");
            }
            _ => assert_eq!(sent["parallel_tool_calls"], false, "{sent}"),
        }

        // The client runs the tool and sends the whole conversation back.
        gw.upstream.push(Reply::text("18C in Paris."));
        let mut next = body.clone();
        next["messages"] = json!([
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [
                {"type": "text", "text": "Let me check."},
                {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "18C", "is_error": false}]}
        ]);
        let (status, msg) = create(&gw, &next).await;
        assert_eq!(status, 200, "{msg}");
        assert_eq!(msg["content"][0]["text"], "18C in Paris.");
        let sent = gw.upstream.last_request().unwrap().to_string();
        assert!(sent.contains("toolu_1") && sent.contains("18C"), "{sent}");
    }
}

#[tokio::test]
async fn json_tool_use_and_max_tokens() {
    let gw = gateway(UpstreamKind::Chat).await;
    gw.upstream
        .push(Reply::tool_call("get_weather", r#"{"city":"Oslo"}"#).with_call_id("toolu_9"));
    let mut body = hello();
    body["tools"] = weather_tool();
    body["tool_choice"] = json!({"type": "tool", "name": "get_weather"});
    let (status, msg) = create(&gw, &body).await;
    assert_eq!(status, 200, "{msg}");
    assert_eq!(msg["stop_reason"], "tool_use");
    assert_eq!(
        msg["content"],
        json!([{"type": "tool_use", "id": "toolu_9", "name": "get_weather", "input": {"city": "Oslo"}}])
    );
    let sent = gw.upstream.last_request().unwrap();
    assert_eq!(
        sent["tool_choice"]["function"]["name"], "get_weather",
        "{sent}"
    );

    gw.upstream.push(Reply::text("cut").finish_reason("length"));
    let (_, msg) = create(&gw, &hello()).await;
    assert_eq!(msg["stop_reason"], "max_tokens", "{msg}");
}

#[tokio::test]
async fn thinking_blocks_carry_their_signature_both_ways() {
    let gw = gateway(UpstreamKind::Anthropic).await;
    gw.upstream.push(
        Reply::text("42")
            .reasoning("Six times seven.")
            .reasoning_signature("sig-abc"),
    );
    let mut body = hello();
    body["max_tokens"] = json!(4000);
    body["thinking"] = json!({"type": "enabled", "budget_tokens": 2000});
    let (status, msg) = create(&gw, &body).await;
    assert_eq!(status, 200, "{msg}");
    assert_eq!(
        msg["content"][0],
        json!({"type": "thinking", "thinking": "Six times seven.", "signature": "sig-abc"})
    );
    assert_eq!(msg["content"][1]["text"], "42");
    let sent = gw.upstream.last_request().unwrap();
    assert_eq!(sent["thinking"]["type"], "enabled", "{sent}");

    // Claude Code sends the thinking block back with the next turn.
    gw.upstream.push(Reply::text("ok"));
    body["messages"] = json!([
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": msg["content"].clone()},
        {"role": "user", "content": "and?"}
    ]);
    let (status, _) = create(&gw, &body).await;
    assert_eq!(status, 200);
    let sent = gw.upstream.last_request().unwrap();
    assert_eq!(
        sent["messages"][1]["content"][0],
        json!({"type": "thinking", "thinking": "Six times seven.", "signature": "sig-abc"}),
        "{sent}"
    );

    // Without `thinking`, reasoning is not shown.
    gw.upstream.push(
        Reply::text("42")
            .reasoning("hidden")
            .reasoning_signature("s"),
    );
    let (_, msg) = create(&gw, &hello()).await;
    assert_eq!(
        msg["content"],
        json!([{"type": "text", "text": "42"}]),
        "{msg}"
    );
}

#[tokio::test]
async fn count_tokens_counts_the_translated_input() {
    let gw = gateway(UpstreamKind::Chat).await;
    let body = json!({"model": "m", "messages": [{"role": "user", "content": "hello world, count me"}],
                      "tools": weather_tool()});
    let resp = post(&gw, "/v1/messages/count_tokens", &body)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let v: Value = resp.json().await.unwrap();
    let n = v["input_tokens"].as_u64().expect("a count");
    assert!(n > 5, "{v}");
    // A longer input counts more.
    let longer = json!({"model": "m", "messages": [{"role": "user", "content": "hello world, count me ".repeat(20)}],
                        "tools": weather_tool()});
    let v: Value = post(&gw, "/v1/messages/count_tokens", &longer)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(v["input_tokens"].as_u64().unwrap() > n, "{v}");
}

async fn refused(gw: &Gateway, req: reqwest::RequestBuilder, status: u16, kind: &str) -> String {
    let resp = req.send().await.unwrap();
    assert_eq!(resp.status().as_u16(), status);
    assert!(resp.headers().contains_key("request-id"));
    let v: Value = resp.json().await.unwrap();
    assert_eq!(v["type"], "error", "{v}");
    assert_eq!(v["error"]["type"], kind, "{v}");
    assert!(v["request_id"].is_string(), "{v}");
    assert_eq!(
        gw.upstream.request_count(),
        0,
        "nothing reached the upstream"
    );
    v["error"]["message"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn bad_input_gets_anthropic_errors_naming_the_field() {
    let gw = gateway(UpstreamKind::Chat).await;
    let no_version = gw.client.post(gw.url("/v1/messages")).json(&hello());
    let m = refused(&gw, no_version, 400, "invalid_request_error").await;
    assert!(m.contains("anthropic-version"), "{m}");

    let mut body = hello();
    body.as_object_mut().unwrap().remove("max_tokens");
    let m = refused(
        &gw,
        post(&gw, "/v1/messages", &body),
        400,
        "invalid_request_error",
    )
    .await;
    assert!(m.starts_with("max_tokens:"), "{m}");

    let orphan = json!({"model": "m", "max_tokens": 10, "messages": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_x", "content": "r"}]}]});
    let m = refused(
        &gw,
        post(&gw, "/v1/messages", &orphan),
        400,
        "invalid_request_error",
    )
    .await;
    assert!(
        m.starts_with("messages.2.content.0:") && m.contains("toolu_x"),
        "{m}"
    );

    let unanswered = json!({"model": "m", "max_tokens": 10, "messages": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_y", "name": "f", "input": {}}]},
        {"role": "user", "content": "no result"}]});
    let m = refused(
        &gw,
        post(&gw, "/v1/messages", &unanswered),
        400,
        "invalid_request_error",
    )
    .await;
    assert!(m.starts_with("messages.1:") && m.contains("toolu_y"), "{m}");

    let bad_block = json!({"model": "m", "max_tokens": 10, "messages": [
        {"role": "user", "content": [{"type": "txt", "text": "hi"}]}]});
    let m = refused(
        &gw,
        post(&gw, "/v1/messages", &bad_block),
        400,
        "invalid_request_error",
    )
    .await;
    assert!(m.starts_with("messages.0.content.0.type:"), "{m}");

    let bad_role =
        json!({"model": "m", "max_tokens": 10, "messages": [{"role": "tool", "content": "x"}]});
    let m = refused(
        &gw,
        post(&gw, "/v1/messages", &bad_role),
        400,
        "invalid_request_error",
    )
    .await;
    assert!(m.starts_with("messages.0.role:"), "{m}");

    let mut server_tool = hello();
    server_tool["tools"] =
        json!([{"type": "web_search_20250305", "name": "web_search", "max_uses": 3}]);
    let m = refused(
        &gw,
        post(&gw, "/v1/messages", &server_tool),
        400,
        "invalid_request_error",
    )
    .await;
    // No search backend on this gateway: refused, saying so (see
    // messages_server_tools.rs for the served case).
    assert!(
        m.starts_with("tools.0.type:")
            && m.contains("web_search_20250305")
            && m.contains("not available"),
        "{m}"
    );

    let mut unknown = hello();
    unknown["frobnicate"] = json!(true);
    let m = refused(
        &gw,
        post(&gw, "/v1/messages", &unknown),
        400,
        "invalid_request_error",
    )
    .await;
    assert!(m.contains("frobnicate"), "{m}");

    let not_found = post(&gw, "/v1/messages/nope", &hello());
    refused(&gw, not_found, 404, "not_found_error").await;
}

#[tokio::test]
async fn keys_and_scopes_answer_in_anthropics_shape() {
    let mut opts = GatewayOptions::default();
    opts.server.api_keys = vec!["sk-good".to_owned()];
    let gw = Gateway::start_with(opts).await;
    let wrong = gw
        .client
        .post(gw.url("/v1/messages"))
        .header("anthropic-version", "2023-06-01")
        .header("x-api-key", "sk-bad")
        .json(&hello());
    refused(&gw, wrong, 401, "authentication_error").await;
    gw.upstream.push(Reply::text("ok"));
    for (name, value) in [
        ("x-api-key", "sk-good"),
        ("authorization", "Bearer sk-good"),
    ] {
        gw.upstream.push(Reply::text("ok"));
        let resp = gw
            .client
            .post(gw.url("/v1/messages?beta=true"))
            .header("anthropic-version", "2023-06-01")
            .header("anthropic-beta", "prompt-caching-2024-07-31")
            .header(name, value)
            .json(&hello())
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 200, "{name}");
    }
}
