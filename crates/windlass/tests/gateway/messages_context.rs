//! `/v1/messages` `context_management`: Claude Code's
//! `clear_thinking_20251015` (`keep: "all"` and a number of turns),
//! `compact_20260112` through the engine's compaction (a `compaction`
//! block, sent back by the client), and the edits Windlass refuses.

use serde_json::{json, Value};
use windlass_providers::UpstreamKind;
use windlass_testkit::{Gateway, GatewayOptions, Reply};

async fn gateway(kind: UpstreamKind) -> Gateway {
    Gateway::start_with(GatewayOptions {
        kind,
        ..GatewayOptions::default()
    })
    .await
}

async fn post(gw: &Gateway, body: &Value) -> (u16, Value) {
    let resp = gw
        .client
        .post(gw.url("/v1/messages?beta=true"))
        .header("anthropic-version", "2023-06-01")
        .header("anthropic-beta", "context-management-2025-06-27")
        .json(body)
        .send()
        .await
        .expect("send");
    (resp.status().as_u16(), resp.json().await.expect("json"))
}

fn thought(text: &str, sig: &str) -> Value {
    json!({"type": "thinking", "thinking": text, "signature": sig})
}

/// Two earlier assistant turns, each with its thinking, as Claude Code
/// sends a conversation back.
fn with_thinking(edits: Value) -> Value {
    json!({"model": "m", "max_tokens": 4000,
    "thinking": {"type": "enabled", "budget_tokens": 2000},
    "context_management": {"edits": edits},
    "messages": [
        {"role": "user", "content": "one"},
        {"role": "assistant", "content": [thought("first thought", "s1"),
                                          {"type": "text", "text": "1"}]},
        {"role": "user", "content": "two"},
        {"role": "assistant", "content": [thought("second thought", "s2"),
                                          {"type": "text", "text": "2"}]},
        {"role": "user", "content": "three"}
    ]})
}

fn sent_thinking(sent: &Value) -> Vec<String> {
    sent["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter(|b| b["type"] == "thinking")
        .map(|b| b["thinking"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn clear_thinking_keeps_all_or_the_last_turns() {
    let gw = gateway(UpstreamKind::Anthropic).await;
    // What Claude Code sends: everything kept.
    gw.upstream.push(Reply::text("3"));
    let body = with_thinking(json!([{"type": "clear_thinking_20251015", "keep": "all"}]));
    let (status, msg) = post(&gw, &body).await;
    assert_eq!(status, 200, "{msg}");
    assert_eq!(msg["content"][0]["text"], "3");
    let sent = gw.upstream.last_request().expect("sent");
    assert_eq!(sent_thinking(&sent), ["first thought", "second thought"]);

    // The last turn's thinking only.
    gw.upstream.push(Reply::text("3"));
    let keep_one = json!([{"type": "clear_thinking_20251015",
                           "keep": {"type": "thinking_turns", "value": 1}}]);
    let (status, msg) = post(&gw, &with_thinking(keep_one)).await;
    assert_eq!(status, 200, "{msg}");
    let sent = gw.upstream.last_request().expect("sent");
    assert_eq!(sent_thinking(&sent), ["second thought"]);
    // The cleared turn's text is still there.
    assert_eq!(sent["messages"][1]["content"][0]["text"], "1", "{sent}");
}

#[tokio::test]
async fn edits_windlass_cannot_honour_are_refused_by_name() {
    let gw = gateway(UpstreamKind::Chat).await;
    let cases = [
        (
            json!([{"type": "clear_tool_uses_20250919",
                    "trigger": {"type": "input_tokens", "value": 30000}}]),
            "context_management.edits.0.type",
            "compact_20260112",
        ),
        (
            json!([{"type": "compact_20260112", "pause_after_compaction": true}]),
            "context_management.edits.0.pause_after_compaction",
            "pausing",
        ),
        (
            json!([{"type": "compact_20260112", "instructions": "be terse"}]),
            "context_management.edits.0.instructions",
            "instructions",
        ),
        (
            json!([{"type": "summarize_20990101"}]),
            "context_management.edits.0.type",
            "summarize_20990101",
        ),
    ];
    for (edits, path, says) in cases {
        let (status, err) = post(&gw, &with_thinking(edits)).await;
        assert_eq!(status, 400, "{err}");
        let message = err["error"]["message"].as_str().unwrap();
        assert!(message.starts_with(path), "{message}");
        assert!(message.contains(says), "{message}");
    }
    // clear_thinking needs thinking, as Anthropic says.
    let mut body = with_thinking(json!([{"type": "clear_thinking_20251015", "keep": "all"}]));
    body.as_object_mut().unwrap().remove("thinking");
    let (status, err) = post(&gw, &body).await;
    assert_eq!(status, 400, "{err}");
    assert!(err["error"]["message"]
        .as_str()
        .unwrap()
        .contains("requires `thinking`"));
    assert!(
        gw.upstream.requests().is_empty(),
        "nothing reached the upstream"
    );
}

fn long_conversation(turns: usize) -> Vec<Value> {
    let filler = "lorem ipsum dolor sit amet ".repeat(40);
    let mut messages = Vec::new();
    for i in 0..turns {
        messages.push(json!({"role": "user", "content": format!("question {i}: {filler}")}));
        messages.push(json!({"role": "assistant", "content": format!("answer {i}: {filler}")}));
    }
    messages.push(json!({"role": "user", "content": "the newest question"}));
    messages
}

fn sent_texts(sent: &Value) -> Vec<String> {
    sent["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["content"].as_str().map(str::to_owned))
        .collect()
}

#[tokio::test]
async fn compaction_past_the_trigger_returns_a_block_the_client_sends_back() {
    let gw = gateway(UpstreamKind::Chat).await;
    gw.upstream
        .push(Reply::text("SUMMARY: six answers about lorem ipsum."));
    gw.upstream.push(Reply::text("Answered from the summary."));
    let edits = json!({"edits": [{"type": "compact_20260112",
                                  "trigger": {"type": "input_tokens", "value": 300}}]});
    let body = json!({"model": "m", "max_tokens": 200, "context_management": edits,
                      "messages": long_conversation(6)});
    let (status, msg) = post(&gw, &body).await;
    assert_eq!(status, 200, "{msg}");
    let compaction = &msg["content"][0];
    assert_eq!(compaction["type"], "compaction", "{msg}");
    assert_eq!(
        compaction["content"],
        "SUMMARY: six answers about lorem ipsum."
    );
    assert!(compaction["encrypted_content"].is_string(), "{msg}");
    assert_eq!(msg["content"][1]["text"], "Answered from the summary.");
    let reqs = gw.upstream.requests();
    assert_eq!(reqs.len(), 2, "the summary pass, then the answer");
    let turn = sent_texts(&reqs[1]);
    assert!(!turn.iter().any(|t| t.starts_with("answer ")), "{turn:?}");
    assert!(
        turn.iter().any(|t| t.contains("SUMMARY: six answers")),
        "{turn:?}"
    );

    // The client sends the block back with the conversation: the model
    // reads the summary instead of the old answers, and nothing is
    // compacted again below the trigger.
    gw.upstream.clear_requests();
    gw.upstream.push(Reply::text("Still fine."));
    let mut messages = vec![
        json!({"role": "user", "content": "the newest question"}),
        json!({"role": "assistant", "content": msg["content"].clone()}),
        json!({"role": "user", "content": "and then?"}),
    ];
    let mut next = body.clone();
    next["messages"] = Value::Array(std::mem::take(&mut messages));
    next["context_management"]["edits"][0]["trigger"]["value"] = json!(100_000);
    let (status, msg) = post(&gw, &next).await;
    assert_eq!(status, 200, "{msg}");
    let reqs = gw.upstream.requests();
    assert_eq!(reqs.len(), 1);
    let turn = sent_texts(&reqs[0]);
    assert!(
        turn.iter().any(|t| t.contains("SUMMARY: six answers")),
        "{turn:?}"
    );
    assert_eq!(turn.last().map(String::as_str), Some("and then?"));
}
