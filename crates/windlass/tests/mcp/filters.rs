//! The `mcp` tool declaration's options and checks: `allowed_tools`,
//! approval filters, `tool_choice` naming an MCP tool, model-visible names
//! (`label__tool`, at most 64 characters), bad or duplicate labels, and a
//! gateway without MCP.

use crate::support::*;
use serde_json::json;
use windlass_engine::mcp_tool_name;
use windlass_testkit::scenario::*;
use windlass_testkit::{check, db};
use windlass_testkit::{Gateway, McpFixture, PyMcp, Reply, ToolCallSpec};

/// `allowed_tools` limits what the model is offered; a call to a tool it
/// hides is not run.
#[tokio::test]
async fn allowed_tools_limits_the_model_tools() {
    let fx = McpFixture::python(PyMcp::V2).await;
    let gw = start(loopback_config()).await;
    let mut tool = mcp_tool("calc", &fx.url);
    tool["allowed_tools"] = json!(["add", "echo"]);
    gw.upstream.push(Reply::tool_calls([
        ToolCallSpec::new("calc__add", r#"{"a":1,"b":2}"#),
        ToolCallSpec::new("calc__fail", r#"{"message":"x"}"#),
    ]));
    gw.upstream.push(Reply::text("ok"));
    let run = create(
        &gw,
        Mode::Json,
        &json!({"model": "m", "input": "x", "tools": [tool]}),
    )
    .await;
    assert_eq!(run.status(), "completed", "{}", run.resp);
    let mut names = upstream_tool_names(&gw.upstream.requests()[0]);
    names.sort();
    assert_eq!(names, ["calc__add", "calc__echo"]);
    assert_eq!(
        gw.hub.calls(),
        [("calc".into(), "add".into(), r#"{"a":1,"b":2}"#.into())],
        "the hidden tool must not run"
    );
    let tm = tool_messages(&gw.upstream.requests()[1]);
    assert_eq!(tm.len(), 2, "{tm:?}");
    assert_eq!(tm[0].1, "3");
    assert!(tm[1].1.starts_with("Error"), "{tm:?}");
}

/// `require_approval: {"never": {"tool_names": ["add"]}}`: add runs, any
/// other tool asks first.
#[tokio::test]
async fn approval_filter_per_tool() {
    let fx = McpFixture::python(PyMcp::V2).await;
    let gw = start(loopback_config()).await;
    let mut tool = mcp_tool_default("calc", &fx.url);
    tool["require_approval"] = json!({"never": {"tool_names": ["add"]}});
    gw.upstream.push(Reply::tool_calls([
        ToolCallSpec::new("calc__add", r#"{"a":1,"b":2}"#),
        ToolCallSpec::new("calc__echo", r#"{"text":"hi"}"#),
    ]));
    let run = create(
        &gw,
        Mode::Sse,
        &json!({"model": "m", "input": "x", "tools": [tool]}),
    )
    .await;
    assert_eq!(run.status(), "requires_action", "{}", run.resp);
    assert_eq!(
        output_types(&run.resp),
        ["mcp_list_tools", "mcp_call", "mcp_approval_request"]
    );
    assert_eq!(only(&run.resp, "mcp_approval_request")["name"], "echo");
    // The turn pauses whole: the never-approval call waits too.
    assert!(gw.hub.calls().is_empty(), "{:?}", gw.hub.calls());
    assert_eq!(only(&run.resp, "mcp_call")["status"], "in_progress");

    // Approving echo runs both, the paused add first.
    let req_id = only(&run.resp, "mcp_approval_request")["id"].clone();
    gw.upstream.push(Reply::text("done"));
    let next = create(
        &gw,
        Mode::Json,
        &json!({"model": "m", "previous_response_id": run.id(), "tools": [tool],
                "input": [{"type": "mcp_approval_response", "approval_request_id": req_id, "approve": true}]}),
    )
    .await;
    assert_eq!(next.status(), "completed", "{}", next.resp);
    let calls = outputs_of(&next.resp, "mcp_call");
    assert_eq!(calls.len(), 2, "{}", next.resp);
    assert_eq!(calls[0]["name"], "add");
    assert_eq!(calls[0]["output"], "3");
    assert_eq!(calls[1]["name"], "echo");
    assert_eq!(calls[1]["output"], "hi");
    assert_eq!(calls[1]["approval_request_id"], req_id);
    let tools: Vec<String> = gw.hub.calls().into_iter().map(|c| c.1).collect();
    assert_eq!(tools, ["add", "echo"]);
    let tm = tool_messages(&gw.upstream.requests()[1]);
    assert_eq!(tm.len(), 2, "{tm:?}");
}

/// `tool_choice: {"type":"mcp","server_label","name"}` forces that tool on
/// the first turn (as a function choice of its model-visible name).
#[tokio::test]
async fn tool_choice_names_an_mcp_tool() {
    let fx = McpFixture::python(PyMcp::V2).await;
    let gw = start(loopback_config()).await;
    gw.upstream.push(Reply::text("ok"));
    let run = create(
        &gw,
        Mode::Json,
        &json!({"model": "m", "input": "x", "tools": [mcp_tool("calc", &fx.url)],
                "tool_choice": {"type": "mcp", "server_label": "calc", "name": "echo"}}),
    )
    .await;
    assert_eq!(run.status(), "completed", "{}", run.resp);
    let req = &gw.upstream.requests()[0];
    assert_eq!(
        req["tool_choice"]["function"]["name"], "calc__echo",
        "{}",
        req["tool_choice"]
    );
    let (status, resp) = gw
        .post_json(
            "/v1/responses",
            &json!({"model": "m", "input": "x", "tools": [mcp_tool("calc", &fx.url)],
                    "tool_choice": {"type": "mcp", "server_label": "other"}}),
        )
        .await;
    let err = check::assert_api_error(status, &resp, 400);
    assert_eq!(err["param"], "tool_choice.server_label");
}

/// Names stay within what chat-completions servers accept (at most 64
/// characters) and a call under its qualified name reaches the right tool.
#[tokio::test]
async fn names_fit_64_chars_and_route() {
    let fx = McpFixture::everything().await;
    let gw = start(loopback_config()).await;
    let label = "a_rather_long_label_of_32_chars_";
    assert_eq!(label.len(), 32);
    // Exactly 64 characters: kept as is. (Longer ones are shortened with a
    // hash; server-everything offers none to a client without elicitation.)
    let long = mcp_tool_name(label, "trigger-long-running-operation");
    assert_eq!(long, format!("{label}__trigger-long-running-operation"));
    assert_eq!(long.len(), 64);
    let hashed = mcp_tool_name(label, "trigger-elicitation-request-async");
    assert!(
        hashed.len() <= 64 && hashed != mcp_tool_name(label, "trigger-elicitation-request-asyn")
    );
    let sum = mcp_tool_name(label, "get-sum");
    assert_eq!(sum, format!("{label}__get-sum"));
    gw.upstream.push(Reply::tool_call(&sum, r#"{"a":1,"b":1}"#));
    gw.upstream.push(Reply::text("ok"));
    let run = create(
        &gw,
        Mode::Json,
        &json!({"model": "m", "input": "x", "tools": [mcp_tool(label, &fx.url)]}),
    )
    .await;
    let names = upstream_tool_names(&gw.upstream.requests()[0]);
    assert!(names.contains(&long), "{long} not in {names:?}");
    let listed = listed_names(&only(&run.resp, "mcp_list_tools"));
    assert_eq!(names.len(), listed.len(), "a tool was dropped: {names:?}");
    for n in &names {
        assert!(n.len() <= 64, "{n}");
        assert!(
            n.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'),
            "{n}"
        );
    }
    assert_eq!(
        only(&run.resp, "mcp_call")["output"],
        "The sum of 1 and 1 is 2."
    );
}

/// Bad declarations are 400s before anything runs.
#[tokio::test]
async fn bad_declarations_are_400() {
    let gw = start(loopback_config()).await;
    let url = dead_url();
    let cases = [
        (json!([mcp_tool("a b", &url)]), "tools[0].server_label"),
        (
            json!([mcp_tool("dup", &url), mcp_tool("dup", &url)]),
            "tools[1].server_label",
        ),
        (
            json!([{"type": "mcp", "server_label": "x", "server_url": url, "headers": {"X-A": 1}}]),
            "tools[0].headers",
        ),
        (
            json!([{"type": "mcp", "server_label": "x", "server_url": url,
                    "authorization": "t", "headers": {"Authorization": "Bearer u"}}]),
            "tools[0].authorization",
        ),
    ];
    for (tools, param) in cases {
        let (status, resp) = gw
            .post_json(
                "/v1/responses",
                &json!({"model": "m", "input": "x", "tools": tools}),
            )
            .await;
        let err = check::assert_api_error(status, &resp, 400);
        assert_eq!(err["param"], param, "{tools}: {resp}");
    }
    assert!(gw.hub.ops().is_empty());
    db::assert_db_empty(&gw, "bad declarations");

    // Without an MCP hub, `mcp` tools are refused.
    let plain = Gateway::start().await;
    let (status, resp) = plain
        .post_json(
            "/v1/responses",
            &json!({"model": "m", "input": "x", "tools": [mcp_tool("calc", &url)]}),
        )
        .await;
    check::assert_api_error(status, &resp, 400);
    assert_eq!(plain.upstream.request_count(), 0);
}
