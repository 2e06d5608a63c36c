//! Prompts per tenant: another tenant's prompt is exactly an unknown id on
//! every prompts route and as `prompt` on create or `input_tokens`.

use serde_json::json;
use windlass_testkit::tenants::*;
use windlass_testkit::{Gateway, GatewayOptions, Reply};

const UNKNOWN: &str = "pmpt_0123456789abcdef0123456789abcdef";

async fn call(who: &As<'_>, method: &str, path: &str) -> (u16, serde_json::Value) {
    match method {
        "GET" => who.get(path).await,
        "POST" => who.post(path, &json!({"instructions": "x"})).await,
        _ => who.delete(path).await,
    }
}

#[tokio::test]
async fn another_tenants_prompt_is_an_unknown_id() {
    let mut opts = GatewayOptions::default();
    opts.server.keys = resolve(&[key("alice", "acme"), key("bob", "globex")]);
    let gw = Gateway::start_with(opts).await;
    let (alice, bob) = (As::new(&gw, "alice"), As::new(&gw, "bob"));
    let (s, p) = alice
        .post(
            "/v1/prompts",
            &json!({"instructions": "Acme's secret voice."}),
        )
        .await;
    assert_eq!(s, 200, "{p}");
    let id = p["id"].as_str().expect("id").to_owned();

    let paths = |id: &str| {
        vec![
            ("GET", format!("/v1/prompts/{id}")),
            ("GET", format!("/v1/prompts/{id}/versions")),
            ("GET", format!("/v1/prompts/{id}/versions/1")),
            ("POST", format!("/v1/prompts/{id}/versions")),
            ("DELETE", format!("/v1/prompts/{id}")),
        ]
    };
    for ((method, path), (_, unknown)) in paths(&id).into_iter().zip(paths(UNKNOWN)) {
        let (s, b) = call(&bob, method, &path).await;
        let (us, ub) = call(&bob, method, &unknown).await;
        assert_eq!(s, 404, "{method} {path}: {b}");
        assert_eq!(
            (s, without(&b, &id)),
            (us, without(&ub, UNKNOWN)),
            "{method} {path}"
        );
    }
    let (_, list) = bob.get("/v1/prompts").await;
    assert_eq!(list["data"], json!([]), "{list}");
    for route in ["/v1/responses", "/v1/responses/input_tokens"] {
        let (s, b) = bob
            .post(
                route,
                &json!({"model": "m", "input": "hi", "prompt": {"id": id}}),
            )
            .await;
        let (us, ub) = bob
            .post(
                route,
                &json!({"model": "m", "input": "hi", "prompt": {"id": UNKNOWN}}),
            )
            .await;
        assert_eq!(s, 404, "{route}: {b}");
        assert_eq!(
            (s, without(&b, &id)),
            (us, without(&ub, UNKNOWN)),
            "{route}"
        );
    }
    assert!(gw.upstream.requests().is_empty());
    // Its own tenant still has it, unchanged.
    gw.upstream.push(Reply::text("ok"));
    let (s, r) = alice
        .post(
            "/v1/responses",
            &json!({"model": "m", "input": "hi", "prompt": {"id": id}}),
        )
        .await;
    assert_eq!(s, 200, "{r}");
    let sent = gw.upstream.last_request().expect("called");
    assert_eq!(sent["messages"][0]["content"], "Acme's secret voice.");
}
