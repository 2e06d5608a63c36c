//! `POST /v1/responses/compact`: the upstream model summarises the
//! conversation with the compaction prompt; the returned compaction item,
//! given back as input, reaches the upstream as that summary instead of the
//! history it replaces.

use serde_json::{json, Value};
use windlass::engine::compaction::{open, seal};
use windlass::engine::COMPACTION_PROMPT;
use windlass_testkit::{Gateway, Reply};

fn conversation() -> Value {
    json!([
        {"type": "message", "role": "user", "content": "We launch on Tuesday."},
        {"type": "message", "role": "assistant", "content": "Understood: Tuesday, support first."},
        {"type": "message", "role": "user", "content": "And the code word is slate."}
    ])
}

fn texts(request: &Value) -> Vec<(String, String)> {
    request["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .map(|m| {
            let text = match &m["content"] {
                Value::String(s) => s.clone(),
                Value::Array(parts) => parts
                    .iter()
                    .filter_map(|p| p["text"].as_str())
                    .collect::<Vec<_>>()
                    .join(""),
                other => other.to_string(),
            };
            (m["role"].as_str().unwrap_or_default().to_owned(), text)
        })
        .collect()
}

#[tokio::test]
async fn compact_returns_the_user_turns_and_a_compaction_item_the_next_request_reads_as_summary() {
    let gw = Gateway::start().await;
    gw.upstream
        .push(Reply::text("Launch Tuesday, support first; code word slate.").usage(40, 9));
    let (status, c) = gw
        .post_json(
            "/v1/responses/compact",
            &json!({"model": "m", "input": conversation()}),
        )
        .await;
    assert_eq!(status, 200, "{c}");
    assert_eq!(c["object"], "response.compaction");
    assert!(c["id"].as_str().unwrap().starts_with("resp_"), "{c}");
    assert!(c["created_at"].is_u64());
    assert_eq!(c["usage"]["input_tokens"], 40);
    assert_eq!(c["usage"]["output_tokens"], 9);
    assert_eq!(c["usage"]["total_tokens"], 49);
    let output = c["output"].as_array().expect("output");
    let types: Vec<&str> = output.iter().map(|i| i["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["message", "message", "compaction"], "{c}");
    assert!(output[..2].iter().all(|m| m["role"] == "user"), "{c}");
    let item = &output[2];
    assert!(item["id"].as_str().unwrap().starts_with("cmp_"), "{item}");
    let sealed = item["encrypted_content"].as_str().unwrap();
    assert_eq!(
        open(sealed).as_deref(),
        Some("Launch Tuesday, support first; code word slate.")
    );

    // The pass: the documented prompt, the whole conversation, no tools.
    let pass = gw.upstream.requests().pop().unwrap();
    let sent = texts(&pass);
    assert_eq!(sent[0], ("system".to_owned(), COMPACTION_PROMPT.to_owned()));
    assert_eq!(sent[2].1, "Understood: Tuesday, support first.");
    assert!(pass
        .get("tools")
        .is_none_or(|t| t.as_array().is_some_and(Vec::is_empty)));
    // Compacting stores nothing.
    let (s, _) = gw
        .get_json(&format!("/v1/responses/{}", c["id"].as_str().unwrap()))
        .await;
    assert_eq!(s, 404);

    // Continue from the compacted window: the assistant turn is gone, the
    // summary stands in for it.
    gw.upstream.push(Reply::text("slate"));
    let mut input = output.clone();
    input.push(json!({"type": "message", "role": "user", "content": "The code word?"}));
    let (status, r) = gw
        .post_json("/v1/responses", &json!({"model": "m", "input": input}))
        .await;
    assert_eq!(status, 200, "{r}");
    let sent = texts(&gw.upstream.requests().pop().unwrap());
    let roles: Vec<&str> = sent.iter().map(|(r, _)| r.as_str()).collect();
    assert_eq!(roles, ["user", "user", "user", "user"], "{sent:?}");
    assert!(sent[2]
        .1
        .contains("Launch Tuesday, support first; code word slate."));
    assert!(
        !sent.iter().any(|(_, t)| t.contains("Understood")),
        "{sent:?}"
    );
    // The compaction item is stored as given, and chains on.
    let (_, items) = gw
        .get_json(&format!(
            "/v1/responses/{}/input_items?order=asc",
            r["id"].as_str().unwrap()
        ))
        .await;
    assert_eq!(items["data"][2]["type"], "compaction", "{items}");
    assert_eq!(items["data"][2]["encrypted_content"], sealed);
    gw.upstream.push(Reply::text("Tuesday"));
    let (status, _) = gw
        .post_json(
            "/v1/responses",
            &json!({"model": "m", "previous_response_id": r["id"], "input": "When?"}),
        )
        .await;
    assert_eq!(status, 200);
    let sent = texts(&gw.upstream.requests().pop().unwrap());
    assert!(
        sent.iter().any(|(_, t)| t.contains("code word slate.")),
        "{sent:?}"
    );
}

#[tokio::test]
async fn compact_continues_a_stored_chain_and_keeps_its_own_instructions() {
    let gw = Gateway::start().await;
    gw.upstream.push(Reply::text("First answer."));
    let (_, first) = gw
        .post_json(
            "/v1/responses",
            &json!({"model": "m", "input": "Question one"}),
        )
        .await;
    gw.upstream.push(Reply::text("summary of one"));
    let (status, c) = gw
        .post_json(
            "/v1/responses/compact",
            &json!({"model": "m", "previous_response_id": first["id"],
                "input": "Question two", "instructions": "Answer in French."}),
        )
        .await;
    assert_eq!(status, 200, "{c}");
    let sent = texts(&gw.upstream.requests().pop().unwrap());
    assert!(sent[0].1.starts_with(COMPACTION_PROMPT));
    assert!(sent[0].1.ends_with("Answer in French."), "{sent:?}");
    let said: Vec<&str> = sent.iter().map(|(_, t)| t.as_str()).collect();
    assert!(said.contains(&"Question one") && said.contains(&"First answer."));
    assert!(said.contains(&"Question two"), "{said:?}");
    let kinds: Vec<&str> = c["output"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["message", "message", "compaction"]);
}

#[tokio::test]
async fn bad_compact_requests_are_refused_before_the_model() {
    let gw = Gateway::start().await;
    for (body, param) in [
        (json!({"input": "x"}), "model"),
        (
            json!({"model": "m", "input": "x", "stream": true}),
            "stream",
        ),
        (
            json!({"model": "m", "previous_response_id": "resp_missing", "input": "x"}),
            "previous_response_id",
        ),
    ] {
        let (status, e) = gw.post_json("/v1/responses/compact", &body).await;
        assert!(status == 400 || status == 404, "{status} {e}");
        assert_eq!(e["error"]["param"], param, "{e}");
    }
    // A compaction item Windlass did not make is refused by name.
    let forged = json!({"model": "m", "input": [
        {"type": "compaction", "encrypted_content": "gAAAAABforeign"},
        {"role": "user", "content": "x"}]});
    let (status, e) = gw.post_json("/v1/responses", &forged).await;
    assert_eq!(status, 400, "{e}");
    assert_eq!(e["error"]["param"], "input[0].encrypted_content");
    assert!(gw.upstream.requests().is_empty());
    // A genuine one is accepted anywhere a request takes input.
    gw.upstream.push(Reply::text("ok"));
    let genuine = json!({"model": "m", "input": [
        {"type": "compaction", "encrypted_content": seal("earlier: the sky was green")},
        {"role": "user", "content": "What colour was the sky?"}]});
    let (status, r) = gw.post_json("/v1/responses", &genuine).await;
    assert_eq!(status, 200, "{r}");
    let sent = texts(&gw.upstream.requests().pop().unwrap());
    assert!(sent[0].1.contains("earlier: the sky was green"), "{sent:?}");
}

#[tokio::test]
async fn an_upstream_failure_during_compaction_is_an_error_in_the_openai_shape() {
    let gw = Gateway::start().await;
    gw.upstream.push(Reply::error(503, "overloaded"));
    let (status, e) = gw
        .post_json(
            "/v1/responses/compact",
            &json!({"model": "m", "input": "x"}),
        )
        .await;
    assert!(status >= 500, "{status} {e}");
    assert!(e["error"]["message"].is_string(), "{e}");
    assert!(e["error"]["type"].is_string(), "{e}");
}
