//! Routing by model across several upstreams of different kinds, the
//! merged model list, unknown models, and failover to a fallback upstream.

use std::sync::Arc;

use serde_json::json;
use windlass_cli::config::FileConfig;
use windlass_cli::upstreams::build_router;
use windlass_engine::ProviderError;
use windlass_providers::RouterProvider;
use windlass_testkit::scenario::*;
use windlass_testkit::{FakeUpstream, Gateway, GatewayOptions, Reply};

/// A gateway routing by the `[[upstreams]]` table `toml` (`{A}` and `{B}`
/// stand for the two fake upstreams' URLs).
async fn routed(toml: &str, a: &FakeUpstream, b: &FakeUpstream) -> (Gateway, Arc<RouterProvider>) {
    let text = toml
        .replace("{A}", &a.base_url())
        .replace("{B}", &b.base_url());
    let file: FileConfig = toml::from_str(&text).expect("valid table");
    let resolved: Vec<_> = file
        .upstreams
        .into_iter()
        .map(|u| u.resolve().expect("resolves"))
        .collect();
    let router = build_router(&resolved).expect("router");
    let opts = GatewayOptions {
        model_provider: Some(router.clone()),
        ..GatewayOptions::requires_action()
    };
    (Gateway::start_on(a.clone(), opts).await, router)
}

const TWO_KINDS: &str = r#"
[[upstreams]]
name = "local"
url = "{A}"
models = ["qwen-*"]
max_retries = 0

[[upstreams]]
name = "claude"
kind = "anthropic"
url = "{B}"
api_key = "sk-ant"
models = [{ name = "claude", upstream_name = "claude-sonnet-4-5" }]
max_retries = 0
"#;

#[tokio::test]
async fn two_models_go_to_two_upstreams_in_one_conversation() {
    let (a, b) = (FakeUpstream::start().await, FakeUpstream::start().await);
    let (gw, _) = routed(TWO_KINDS, &a, &b).await;
    let tools = funcs(&["lookup"]);
    for mode in MODES {
        a.push(Reply::tool_call("lookup", r#"{"q":"x"}"#).with_call_id("call_r"));
        let first = json!({"model": "qwen-small", "input": "look x up", "tools": tools});
        let run = create(&gw, mode, &first).await;
        assert_eq!(run.status(), "requires_action", "{mode:?}: {}", run.resp);
        assert_eq!(a.last_request().unwrap()["model"], "qwen-small");

        // The continuation switches model, and so upstream and wire format.
        b.push(Reply::text("Found it."));
        let next = json!({"model": "claude", "previous_response_id": run.id(), "tools": tools,
                          "input": [{"type": "function_call_output", "call_id": "call_r",
                                     "output": "x=1"}]});
        let run = create(&gw, mode, &next).await;
        assert_eq!(run.status(), "completed", "{mode:?}: {}", run.resp);
        assert_eq!(run.resp["model"], "claude");
        let sent = b.last_recorded_request().unwrap();
        assert_eq!(sent.body["model"], "claude-sonnet-4-5");
        assert_eq!(sent.header("x-api-key"), Some("sk-ant"));
        let blocks: Vec<_> = sent.body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|m| m["content"].as_array().unwrap().iter())
            .map(|b| b["type"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(blocks, ["text", "tool_use", "tool_result"], "{}", sent.body);
    }
    assert_eq!(a.request_count(), 2);
    assert_eq!(b.request_count(), 2);
}

#[tokio::test]
async fn an_unknown_model_is_a_400_naming_model_and_reaches_no_upstream() {
    let (a, b) = (FakeUpstream::start().await, FakeUpstream::start().await);
    let (gw, _) = routed(TWO_KINDS, &a, &b).await;
    let (s, body) = gw
        .post_json("/v1/responses", &json!({"model": "gpt-5", "input": "hi"}))
        .await;
    assert_eq!(s, 400, "{body}");
    assert_eq!(body["error"]["param"], "model", "{body}");
    assert!(
        body["error"]["message"].as_str().unwrap().contains("gpt-5"),
        "{body}"
    );
    let cap = gw.stream(&json!({"model": "gpt-5", "input": "hi"})).await;
    assert_eq!(cap.status, 400);
    assert_eq!(a.request_count() + b.request_count(), 0);
    let (s, list) = gw.get_json("/v1/responses").await;
    if s == 200 {
        assert_eq!(list["data"], json!([]), "nothing stored: {list}");
    }
}

#[tokio::test]
async fn the_model_list_merges_every_upstream() {
    let (a, b) = (FakeUpstream::start().await, FakeUpstream::start().await);
    a.set_models(vec!["qwen-small".into(), "llama-3".into()]);
    b.set_models(vec!["claude-sonnet-4-5".into()]);
    let (gw, _) = routed(TWO_KINDS, &a, &b).await;
    let (s, list) = gw.get_json("/v1/models").await;
    assert_eq!(s, 200, "{list}");
    let mut ids: Vec<_> = list["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap().to_owned())
        .collect();
    ids.sort();
    // `llama-3` is listed upstream but not routed there; `claude` is the
    // configured name of the upstream's `claude-sonnet-4-5`.
    assert_eq!(ids, ["claude", "qwen-small"]);
}

#[tokio::test]
async fn connection_failure_and_5xx_fail_over_to_the_fallback() {
    let (a, b) = (FakeUpstream::start().await, FakeUpstream::start().await);
    let table = r#"
[[upstreams]]
name = "dead"
url = "http://127.0.0.1:1/v1"
max_retries = 0
fallbacks = ["flaky", "backup"]

[[upstreams]]
name = "flaky"
url = "{A}"
max_retries = 0
models = ["nothing-routed-here"]

[[upstreams]]
name = "backup"
kind = "responses"
url = "{B}"
max_retries = 0
models = ["nothing-routed-here-either"]
"#;
    let (gw, router) = routed(table, &a, &b).await;
    let mut failovers = router.failovers();
    for mode in MODES {
        a.push(Reply::error(503, "overloaded"));
        b.push(Reply::text("From the backup."));
        let run = create(&gw, mode, &json!({"model": "m", "input": "hi"})).await;
        assert_eq!(run.status(), "completed", "{mode:?}: {}", run.resp);
        assert_eq!(final_text(&run.resp), "From the backup.");
        let first = failovers.try_recv().expect("a failover was recorded");
        assert_eq!((first.from.as_str(), first.to.as_str()), ("dead", "flaky"));
        assert!(
            matches!(first.error, ProviderError::Connect(_)),
            "{first:?}"
        );
        let second = failovers.try_recv().expect("a second failover");
        assert_eq!(
            (second.from.as_str(), second.to.as_str()),
            ("flaky", "backup")
        );
        assert!(
            matches!(second.error, ProviderError::Status { status: 503, .. }),
            "{second:?}"
        );
    }

    // A 4xx is the request's fault: no failover.
    a.push(Reply::error(400, "bad request"));
    let (s, body) = gw
        .post_json("/v1/responses", &json!({"model": "m", "input": "hi"}))
        .await;
    assert!(s >= 400, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("bad request"),
        "{body}"
    );
    assert_eq!(b.request_count(), 2, "the backup was not asked");
}
