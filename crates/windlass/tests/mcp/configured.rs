//! Operator-configured MCP servers: used by label without `server_url`
//! (stdio child process, streamable HTTP), their `require_approval` default,
//! an unknown label, a server down at start (listing fails: 424 /
//! `response.failed`), and the operator view `GET /v1/mcp/servers`.

use crate::support::*;
use serde_json::json;
use windlass_protocol::{McpApprovalMode, McpRequireApproval};
use windlass_testkit::scenario::*;
use windlass_testkit::{check, db};
use windlass_testkit::{python_stdio_command, McpFixture, PyMcp, Reply};
use windlass_tools::{McpConfig, McpServerConfig, ServerState};

fn stdio_server(label: &str, approval: Option<McpApprovalMode>) -> McpServerConfig {
    let (command, args) = python_stdio_command(PyMcp::V2);
    McpServerConfig {
        label: label.into(),
        command: Some(command),
        args,
        require_approval: approval.map(McpRequireApproval::Mode),
        ..Default::default()
    }
}

/// A stdio server configured with `require_approval = "never"`, used by
/// label only: listed, called, no approval asked.
#[tokio::test]
async fn stdio_configured_server_by_label() {
    let gw = start(McpConfig {
        servers: vec![stdio_server("local", Some(McpApprovalMode::Never))],
        ..Default::default()
    })
    .await;
    for mode in MODES {
        gw.upstream.clear_requests();
        gw.upstream
            .push(Reply::tool_call("local__echo", r#"{"text":"over stdio"}"#));
        gw.upstream.push(Reply::text("echoed"));
        let run = create(
            &gw,
            mode,
            &json!({"model": "m", "input": "echo", "tools": [{"type": "mcp", "server_label": "local"}]}),
        )
        .await;
        assert_eq!(run.status(), "completed", "{mode:?}: {}", run.resp);
        assert_eq!(
            output_types(&run.resp),
            ["mcp_list_tools", "mcp_call", "message"],
            "{mode:?}: the configured never-rule applies"
        );
        let list = only(&run.resp, "mcp_list_tools");
        assert_eq!(list["server_label"], "local");
        assert!(listed_names(&list).iter().any(|n| n == "echo"));
        let call = only(&run.resp, "mcp_call");
        assert_eq!(call["output"], "over stdio", "{mode:?}: {call}");
        assert_eq!(call["status"], "completed");
        let reqs = gw.upstream.requests();
        assert!(upstream_tool_names(&reqs[0])
            .iter()
            .any(|n| n == "local__echo"));
        assert_eq!(
            tool_messages(&reqs[1]),
            [(call["id"].as_str().unwrap().into(), "over stdio".into())]
        );
        if let Some(cap) = &run.sse {
            assert!(mcp_trace(cap).contains(&"mcp_call.completed".to_owned()));
        }
    }
    assert_eq!(gw.hub.calls().len(), 2);
}

/// A configured server without a rule, used without one: OpenAI's default
/// (always) asks for approval; the request's own rule wins over the config.
#[tokio::test]
async fn configured_approval_defaults() {
    let gw = start(McpConfig {
        servers: vec![
            stdio_server("plain", None),
            stdio_server("trusted", Some(McpApprovalMode::Never)),
        ],
        ..Default::default()
    })
    .await;
    gw.upstream
        .push(Reply::tool_call("plain__add", r#"{"a":1,"b":1}"#));
    let run = create(
        &gw,
        Mode::Json,
        &json!({"model": "m", "input": "x", "tools": [{"type": "mcp", "server_label": "plain"}]}),
    )
    .await;
    assert_eq!(run.status(), "requires_action", "{}", run.resp);
    assert_eq!(
        output_types(&run.resp),
        ["mcp_list_tools", "mcp_approval_request"]
    );

    // The request says "always" for a server configured "never".
    gw.upstream
        .push(Reply::tool_call("trusted__add", r#"{"a":1,"b":1}"#));
    let run = create(
        &gw,
        Mode::Json,
        &json!({"model": "m", "input": "x", "tools": [
            {"type": "mcp", "server_label": "trusted", "require_approval": "always"}
        ]}),
    )
    .await;
    assert_eq!(run.status(), "requires_action", "{}", run.resp);
    assert_eq!(
        output_types(&run.resp),
        ["mcp_list_tools", "mcp_approval_request"]
    );
    assert!(gw.hub.calls().is_empty());
}

/// A label no server is configured with is refused before anything runs.
#[tokio::test]
async fn unknown_configured_label_is_400() {
    let gw = start(McpConfig::default()).await;
    let body = json!({"model": "m", "input": "x", "tools": [
        {"type": "function", "name": "f", "parameters": {"type": "object"}},
        {"type": "mcp", "server_label": "nope"}
    ]});
    let (status, resp) = gw.post_json("/v1/responses", &body).await;
    let err = check::assert_api_error(status, &resp, 400);
    assert_eq!(err["param"], "tools[1].server_label", "{resp}");
    let mut stream_body = body.clone();
    stream_body["stream"] = json!(true);
    let (status, _) = gw.post_json("/v1/responses", &stream_body).await;
    assert_eq!(status, 400);
    assert_eq!(gw.upstream.request_count(), 0);
    db::assert_db_empty(&gw, "unknown label");
}

/// A configured server that is down: the listing fails, the response fails
/// (HTTP 424 `mcp_list_tools_failed` in JSON; `mcp_list_tools.failed` then
/// `response.failed` in SSE), and the model is never called.
#[tokio::test]
async fn configured_server_down_fails_listing() {
    let gw = start(McpConfig {
        call_timeout_secs: 5,
        servers: vec![http_server("down", &dead_url())],
        ..Default::default()
    })
    .await;
    let body = json!({"model": "m", "input": "x", "tools": [
        {"type": "mcp", "server_label": "down", "require_approval": "never"}
    ]});
    let (status, resp) = gw.post_json("/v1/responses", &body).await;
    let err = check::assert_api_error(status, &resp, 424);
    assert_eq!(err["code"], "mcp_list_tools_failed", "{resp}");
    assert!(err["message"].as_str().unwrap().contains("down"), "{resp}");

    let cap = gw.stream(&body).await;
    cap.assert_well_formed();
    assert_eq!(terminal(&cap), "response.failed");
    assert_eq!(
        mcp_trace(&cap),
        [
            "added:mcp_list_tools",
            "mcp_list_tools.in_progress",
            "mcp_list_tools.failed",
            "done:mcp_list_tools",
        ]
    );
    let fin = cap.final_response();
    assert_eq!(fin["status"], "failed");
    assert_eq!(fin["error"]["code"], "mcp_list_tools_failed", "{fin}");
    let list = only(fin, "mcp_list_tools");
    assert_eq!(list["server_label"], "down");
    assert!(
        list["error"].as_str().is_some_and(|e| !e.is_empty()),
        "{list}"
    );
    assert_eq!(list["tools"], json!([]));
    assert_eq!(gw.upstream.request_count(), 0, "the model is never asked");
}

/// `GET /v1/mcp/servers`: each configured server with transport, state,
/// error and tools; secrets never shown.
#[tokio::test]
async fn operator_endpoint_lists_configured_servers() {
    let fx = McpFixture::python(PyMcp::V2).await;
    let mut secret = http_server("calc", &format!("{}?key=qsecret", fx.url));
    secret.bearer_token = Some("tok-secret".into());
    secret
        .headers
        .insert("X-Api-Key".into(), "hdr-secret".into());
    let gw = start(McpConfig {
        servers: vec![
            secret,
            stdio_server("local", None),
            http_server("down", &dead_url()),
        ],
        ..Default::default()
    })
    .await;
    wait_state(&gw.hub.inner, "calc", ServerState::Connected).await;
    wait_state(&gw.hub.inner, "local", ServerState::Connected).await;
    wait_state(&gw.hub.inner, "down", ServerState::Unavailable).await;

    let (status, body) = gw.get_json("/v1/mcp/servers").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["object"], "list");
    let data = body["data"].as_array().expect("data");
    let labels: Vec<_> = data.iter().map(|s| s["label"].as_str().unwrap()).collect();
    assert_eq!(labels, ["calc", "local", "down"], "config order: {body}");

    let calc = &data[0];
    assert_eq!(calc["transport"], "http");
    assert_eq!(calc["state"], "connected");
    assert!(calc["url"].as_str().unwrap().starts_with(&fx.url), "{calc}");
    let mut names = listed_names(calc);
    names.sort();
    let mut want: Vec<String> = FIXTURE_TOOLS.iter().map(|s| s.to_string()).collect();
    want.sort();
    assert_eq!(names, want, "{calc}");
    assert!(calc["tools"][0]["input_schema"].is_object());

    let local = &data[1];
    assert_eq!(local["transport"], "stdio");
    assert_eq!(local["state"], "connected");
    assert_eq!(listed_names(local).len(), FIXTURE_TOOLS.len());

    let down = &data[2];
    assert_eq!(down["state"], "unavailable");
    assert!(
        down["last_error"].as_str().is_some_and(|e| !e.is_empty()),
        "{down}"
    );
    assert_eq!(down["tools"], json!([]));

    let raw = body.to_string();
    for s in ["tok-secret", "hdr-secret", "qsecret"] {
        assert!(!raw.contains(s), "{s} leaked: {raw}");
    }
}

/// Without a directory the endpoint still answers, with an empty list.
#[tokio::test]
async fn operator_endpoint_without_mcp_is_empty() {
    let gw = windlass_testkit::Gateway::start().await;
    let (status, body) = gw.get_json("/v1/mcp/servers").await;
    assert_eq!(status, 200);
    assert_eq!(body, json!({"object": "list", "data": []}));
}
