//! MCP calls and the response's life: cancelling while an MCP call runs, a
//! configured stdio server that crashed being usable again, and a turn that
//! needs both an approval and a client function output.

use std::time::{Duration, Instant};

use crate::support::*;
use serde_json::json;
use windlass_protocol::{McpApprovalMode, McpRequireApproval};
use windlass_testkit::live;
use windlass_testkit::scenario::*;
use windlass_testkit::{python_stdio_command, McpFixture, PyMcp, Reply, ToolCallSpec};
use windlass_tools::{McpConfig, McpServerConfig};

/// `POST /v1/responses/{id}/cancel` while `slow` runs: the response ends
/// `cancelled` at once, its `mcp_call` closed as `incomplete`, no further
/// model turn.
#[tokio::test]
async fn cancel_during_mcp_call() {
    let fx = McpFixture::python(PyMcp::V2).await;
    let gw = start(loopback_config()).await;
    gw.upstream
        .push(Reply::tool_call("calc__slow", r#"{"ms":30000}"#));
    gw.upstream.push(Reply::text("unreachable"));
    let mut live = live::LiveStream::open(
        &gw,
        &json!({"model": "m", "input": "x", "tools": [mcp_tool("calc", &fx.url)]}),
    )
    .await;
    assert!(
        live.read_until("response.mcp_call.in_progress", Duration::from_secs(20))
            .await,
        "the call never started: {}",
        live.raw
    );
    gw.hub.wait_calls(1, Duration::from_secs(10)).await;
    let id = live.response_id();
    let t0 = Instant::now();
    let (s, cancelled) = gw
        .post_json(&format!("/v1/responses/{id}/cancel"), &json!({}))
        .await;
    assert_eq!(s, 200, "{cancelled}");
    assert_eq!(cancelled["status"], "cancelled", "{cancelled}");
    assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
    let cap = live.finish(Duration::from_secs(10)).await;
    let fin = check_stream(&gw, &cap).await;
    assert_eq!(terminal(&cap), "response.cancelled");
    let call = only(&fin, "mcp_call");
    assert_eq!(call["status"], "incomplete", "{call}");
    assert!(call["output"].is_null(), "{call}");
    assert_eq!(gw.upstream.request_count(), 1, "loop went on after cancel");
    let trace = mcp_trace(&cap);
    assert!(
        !trace.contains(&"mcp_call.completed".to_owned()),
        "{trace:?}"
    );
}

/// A configured stdio server whose process died mid-call: that call fails,
/// and the next request can use the server again (it is respawned).
#[tokio::test]
async fn configured_stdio_server_recovers_after_crash() {
    let (command, args) = python_stdio_command(PyMcp::V2);
    let gw = start(McpConfig {
        call_timeout_secs: 20,
        servers: vec![McpServerConfig {
            label: "local".into(),
            command: Some(command),
            args,
            require_approval: Some(McpRequireApproval::Mode(McpApprovalMode::Never)),
            ..Default::default()
        }],
        ..Default::default()
    })
    .await;
    let tools = json!([{"type": "mcp", "server_label": "local"}]);
    gw.upstream.push(Reply::tool_call("local__crash", "{}"));
    gw.upstream.push(Reply::text("crashed"));
    let run = create(
        &gw,
        Mode::Json,
        &json!({"model": "m", "input": "x", "tools": tools}),
    )
    .await;
    assert_eq!(run.status(), "completed", "{}", run.resp);
    let call = only(&run.resp, "mcp_call");
    assert_eq!(call["status"], "failed", "{call}");
    assert_eq!(call["error"]["type"], "mcp_protocol_error", "{call}");

    // A fresh request (listing again, then a call) works.
    gw.upstream
        .push(Reply::tool_call("local__add", r#"{"a":4,"b":5}"#));
    gw.upstream.push(Reply::text("9"));
    let run = create(
        &gw,
        Mode::Sse,
        &json!({"model": "m", "input": "x", "tools": tools}),
    )
    .await;
    assert_eq!(run.status(), "completed", "{}", run.resp);
    let call = only(&run.resp, "mcp_call");
    assert_eq!(call["status"], "completed", "{call}");
    assert_eq!(call["output"], "9", "{call}");
    let (_, servers) = gw.get_json("/v1/mcp/servers").await;
    assert_eq!(servers["data"][0]["state"], "connected", "{servers}");
}

/// One turn with an MCP call needing approval and a client function call:
/// paused once; the continuation carrying both the approval and the
/// function output runs the MCP call, then the model sees both results.
#[tokio::test]
async fn approval_and_client_output_in_one_continuation() {
    let fx = McpFixture::python(PyMcp::V2).await;
    for mode in MODES {
        let gw = start(loopback_config()).await;
        let tools = json!([mcp_tool_default("calc", &fx.url), func("ask_user")]);
        gw.upstream.push(Reply::tool_calls([
            ToolCallSpec::new("calc__add", r#"{"a":1,"b":2}"#),
            ToolCallSpec::new("ask_user", "{}").id("call_c"),
        ]));
        let parent = create(
            &gw,
            mode,
            &json!({"model": "m", "input": "x", "tools": tools}),
        )
        .await;
        assert_eq!(
            parent.status(),
            "requires_action",
            "{mode:?}: {}",
            parent.resp
        );
        assert_eq!(
            output_types(&parent.resp),
            ["mcp_list_tools", "mcp_approval_request", "function_call"],
            "{mode:?}"
        );
        let req_id = only(&parent.resp, "mcp_approval_request")["id"].clone();

        gw.upstream.push(Reply::text("3, and yes"));
        let run = create(
            &gw,
            mode,
            &json!({
                "model": "m",
                "previous_response_id": parent.id(),
                "tools": tools,
                "input": [
                    {"type": "mcp_approval_response", "approval_request_id": req_id, "approve": true},
                    {"type": "function_call_output", "call_id": "call_c", "output": "yes"},
                ],
            }),
        )
        .await;
        assert_eq!(run.status(), "completed", "{mode:?}: {}", run.resp);
        assert_eq!(output_types(&run.resp), ["mcp_call", "message"], "{mode:?}");
        let call = only(&run.resp, "mcp_call");
        assert_eq!(call["output"], "3");
        assert_eq!(call["approval_request_id"], req_id);
        assert_eq!(gw.hub.calls().len(), 1);
        let mut tm = tool_messages(&gw.upstream.requests()[1]);
        tm.sort();
        let mut want = vec![
            (call["id"].as_str().unwrap().to_owned(), "3".to_owned()),
            ("call_c".to_owned(), "yes".to_owned()),
        ];
        want.sort();
        assert_eq!(tm, want, "{mode:?}");
    }
}

/// Answering only the client call leaves the approval unanswered: the MCP
/// call does not run (OpenAI drops an unanswered request); the model sees the
/// client output.
#[tokio::test]
async fn unanswered_approval_does_not_run() {
    let fx = McpFixture::python(PyMcp::V2).await;
    let gw = start(loopback_config()).await;
    let tools = json!([mcp_tool_default("calc", &fx.url), func("ask_user")]);
    gw.upstream.push(Reply::tool_calls([
        ToolCallSpec::new("calc__add", r#"{"a":1,"b":2}"#),
        ToolCallSpec::new("ask_user", "{}").id("call_c"),
    ]));
    let parent = create(
        &gw,
        Mode::Json,
        &json!({"model": "m", "input": "x", "tools": tools}),
    )
    .await;
    assert_eq!(parent.status(), "requires_action");
    gw.upstream.push(Reply::text("ok"));
    let run = create(
        &gw,
        Mode::Json,
        &json!({"model": "m", "previous_response_id": parent.id(), "tools": tools,
                "input": [{"type": "function_call_output", "call_id": "call_c", "output": "yes"}]}),
    )
    .await;
    assert_eq!(run.status(), "completed", "{}", run.resp);
    assert!(gw.hub.calls().is_empty(), "ran without approval");
    assert_eq!(
        tool_messages(&gw.upstream.requests()[1]),
        [("call_c".into(), "yes".into())]
    );
}

/// A paused `mcp_call` is resumed from the database after a restart.
#[tokio::test]
async fn paused_mcp_call_survives_a_restart() {
    let fx = McpFixture::python(PyMcp::V2).await;
    let McpGw { gw, hub } = start(loopback_config()).await;
    let tools = json!([mcp_tool("calc", &fx.url), func("ask_user")]);
    gw.upstream.push(Reply::tool_calls([
        ToolCallSpec::new("calc__echo", r#"{"text":"kept"}"#),
        ToolCallSpec::new("ask_user", "{}").id("call_c"),
    ]));
    let parent = create(
        &gw,
        Mode::Json,
        &json!({"model": "m", "input": "x", "tools": tools}),
    )
    .await;
    assert_eq!(parent.status(), "requires_action", "{}", parent.resp);
    let mcp_id = only(&parent.resp, "mcp_call")["id"].clone();

    let gw = gw.restart().await;
    gw.upstream.push(Reply::text("done"));
    let run = create(
        &gw,
        Mode::Sse,
        &json!({"model": "m", "previous_response_id": parent.id(), "tools": tools,
                "input": [{"type": "function_call_output", "call_id": "call_c", "output": "yes"}]}),
    )
    .await;
    assert_eq!(run.status(), "completed", "{}", run.resp);
    let call = only(&run.resp, "mcp_call");
    assert_eq!(call["id"], mcp_id);
    assert_eq!(call["output"], "kept");
    assert_eq!(hub.calls().len(), 1);
    assert_eq!(
        hub.lists().len(),
        1,
        "the listing is reused after a restart"
    );
}
