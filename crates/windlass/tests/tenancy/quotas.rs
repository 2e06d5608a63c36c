//! Quotas over real HTTP: past a key's or a tenant's requests or tokens per
//! minute a create is answered 429 with `Retry-After`, in OpenAI's shape,
//! and the upstream never sees it.

use serde_json::{json, Value};
use windlass_engine::QuotaLimits;
use windlass_testkit::tenants::*;
use windlass_testkit::{Gateway, GatewayOptions, Reply};

fn hi() -> Value {
    json!({"model": "m", "input": "hi"})
}

async fn post_as(gw: &Gateway, name: &str, body: &Value) -> (u16, Option<String>, Value) {
    let req = gw
        .client
        .post(gw.url("/v1/responses"))
        .header("authorization", format!("Bearer sk-{name}"))
        .json(body);
    read_with_retry(req).await
}

/// The 429 answer: status, `Retry-After` in whole seconds, the error shape.
fn assert_rate_limited(got: &(u16, Option<String>, Value), kind: &str) {
    let (status, retry, body) = got;
    let e = error_of(*status, body, 429);
    assert_eq!(e["type"], kind, "{body}");
    assert_eq!(e["code"], "rate_limit_exceeded", "{body}");
    let secs: u64 = retry
        .as_deref()
        .expect("Retry-After")
        .parse()
        .expect("seconds");
    assert!((1..=3600).contains(&secs), "{secs}");
}

#[tokio::test]
async fn a_key_past_its_requests_per_minute_gets_429() {
    let mut opts = GatewayOptions::default();
    let mut limited = key("limited", "acme");
    limited.requests_per_minute = Some(2);
    opts.server.keys = resolve(&[limited, key("free", "acme")]);
    let gw = Gateway::start_with(opts).await;
    gw.upstream
        .push_all([Reply::text("one"), Reply::text("two"), Reply::text("three")]);

    for _ in 0..2 {
        let (s, _, b) = post_as(&gw, "limited", &hi()).await;
        assert_eq!(s, 200, "{b}");
    }
    let third = post_as(&gw, "limited", &hi()).await;
    assert_rate_limited(&third, "requests");
    assert_eq!(
        gw.upstream.request_count(),
        2,
        "the upstream saw the refused request"
    );
    // The limit is the key's: another key of the same tenant is served.
    let (s, _, b) = post_as(&gw, "free", &hi()).await;
    assert_eq!(s, 200, "{b}");
}

#[tokio::test]
async fn a_tenants_requests_are_counted_over_all_its_keys() {
    let mut opts = GatewayOptions::default();
    opts.server.keys = resolve(&[
        key("alice", "acme"),
        key("amy", "acme"),
        key("bob", "globex"),
    ]);
    opts.server.tenants.insert(
        "acme".into(),
        QuotaLimits {
            requests_per_minute: Some(1),
            tokens_per_minute: None,
        },
    );
    let gw = Gateway::start_with(opts).await;
    gw.upstream
        .push_all([Reply::text("one"), Reply::text("two")]);

    let (s, _, b) = post_as(&gw, "alice", &hi()).await;
    assert_eq!(s, 200, "{b}");
    let amy = post_as(&gw, "amy", &hi()).await;
    assert_rate_limited(&amy, "requests");
    assert!(amy.2["error"]["message"]
        .as_str()
        .unwrap()
        .contains("tenant:acme"));
    assert_eq!(gw.upstream.request_count(), 1);
    let (s, _, b) = post_as(&gw, "bob", &hi()).await;
    assert_eq!(s, 200, "another tenant is not limited: {b}");
}

#[tokio::test]
async fn a_tenant_over_its_tokens_is_refused_on_the_next_request() {
    let mut opts = GatewayOptions::default();
    opts.server.keys = resolve(&[key("alice", "acme"), key("bob", "globex")]);
    opts.server.tenants.insert(
        "acme".into(),
        QuotaLimits {
            requests_per_minute: None,
            tokens_per_minute: Some(100),
        },
    );
    let gw = Gateway::start_with(opts).await;
    // 150 tokens: admitted with a full budget, charged when it ends (here
    // streamed: charged before the stream's end).
    gw.upstream
        .push(Reply::text("a long answer").usage(120, 30));
    let mut live = As::new(&gw, "alice").stream(&hi()).await;
    read_until(&mut live, "[DONE]").await;

    let next = post_as(&gw, "alice", &hi()).await;
    assert_rate_limited(&next, "tokens");
    assert_eq!(gw.upstream.request_count(), 1);
    gw.upstream.push(Reply::text("fine"));
    let (s, _, b) = post_as(&gw, "bob", &hi()).await;
    assert_eq!(s, 200, "{b}");
}

/// Without keys (the flag-less simple case) the default tenant's budget
/// applies to everyone.
#[tokio::test]
async fn the_default_tenant_has_budgets_too() {
    let mut opts = GatewayOptions::default();
    opts.server.tenants.insert(
        "default".into(),
        QuotaLimits {
            requests_per_minute: None,
            tokens_per_minute: Some(10),
        },
    );
    let gw = Gateway::start_with(opts).await;
    gw.upstream.push(Reply::text("answer").usage(20, 5));
    let (s, b) = gw.post_json("/v1/responses", &hi()).await;
    assert_eq!(s, 200, "{b}");
    let req = gw.client.post(gw.url("/v1/responses")).json(&hi());
    let next = read_with_retry(req).await;
    assert_rate_limited(&next, "tokens");
    assert_eq!(gw.upstream.request_count(), 1);
}

/// A gateway whose key `limited` may make one request a minute, with one
/// answer queued upstream.
async fn one_unit_gateway() -> Gateway {
    let mut opts = GatewayOptions::default();
    let mut limited = key("limited", "acme");
    limited.requests_per_minute = Some(1);
    opts.server.keys = resolve(&[limited]);
    let gw = Gateway::start_with(opts).await;
    gw.upstream.push(Reply::text("served"));
    gw
}

/// Only admitted work is charged: creates refused with a 400 (an unknown
/// `previous_response_id`, a bad tool) take no request unit, so the key's
/// one unit is still there for a good request.
#[tokio::test]
async fn a_request_refused_with_400_is_not_charged() {
    let gw = one_unit_gateway().await;

    let unknown_previous =
        json!({"model": "m", "input": "hi", "previous_response_id": "resp_nope"});
    let bad_tool = json!({"model": "m", "input": "hi",
        "tools": [{"type": "function", "name": "bad name!", "parameters": {}}]});
    for body in [&unknown_previous, &bad_tool, &unknown_previous] {
        let (s, _, b) = post_as(&gw, "limited", body).await;
        assert!((400..500).contains(&s) && s != 429, "{s} {b}");
    }
    let (s, _, b) = post_as(&gw, "limited", &hi()).await;
    assert_eq!(s, 200, "the refused requests were charged: {b}");
    // And the unit is now spent.
    let (s, _, b) = post_as(&gw, "limited", &hi()).await;
    assert_eq!(s, 429, "{b}");
}

/// The same on `/v1/messages`: a server tool no executor serves is refused
/// (400, `unsupported_tool_type`) before admission, so it takes no unit.
#[tokio::test]
async fn a_refused_messages_server_tool_is_not_charged() {
    let gw = one_unit_gateway().await;
    let message = |tools: Value| {
        let body = json!({"model": "m", "max_tokens": 50, "tools": tools,
                          "messages": [{"role": "user", "content": "hi"}]});
        gw.client
            .post(gw.url("/v1/messages"))
            .header("x-api-key", "sk-limited")
            .header("anthropic-version", "2023-06-01")
            .json(&body)
    };
    let unserved = json!([{"type": "web_search_20250305", "name": "web_search"}]);
    for _ in 0..2 {
        let (s, _, b) = read_with_retry(message(unserved.clone())).await;
        assert_eq!(s, 400, "{b}");
        assert_eq!(b["error"]["type"], "invalid_request_error", "{b}");
    }
    let (s, _, b) = read_with_retry(message(json!([]))).await;
    assert_eq!(s, 200, "the refused requests were charged: {b}");
    let (s, _, b) = read_with_retry(message(json!([]))).await;
    assert_eq!(s, 429, "{b}");
}
