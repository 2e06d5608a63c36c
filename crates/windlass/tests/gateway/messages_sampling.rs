//! `/v1/messages` `stop_sequences` and `top_k` through the engine to each
//! upstream kind, `stop_reason: "stop_sequence"` back (JSON and stream),
//! the Responses upstream's refusal, and the same fields as Windlass's
//! `stop` / `top_k` extensions on `/v1/responses`.

use serde_json::{json, Value};
use windlass_providers::UpstreamKind;
use windlass_testkit::messages::post as create;
use windlass_testkit::{Gateway, GatewayOptions, Reply};

async fn gateway(kind: UpstreamKind) -> Gateway {
    Gateway::start_with(GatewayOptions {
        kind,
        ..GatewayOptions::default()
    })
    .await
}

fn body() -> Value {
    json!({"model": "m", "max_tokens": 50, "stop_sequences": ["END", "\n\nHuman:"], "top_k": 40,
           "messages": [{"role": "user", "content": "count to three, then say END"}]})
}

#[tokio::test]
async fn stop_sequences_and_top_k_reach_each_kind_and_the_sequence_comes_back() {
    for kind in [UpstreamKind::Chat, UpstreamKind::Anthropic] {
        let gw = gateway(kind).await;
        gw.upstream
            .push(Reply::text("one two three").stop_sequence("END"));
        let (status, text) = create(&gw, &body()).await;
        assert_eq!(status, 200, "{kind:?}: {text}");
        let msg: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(msg["stop_reason"], "stop_sequence", "{kind:?}: {msg}");
        assert_eq!(msg["stop_sequence"], "END");
        assert_eq!(msg["content"][0]["text"], "one two three");
        let sent = gw.upstream.last_request().expect("sent");
        let (stop, top_k) = match kind {
            UpstreamKind::Anthropic => (&sent["stop_sequences"], &sent["top_k"]),
            _ => (&sent["stop"], &sent["top_k"]),
        };
        assert_eq!(stop, &json!(["END", "\n\nHuman:"]), "{kind:?}: {sent}");
        assert_eq!(top_k, &json!(40), "{kind:?}: {sent}");

        // Streamed: the sequence is on `message_delta`.
        gw.upstream
            .push(Reply::text("one two three").stop_sequence("END"));
        let mut streamed = body();
        streamed["stream"] = json!(true);
        let (status, text) = create(&gw, &streamed).await;
        assert_eq!(status, 200, "{kind:?}: {text}");
        let delta = text
            .split("\n\n")
            .find(|f| f.starts_with("event: message_delta"))
            .expect("message_delta");
        let data: Value =
            serde_json::from_str(delta.split_once("data: ").unwrap().1).expect("json");
        assert_eq!(data["delta"]["stop_reason"], "stop_sequence", "{data}");
        assert_eq!(data["delta"]["stop_sequence"], "END", "{data}");

        // A text that ended by itself: `end_turn`, no sequence.
        gw.upstream.push(Reply::text("one two"));
        let (_, text) = create(&gw, &body()).await;
        let msg: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(msg["stop_reason"], "end_turn", "{kind:?}: {msg}");
        assert_eq!(msg["stop_sequence"], Value::Null);
    }
}

#[tokio::test]
async fn without_them_nothing_is_sent() {
    let gw = gateway(UpstreamKind::Chat).await;
    gw.upstream.push(Reply::text("hi"));
    let mut plain = body();
    plain.as_object_mut().unwrap().remove("top_k");
    plain["stop_sequences"] = json!([]);
    let (status, text) = create(&gw, &plain).await;
    assert_eq!(status, 200, "{text}");
    let sent = gw.upstream.last_request().expect("sent");
    assert!(sent.get("stop").is_none(), "{sent}");
    assert!(sent.get("top_k").is_none(), "{sent}");
}

#[tokio::test]
async fn a_responses_upstream_refuses_them_by_name_before_anything_runs() {
    let gw = gateway(UpstreamKind::Responses).await;
    for (field, value, named) in [
        ("stop_sequences", json!(["END"]), "stop_sequences"),
        ("top_k", json!(5), "top_k"),
    ] {
        let mut req = json!({"model": "m", "max_tokens": 50,
                             "messages": [{"role": "user", "content": "hi"}]});
        req[field] = value;
        let (status, text) = create(&gw, &req).await;
        assert_eq!(status, 400, "{field}: {text}");
        let err: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(err["error"]["type"], "invalid_request_error", "{err}");
        let message = err["error"]["message"].as_str().unwrap();
        assert!(message.contains("Responses upstream"), "{message}");
        assert!(message.contains(named), "{message}");
    }
    // Bad values are the client's error on every kind.
    let mut req = body();
    req["stop_sequences"] = json!(["END", ""]);
    let (status, text) = create(&gw, &req).await;
    assert_eq!(status, 400, "{text}");
    assert!(text.contains("stop_sequences.1"), "{text}");
    assert!(
        gw.upstream.requests().is_empty(),
        "nothing reached the upstream"
    );
}

#[tokio::test]
async fn the_responses_surface_takes_them_as_extensions() {
    let gw = gateway(UpstreamKind::Chat).await;
    gw.upstream.push(Reply::text("a b").stop_sequence("STOP"));
    let (status, resp) = gw
        .post_json(
            "/v1/responses",
            &json!({"model": "m", "input": "hi", "stop": ["STOP"], "top_k": 3, "store": false}),
        )
        .await;
    assert_eq!(status, 200, "{resp}");
    assert_eq!(resp["stop_sequence"], "STOP", "{resp}");
    let sent = gw.upstream.last_request().expect("sent");
    assert_eq!(sent["stop"], json!(["STOP"]), "{sent}");
    assert_eq!(sent["top_k"], 3, "{sent}");

    let (status, err) = gw
        .post_json(
            "/v1/responses",
            &json!({"model": "m", "input": "hi", "top_k": 0}),
        )
        .await;
    assert_eq!(status, 400, "{err}");
    assert_eq!(err["error"]["param"], "top_k", "{err}");
}
