//! MCP across tenants, with a real MCP server: an approval answering
//! another tenant's approval request, a reference to its request or to its
//! tool listing, or a continuation of its paused response are refused as
//! unknown ids; the same tenant's other key approves and the call runs.

use serde_json::{json, Value};
use windlass_testkit::tenants::*;
use windlass_testkit::{Gateway, GatewayOptions, McpFixture, PyMcp, Reply};
use windlass_tools::{McpConfig, McpServers};

fn approval(id: &str) -> Value {
    json!({"type": "mcp_approval_response", "approval_request_id": id, "approve": true})
}

fn item_of<'a>(resp: &'a Value, kind: &str) -> &'a Value {
    resp["output"]
        .as_array()
        .and_then(|o| o.iter().find(|i| i["type"] == kind))
        .unwrap_or_else(|| panic!("no {kind} in {resp}"))
}

#[tokio::test]
async fn approvals_and_listings_stay_within_their_tenant() {
    let fx = McpFixture::python(PyMcp::V2).await;
    let servers = McpServers::start(McpConfig {
        allow_hosts: vec!["127.0.0.1".into()],
        call_timeout_secs: 20,
        ..Default::default()
    });
    let mut opts = GatewayOptions {
        mcp: Some(servers.clone()),
        ..Default::default()
    };
    opts.server.keys = resolve(&[
        key("alice", "acme"),
        key("amy", "acme"),
        key("bob", "globex"),
    ]);
    let gw: Gateway = Gateway::start_with(opts).await;
    let tools = json!([{"type": "mcp", "server_label": "calc", "server_url": fx.url}]);
    let (alice, amy, bob) = (
        As::new(&gw, "alice"),
        As::new(&gw, "amy"),
        As::new(&gw, "bob"),
    );

    gw.upstream
        .push(Reply::tool_call("calc__add", r#"{"a":2,"b":3}"#));
    let paused = alice
        .create(&json!({"model": "m", "input": "2+3?", "tools": tools}))
        .await;
    let paused_id = paused["id"].as_str().unwrap();
    let req_id = item_of(&paused, "mcp_approval_request")["id"]
        .as_str()
        .unwrap();
    let list_id = item_of(&paused, "mcp_list_tools")["id"].as_str().unwrap();
    let with = |input: Value, prev: Option<&str>| {
        let mut body = json!({"model": "m", "input": input, "tools": tools});
        if let Some(p) = prev {
            body["previous_response_id"] = json!(p);
        }
        body
    };

    // Continuing alice's paused response: unknown previous response.
    let (s, b) = bob
        .post(
            "/v1/responses",
            &with(json!([approval(req_id)]), Some(paused_id)),
        )
        .await;
    assert_eq!(error_of(s, &b, 400)["param"], "previous_response_id");
    // Answering her approval request directly: an unknown request id.
    let (s, b) = bob
        .post("/v1/responses", &with(json!([approval(req_id)]), None))
        .await;
    let (us, ub) = bob
        .post(
            "/v1/responses",
            &with(json!([approval("mcpr_unknown")]), None),
        )
        .await;
    assert_eq!(
        error_of(s, &b, 400)["param"],
        "input[0].approval_request_id"
    );
    assert_eq!((s, without(&b, req_id)), (us, without(&ub, "mcpr_unknown")));
    // Pulling her request, or her server's listing, in by reference.
    for id in [req_id, list_id] {
        let input = json!([{"type": "item_reference", "id": id}, approval(req_id)]);
        let (s, b) = bob.post("/v1/responses", &with(input, None)).await;
        assert_eq!(error_of(s, &b, 400)["param"], "input[0].id", "{id}");
    }
    assert_eq!(gw.upstream.request_count(), 1, "refused before the model");

    // Her colleague approves: the call runs on the real server.
    gw.upstream.push(Reply::text("It is 5."));
    let done = amy
        .create(&with(json!([approval(req_id)]), Some(paused_id)))
        .await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(item_of(&done, "mcp_call")["output"], "5", "{done}");
}
