//! `/v1/messages` `thinking.display: "omitted"`: thinking blocks with
//! empty text and the upstream's signature, in JSON and in the stream,
//! and the block sent back reaching the upstream with its signature.

use serde_json::{json, Value};
use windlass_providers::UpstreamKind;
use windlass_testkit::messages::post;
use windlass_testkit::{Gateway, GatewayOptions, Reply};

fn omitted() -> Value {
    json!({"model": "m", "max_tokens": 4000,
           "thinking": {"type": "enabled", "budget_tokens": 2000, "display": "omitted"},
           "messages": [{"role": "user", "content": "six times seven?"}]})
}

fn reply() -> Reply {
    Reply::text("42")
        .reasoning("Six times seven is forty-two.")
        .reasoning_signature("sig-omit")
}

#[tokio::test]
async fn omitted_thinking_keeps_the_signature_and_drops_the_text() {
    let gw = Gateway::start_with(GatewayOptions {
        kind: UpstreamKind::Anthropic,
        ..GatewayOptions::default()
    })
    .await;
    gw.upstream.push(reply());
    let (status, text) = post(&gw, &omitted()).await;
    assert_eq!(status, 200, "{text}");
    let msg: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        msg["content"][0],
        json!({"type": "thinking", "thinking": "", "signature": "sig-omit"}),
        "{msg}"
    );
    assert_eq!(msg["content"][1]["text"], "42");
    assert!(!text.contains("forty-two"), "{text}");

    // Streamed: the block opens empty, gets only its signature.
    gw.upstream.push(reply());
    let mut body = omitted();
    body["stream"] = json!(true);
    let (status, text) = post(&gw, &body).await;
    assert_eq!(status, 200, "{text}");
    assert!(!text.contains("forty-two"), "{text}");
    assert!(!text.contains("thinking_delta"), "{text}");
    let signature = text
        .split("\n\n")
        .find(|f| f.contains("signature_delta"))
        .expect("signature_delta");
    assert!(signature.contains("sig-omit"), "{signature}");
    assert!(text.contains("\"text_delta\""), "{text}");

    // The client sends the empty block back; the upstream gets it with the
    // signature (Anthropic checks the signature, not the text).
    gw.upstream.push(Reply::text("ok"));
    let mut next = omitted();
    next["messages"] = json!([
        {"role": "user", "content": "six times seven?"},
        {"role": "assistant", "content": msg["content"].clone()},
        {"role": "user", "content": "and?"}
    ]);
    let (status, text) = post(&gw, &next).await;
    assert_eq!(status, 200, "{text}");
    let sent = gw.upstream.last_request().expect("sent");
    assert_eq!(
        sent["messages"][1]["content"][0]["signature"], "sig-omit",
        "{sent}"
    );

    // `summarized` shows the text; anything else is refused by name.
    gw.upstream.push(reply());
    let mut shown = omitted();
    shown["thinking"]["display"] = json!("summarized");
    let (_, text) = post(&gw, &shown).await;
    assert!(text.contains("forty-two"), "{text}");
    shown["thinking"]["display"] = json!("hidden");
    let (status, text) = post(&gw, &shown).await;
    assert_eq!(status, 400, "{text}");
    assert!(text.contains("thinking.display"), "{text}");
}
