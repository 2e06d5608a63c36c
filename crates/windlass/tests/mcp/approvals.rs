//! MCP approvals: the default rule (always) turns the model's call into an
//! `mcp_approval_request` and pauses (`requires_action`) without touching
//! the server; `mcp_approval_response` approve runs it (an `mcp_call` with
//! `approval_request_id`), deny feeds the model the denial; unknown or
//! already-answered ids are 400; `max_tool_calls` counts MCP calls.

use crate::support::*;
use serde_json::{json, Value};
use windlass_testkit::scenario::*;
use windlass_testkit::{check, db};
use windlass_testkit::{McpFixture, PyMcp, Reply, ToolCallSpec};

fn approval(id: &str, approve: bool) -> Value {
    json!({"type": "mcp_approval_response", "approval_request_id": id, "approve": approve})
}

/// First response: `calc__add` needs approval. Returns the response and
/// the approval request id.
async fn ask(gw: &McpGw, url: &str, mode: Mode) -> (Run, String) {
    gw.upstream
        .push(Reply::tool_call("calc__add", r#"{"a":2,"b":3}"#));
    let run = create(
        gw,
        mode,
        &json!({"model": "m", "input": "2+3?", "tools": [mcp_tool_default("calc", url)]}),
    )
    .await;
    assert_eq!(run.status(), "requires_action", "{mode:?}: {}", run.resp);
    assert_eq!(
        output_types(&run.resp),
        ["mcp_list_tools", "mcp_approval_request"],
        "{mode:?}"
    );
    let req = only(&run.resp, "mcp_approval_request");
    let id = req["id"].as_str().unwrap().to_owned();
    assert!(id.starts_with("mcpr_"), "{req}");
    assert_eq!(req["server_label"], "calc");
    assert_eq!(req["name"], "add");
    assert_eq!(req["arguments"], r#"{"a":2,"b":3}"#);
    assert!(
        gw.hub.calls().is_empty(),
        "{mode:?}: called before approval"
    );
    assert_eq!(gw.upstream.request_count(), 1);
    if let Some(cap) = &run.sse {
        assert_eq!(terminal(cap), "response.requires_action");
        let trace = mcp_trace(cap);
        assert_eq!(
            &trace[4..],
            ["added:mcp_approval_request", "done:mcp_approval_request"],
            "{trace:?}"
        );
        let done = cap
            .of_type("response.output_item.done")
            .into_iter()
            .find(|d| d["item"]["type"] == "mcp_approval_request")
            .unwrap();
        assert_eq!(done["item"]["arguments"], r#"{"a":2,"b":3}"#);
    }
    (run, id)
}

/// Approve: the call runs in the continuation, as an `mcp_call` carrying
/// the request id and the real output, then the model answers.
#[tokio::test]
async fn approve_runs_the_call() {
    let fx = McpFixture::python(PyMcp::V2).await;
    for (first, second) in [(Mode::Json, Mode::Sse), (Mode::Sse, Mode::Json)] {
        let tag = format!("{first:?}->{second:?}");
        let gw = start(loopback_config()).await;
        let (parent, req_id) = ask(&gw, &fx.url, first).await;
        gw.upstream.push(Reply::text("It is 5."));
        let run = create(
            &gw,
            second,
            &json!({
                "model": "m",
                "previous_response_id": parent.id(),
                "input": [approval(&req_id, true)],
                "tools": [mcp_tool_default("calc", &fx.url)],
            }),
        )
        .await;
        assert_eq!(run.status(), "completed", "{tag}: {}", run.resp);
        assert_eq!(output_types(&run.resp), ["mcp_call", "message"], "{tag}");
        let call = only(&run.resp, "mcp_call");
        assert_eq!(
            call["approval_request_id"],
            req_id.as_str(),
            "{tag}: {call}"
        );
        assert_eq!(call["name"], "add");
        assert_eq!(call["arguments"], r#"{"a":2,"b":3}"#);
        assert_eq!(call["output"], "5", "{tag}: {call}");
        assert_eq!(call["status"], "completed");
        assert_eq!(
            gw.hub.calls(),
            [("calc".into(), "add".into(), r#"{"a":2,"b":3}"#.into())],
            "{tag}"
        );
        assert_eq!(gw.hub.lists().len(), 1, "{tag}: listing reused");
        let reqs = gw.upstream.requests();
        assert_eq!(reqs.len(), 2);
        assert_eq!(roles(&reqs[1]), ["user", "assistant", "tool"], "{tag}");
        let id = call["id"].as_str().unwrap().to_owned();
        assert_eq!(
            assistant_calls(&reqs[1]),
            [(id.clone(), "calc__add".into(), r#"{"a":2,"b":3}"#.into())]
        );
        assert_eq!(tool_messages(&reqs[1]), [(id.clone(), "5".into())]);
        assert_stored_equals(&gw, &parent.resp).await;
        if let Some(cap) = &run.sse {
            assert_eq!(
                mcp_trace(cap),
                [
                    "added:mcp_call",
                    "mcp_call.in_progress",
                    "mcp_call.completed",
                    "done:mcp_call"
                ],
                "{tag}"
            );
        }
    }
}

/// Deny: no call reaches the server; the `mcp_call` fails with the denial
/// (and the reason), which the model sees as the tool's output.
#[tokio::test]
async fn deny_feeds_the_denial_to_the_model() {
    let fx = McpFixture::python(PyMcp::V2).await;
    for mode in MODES {
        let gw = start(loopback_config()).await;
        let (parent, req_id) = ask(&gw, &fx.url, mode).await;
        gw.upstream.push(Reply::text("OK, I will not."));
        let mut answer = approval(&req_id, false);
        answer["reason"] = json!("not today");
        let run = create(
            &gw,
            mode,
            &json!({
                "model": "m",
                "previous_response_id": parent.id(),
                "input": [answer],
                "tools": [mcp_tool_default("calc", &fx.url)],
            }),
        )
        .await;
        assert_eq!(run.status(), "completed", "{mode:?}: {}", run.resp);
        assert!(gw.hub.calls().is_empty(), "{mode:?}: denied call ran");
        let call = only(&run.resp, "mcp_call");
        assert_eq!(call["approval_request_id"], req_id.as_str());
        assert_eq!(call["status"], "failed", "{mode:?}: {call}");
        assert!(call["output"].is_null(), "{call}");
        let err = call["error"].to_string();
        assert!(
            err.contains("denied") && err.contains("not today"),
            "{call}"
        );
        let tm = tool_messages(&gw.upstream.requests()[1]);
        assert_eq!(tm.len(), 1);
        assert_eq!(tm[0].0, call["id"].as_str().unwrap());
        assert!(
            tm[0].1.contains("denied") && tm[0].1.contains("not today"),
            "{tm:?}"
        );
        assert_eq!(final_text(&run.resp), "OK, I will not.");
        if let Some(cap) = &run.sse {
            assert!(mcp_trace(cap).contains(&"mcp_call.failed".to_owned()));
        }
    }
}

/// An unknown id, or one already answered, is a 400 and stores nothing.
#[tokio::test]
async fn unknown_or_answered_approval_id_is_400() {
    let fx = McpFixture::python(PyMcp::V2).await;
    let gw = start(loopback_config()).await;
    let (parent, req_id) = ask(&gw, &fx.url, Mode::Json).await;
    let cont = |input: Value, prev: &str| {
        json!({
            "model": "m", "previous_response_id": prev, "input": input,
            "tools": [mcp_tool_default("calc", &fx.url)],
        })
    };
    let stored = db::stored_response_count(&gw);

    let (status, resp) = gw
        .post_json(
            "/v1/responses",
            &cont(json!([approval("mcpr_unknown", true)]), &parent.id()),
        )
        .await;
    let err = check::assert_api_error(status, &resp, 400);
    assert_eq!(err["param"], "input[0].approval_request_id", "{resp}");

    // The same id twice in one input.
    let (status, resp) = gw
        .post_json(
            "/v1/responses",
            &cont(
                json!([approval(&req_id, true), approval(&req_id, false)]),
                &parent.id(),
            ),
        )
        .await;
    let err = check::assert_api_error(status, &resp, 400);
    assert_eq!(err["param"], "input[1].approval_request_id", "{resp}");
    assert_eq!(db::stored_response_count(&gw), stored, "nothing stored");
    assert!(gw.hub.calls().is_empty());

    // Answered once (approved) ...
    gw.upstream.push(Reply::text("5"));
    let first = create(
        &gw,
        Mode::Json,
        &cont(json!([approval(&req_id, true)]), &parent.id()),
    )
    .await;
    assert_eq!(first.status(), "completed");
    // ... then again further down the chain.
    let (status, resp) = gw
        .post_json(
            "/v1/responses",
            &cont(json!([approval(&req_id, true)]), &first.id()),
        )
        .await;
    let err = check::assert_api_error(status, &resp, 400);
    assert_eq!(err["param"], "input[0].approval_request_id", "{resp}");
    assert_eq!(gw.hub.calls().len(), 1);
}

/// `max_tool_calls` counts MCP calls: with 1, only the first of two calls
/// in a turn runs; the response completes with reason `max_tool_calls`.
#[tokio::test]
async fn max_tool_calls_counts_mcp_calls() {
    let fx = McpFixture::python(PyMcp::V2).await;
    for mode in MODES {
        let gw = start(loopback_config()).await;
        gw.upstream.push(Reply::tool_calls([
            ToolCallSpec::new("calc__add", r#"{"a":1,"b":1}"#),
            ToolCallSpec::new("calc__add", r#"{"a":2,"b":2}"#),
        ]));
        gw.upstream.set_default(Reply::text("unexpected turn"));
        let run = create(
            &gw,
            mode,
            &json!({"model": "m", "input": "x", "max_tool_calls": 1,
                    "tools": [mcp_tool("calc", &fx.url)]}),
        )
        .await;
        assert_eq!(run.status(), "completed", "{mode:?}: {}", run.resp);
        assert_eq!(
            run.resp["incomplete_details"]["reason"], "max_tool_calls",
            "{mode:?}: {}",
            run.resp
        );
        assert_eq!(gw.hub.calls().len(), 1, "{mode:?}: budget overrun");
        assert_eq!(gw.upstream.request_count(), 1);
        let calls = outputs_of(&run.resp, "mcp_call");
        assert_eq!(calls.len(), 2, "{mode:?}");
        assert_eq!(calls[0]["output"], "2");
        assert_ne!(calls[1]["status"], "completed", "{}", calls[1]);
        assert!(calls[1]["output"].is_null());
    }
}

/// An approved call counts too: with `max_tool_calls: 1`, the approved call
/// spends the budget, and the model's next MCP call is not run.
#[tokio::test]
async fn approved_calls_count_toward_max_tool_calls() {
    let fx = McpFixture::python(PyMcp::V2).await;
    let gw = start(loopback_config()).await;
    let (parent, req_id) = ask(&gw, &fx.url, Mode::Json).await;
    // (Not 5 + 5 after 2 + 3 = 5: the stall stop would refuse that one.)
    gw.upstream
        .push(Reply::tool_call("calc__add", r#"{"a":7,"b":5}"#));
    gw.upstream.set_default(Reply::text("unexpected turn"));
    let run = create(
        &gw,
        Mode::Json,
        &json!({
            "model": "m",
            "previous_response_id": parent.id(),
            "input": [approval(&req_id, true)],
            "max_tool_calls": 1,
            "tools": [mcp_tool("calc", &fx.url)],
        }),
    )
    .await;
    assert_eq!(run.status(), "completed", "{}", run.resp);
    assert_eq!(run.resp["incomplete_details"]["reason"], "max_tool_calls");
    assert_eq!(
        gw.hub.calls(),
        [("calc".into(), "add".into(), r#"{"a":2,"b":3}"#.into())],
        "only the approved call ran"
    );
    let calls = outputs_of(&run.resp, "mcp_call");
    assert_eq!(calls.len(), 2, "{}", run.resp);
    assert_eq!(calls[0]["approval_request_id"], req_id.as_str());
    assert_eq!(calls[0]["output"], "5");
    assert!(calls[1]["output"].is_null(), "{}", calls[1]);
    assert_eq!(gw.upstream.request_count(), 2);
}
