//! `truncation: "auto"`, `context_management` (compaction on create) and
//! `POST /v1/responses/input_tokens`, through the gateway in front of the
//! scripted upstream with a small configured context length. The fake
//! upstream has no tokenizer, so Windlass's estimate counts (a quarter of
//! the characters of the chat body).

use serde_json::{json, Value};
use windlass::engine::compaction::open;
use windlass_providers::Tokenizer;
use windlass_testkit::{Gateway, GatewayOptions, Reply};

/// A gateway whose model has a context of `context` tokens.
async fn gateway(context: u64) -> Gateway {
    let mut opts = GatewayOptions::default();
    opts.provider.context_length = Some(context);
    opts.provider.tokenizer = Tokenizer::None;
    Gateway::start_with(opts).await
}

fn filler(tag: &str, n: usize) -> String {
    format!("{tag}: {}", "lorem ipsum dolor sit amet ".repeat(n))
}

/// A long conversation: user and assistant turns, then a short question.
fn long_conversation(turns: usize) -> Value {
    let mut items = Vec::new();
    for i in 0..turns {
        items.push(json!({"type": "message", "role": "user", "content": format!("question {i}")}));
        items.push(json!({"type": "message", "role": "assistant", "content": filler(&format!("answer {i}"), 12)}));
    }
    items.push(json!({"type": "message", "role": "user", "content": "the newest question"}));
    Value::Array(items)
}

fn sent_texts(request: &Value) -> Vec<String> {
    request["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .map(|m| match &m["content"] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect()
}

#[tokio::test]
async fn truncation_auto_drops_the_oldest_items_and_the_response_completes() {
    let gw = gateway(400).await;
    gw.upstream.push(Reply::text("Answered."));
    let input = long_conversation(10);
    let (status, r) = gw
        .post_json(
            "/v1/responses",
            &json!({"model": "m", "input": input, "truncation": "auto",
                    "instructions": "Be brief."}),
        )
        .await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["status"], "completed");
    assert_eq!(r["truncation"], "auto");
    let sent = sent_texts(&gw.upstream.last_request().expect("upstream called"));
    // Instructions stay, the newest question stays, the oldest turns went.
    assert_eq!(sent[0], "Be brief.");
    assert_eq!(sent.last().map(String::as_str), Some("the newest question"));
    assert!(!sent.iter().any(|t| t == "question 0"), "{sent:?}");
    assert!(sent.len() < 22, "nothing dropped: {} messages", sent.len());
    let chars: usize = sent.iter().map(String::len).sum();
    assert!(chars / 4 <= 350, "still over the budget: {chars} chars");
}

#[tokio::test]
async fn without_truncation_the_whole_transcript_goes_up() {
    let gw = gateway(400).await;
    gw.upstream.push(Reply::text("Answered."));
    let (status, r) = gw
        .post_json(
            "/v1/responses",
            &json!({"model": "m", "input": long_conversation(10)}),
        )
        .await;
    assert_eq!(status, 200, "{r}");
    let sent = sent_texts(&gw.upstream.last_request().expect("upstream called"));
    assert_eq!(sent.len(), 21);
}

#[tokio::test]
async fn a_newest_item_longer_than_the_context_fails_context_length_exceeded() {
    let gw = gateway(100).await;
    let (status, r) = gw
        .post_json(
            "/v1/responses",
            &json!({"model": "m", "input": filler("huge", 80), "truncation": "auto"}),
        )
        .await;
    assert_eq!(status, 400, "{r}");
    assert_eq!(r["error"]["code"], "context_length_exceeded", "{r}");
    assert!(gw.upstream.requests().is_empty(), "the model was called");
}

#[tokio::test]
async fn compaction_on_create_writes_a_compaction_item_and_the_model_reads_the_summary() {
    let gw = gateway(100_000).await;
    gw.upstream
        .push(Reply::text("SUMMARY: ten answers about lorem ipsum."));
    gw.upstream.push(Reply::text("Answered from the summary."));
    let (status, r) = gw
        .post_json(
            "/v1/responses",
            &json!({"model": "m", "input": long_conversation(6),
                    "context_management": [{"type": "compaction", "compact_threshold": 300}]}),
        )
        .await;
    assert_eq!(status, 200, "{r}");
    let output = r["output"].as_array().expect("output");
    let types: Vec<&str> = output
        .iter()
        .map(|i| i["type"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(types, ["compaction", "message"], "{r}");
    let sealed = output[0]["encrypted_content"].as_str().expect("sealed");
    assert_eq!(
        open(sealed).as_deref(),
        Some("SUMMARY: ten answers about lorem ipsum.")
    );
    assert!(
        output[0]["id"].as_str().unwrap_or("").starts_with("cmp_"),
        "{r}"
    );
    let requests = gw.upstream.requests();
    assert_eq!(requests.len(), 2);
    // The compaction pass saw the whole conversation...
    assert!(sent_texts(&requests[0])
        .iter()
        .any(|t| t.starts_with("answer 0")));
    // ...the model's turn sees the user's turns and the summary instead.
    let turn = sent_texts(&requests[1]);
    assert!(!turn.iter().any(|t| t.starts_with("answer ")), "{turn:?}");
    assert!(
        turn.iter().any(|t| t.contains("SUMMARY: ten answers")),
        "{turn:?}"
    );
    assert_eq!(turn.last().map(String::as_str), Some("the newest question"));

    // A continuation starts from the compaction too.
    gw.upstream.push(Reply::text("Still fine."));
    let (status, next) = gw
        .post_json(
            "/v1/responses",
            &json!({"model": "m", "input": "and then?", "previous_response_id": r["id"]}),
        )
        .await;
    assert_eq!(status, 200, "{next}");
    let turn = sent_texts(&gw.upstream.last_request().expect("called"));
    assert!(!turn.iter().any(|t| t.starts_with("answer ")), "{turn:?}");
    assert!(turn.iter().any(|t| t.contains("SUMMARY")), "{turn:?}");
    assert_eq!(turn.last().map(String::as_str), Some("and then?"));
}

#[tokio::test]
async fn below_the_threshold_nothing_is_compacted() {
    let gw = gateway(100_000).await;
    gw.upstream.push(Reply::text("Short."));
    let (status, r) = gw
        .post_json(
            "/v1/responses",
            &json!({"model": "m", "input": "hi",
                    "context_management": [{"type": "compaction", "compact_threshold": 5000}]}),
        )
        .await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["output"].as_array().map(Vec::len), Some(1), "{r}");
    assert_eq!(gw.upstream.requests().len(), 1);
}

#[tokio::test]
async fn input_tokens_counts_the_whole_input_without_calling_the_model() {
    let gw = gateway(100_000).await;
    let (status, small) = gw
        .post_json(
            "/v1/responses/input_tokens",
            &json!({"model": "m", "input": "hello"}),
        )
        .await;
    assert_eq!(status, 200, "{small}");
    assert_eq!(small["object"], "response.input_tokens");
    assert_eq!(small["count_method"], "estimate");
    let small_n = small["input_tokens"].as_u64().expect("count");
    assert!(small_n > 0);
    // Instructions and tools count too.
    let (_, more) = gw
        .post_json(
            "/v1/responses/input_tokens",
            &json!({"model": "m", "input": "hello", "instructions": filler("rules", 10),
                    "tools": [{"type": "function", "name": "lookup", "description": "Looks things up",
                               "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}]}),
        )
        .await;
    assert!(
        more["input_tokens"].as_u64().expect("count") > small_n + 50,
        "{more}"
    );
    assert!(gw.upstream.requests().is_empty(), "the model was called");

    // The history of previous_response_id counts.
    gw.upstream.push(Reply::text(filler("a long answer", 20)));
    let (_, first) = gw
        .post_json("/v1/responses", &json!({"model": "m", "input": "hello"}))
        .await;
    let (status, chained) = gw
        .post_json(
            "/v1/responses/input_tokens",
            &json!({"model": "m", "input": "hello", "previous_response_id": first["id"]}),
        )
        .await;
    assert_eq!(status, 200, "{chained}");
    assert!(
        chained["input_tokens"].as_u64().expect("count") > small_n + 100,
        "{chained}"
    );

    // Refused as a create is: an unknown previous response.
    let (status, err) = gw
        .post_json(
            "/v1/responses/input_tokens",
            &json!({"model": "m", "input": "x", "previous_response_id": "resp_nope"}),
        )
        .await;
    assert_eq!(status, 400, "{err}");
    assert_eq!(err["error"]["code"], "previous_response_not_found");
    // The route is not swallowed by `/responses/{id}`.
    let (status, _) = gw.get_json("/v1/responses/input_tokens").await;
    assert_ne!(status, 200);
}

#[tokio::test]
async fn input_tokens_counts_what_truncation_would_send() {
    let gw = gateway(400).await;
    let body = |truncation: &str| json!({"model": "m", "input": long_conversation(10), "truncation": truncation});
    let (status, whole) = gw
        .post_json("/v1/responses/input_tokens", &body("disabled"))
        .await;
    assert_eq!(status, 200, "{whole}");
    let (status, cut) = gw
        .post_json("/v1/responses/input_tokens", &body("auto"))
        .await;
    assert_eq!(status, 200, "{cut}");
    let (whole, cut) = (
        whole["input_tokens"].as_u64().expect("count"),
        cut["input_tokens"].as_u64().expect("count"),
    );
    assert!(whole > 400, "{whole}");
    assert!(cut <= 350, "{cut}");
    assert!(gw.upstream.requests().is_empty());
}
