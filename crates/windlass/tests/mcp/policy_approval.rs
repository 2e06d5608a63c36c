//! A policy that answers `RequireApproval` (a `supervised` governance key)
//! pauses an MCP call exactly as a server declared with `require_approval`
//! does: an `mcp_approval_request` in place of the call, and on an approving
//! continuation the call runs without the policy being asked again.

use std::sync::{Arc, Mutex};

use crate::support::*;
use serde_json::{json, Value};
use windlass_engine::{
    CallDecision, EngineConfig, Policy, PolicyContext, RuledDecision, ToolCall, ToolDefinition,
};
use windlass_testkit::scenario::*;
use windlass_testkit::{McpFixture, PyMcp, Reply, ToolCallSpec};

/// Every call needs an approval; remembers what it was asked, and whether
/// the call was already approved (the pass before it runs).
#[derive(Default)]
struct Supervised(Mutex<Vec<String>>);

#[async_trait::async_trait]
impl Policy for Supervised {
    async fn decide_call(
        &self,
        ctx: &PolicyContext<'_>,
        call: &ToolCall,
        _tool: Option<&ToolDefinition>,
    ) -> RuledDecision {
        let seen = match ctx.approved {
            true => format!("{} (approved)", call.name),
            false => call.name.clone(),
        };
        self.0.lock().unwrap_or_else(|p| p.into_inner()).push(seen);
        RuledDecision {
            decision: CallDecision::RequireApproval,
            rule: Some("autonomy:supervised".into()),
        }
    }
}

fn approval(id: &str, approve: bool) -> Value {
    json!({"type": "mcp_approval_response", "approval_request_id": id, "approve": approve})
}

#[tokio::test]
async fn a_policy_approval_pauses_and_the_approved_call_runs_once() {
    let fx = McpFixture::python(PyMcp::V2).await;
    for (first, second) in [(Mode::Json, Mode::Sse), (Mode::Sse, Mode::Json)] {
        let tag = format!("{first:?}->{second:?}");
        let policy = Arc::new(Supervised::default());
        let gw = start_with_policy(
            loopback_config(),
            EngineConfig::default(),
            Some(policy.clone()),
        )
        .await;
        gw.upstream
            .push(Reply::tool_call("calc__add", r#"{"a":2,"b":3}"#));
        // The server needs no approval by its declaration: the policy asks.
        let tools = json!([mcp_tool("calc", &fx.url)]);
        let parent = create(
            &gw,
            first,
            &json!({"model": "m", "input": "2+3?", "tools": tools}),
        )
        .await;
        // Paused for the approval: `completed` by default, as OpenAI does.
        assert_eq!(parent.status(), "completed", "{tag}: {}", parent.resp);
        assert_eq!(
            output_types(&parent.resp),
            ["mcp_list_tools", "mcp_approval_request"],
            "{tag}"
        );
        let req = only(&parent.resp, "mcp_approval_request");
        assert_eq!(req["name"], "add");
        assert_eq!(req["arguments"], r#"{"a":2,"b":3}"#);
        assert!(gw.hub.calls().is_empty(), "{tag}: called before approval");
        let req_id = req["id"].as_str().unwrap().to_owned();

        let (status, t) = gw
            .get_json(&format!("/v1/responses/{}/trace", parent.id()))
            .await;
        assert_eq!(status, 200);
        assert_eq!(t["actions"][0]["decision"], "approval");
        assert_eq!(t["actions"][0]["rule"], "autonomy:supervised");

        gw.upstream.push(Reply::text("It is 5."));
        let run = create(
            &gw,
            second,
            &json!({"model": "m", "previous_response_id": parent.id(),
                    "input": [approval(&req_id, true)], "tools": tools}),
        )
        .await;
        assert_eq!(run.status(), "completed", "{tag}: {}", run.resp);
        let call = only(&run.resp, "mcp_call");
        assert_eq!(call["approval_request_id"], req_id.as_str());
        assert_eq!(call["output"], "5", "{tag}: {call}");
        assert_eq!(gw.hub.calls().len(), 1, "{tag}");
        // Asked once, when the model made the call; not again once approved.
        // Asked once for the approval, once more (approved) before it ran.
        assert_eq!(
            *policy.0.lock().unwrap(),
            ["calc__add", "calc__add (approved)"],
            "{tag}"
        );
    }
}

#[tokio::test]
async fn a_denied_policy_approval_never_runs_the_call() {
    let fx = McpFixture::python(PyMcp::V2).await;
    let policy = Arc::new(Supervised::default());
    let gw = start_with_policy(loopback_config(), EngineConfig::default(), Some(policy)).await;
    gw.upstream
        .push(Reply::tool_call("calc__add", r#"{"a":2,"b":3}"#));
    let tools = json!([mcp_tool("calc", &fx.url)]);
    let parent = create(
        &gw,
        Mode::Json,
        &json!({"model": "m", "input": "2+3?", "tools": tools}),
    )
    .await;
    let req_id = only(&parent.resp, "mcp_approval_request")["id"]
        .as_str()
        .unwrap()
        .to_owned();
    gw.upstream.push(Reply::text("Not allowed."));
    let run = create(
        &gw,
        Mode::Json,
        &json!({"model": "m", "previous_response_id": parent.id(),
                "input": [approval(&req_id, false)], "tools": tools}),
    )
    .await;
    assert_eq!(run.status(), "completed", "{}", run.resp);
    assert!(gw.hub.calls().is_empty());
    assert_eq!(only(&run.resp, "mcp_call")["status"], "failed");
}

/// Allows everything; remembers what it was asked.
#[derive(Default)]
struct Counting(Mutex<Vec<String>>);

#[async_trait::async_trait]
impl Policy for Counting {
    async fn before_call(
        &self,
        _ctx: &PolicyContext<'_>,
        call: &ToolCall,
        _tool: Option<&ToolDefinition>,
    ) -> CallDecision {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(call.name.clone());
        CallDecision::Allow
    }
}

/// A server declared with `require_approval`: the policy sees the call when
/// the model makes it, not again when the approved call runs.
#[tokio::test]
async fn a_declared_approval_meets_the_policy_once() {
    let fx = McpFixture::python(PyMcp::V2).await;
    let policy = Arc::new(Counting::default());
    let gw = start_with_policy(
        loopback_config(),
        EngineConfig::default(),
        Some(policy.clone()),
    )
    .await;
    gw.upstream
        .push(Reply::tool_call("calc__add", r#"{"a":2,"b":3}"#));
    let tools = json!([mcp_tool_default("calc", &fx.url)]);
    let parent = create(
        &gw,
        Mode::Json,
        &json!({"model": "m", "input": "2+3?", "tools": tools}),
    )
    .await;
    let req_id = only(&parent.resp, "mcp_approval_request")["id"]
        .as_str()
        .unwrap()
        .to_owned();
    gw.upstream.push(Reply::text("5"));
    let run = create(
        &gw,
        Mode::Json,
        &json!({"model": "m", "previous_response_id": parent.id(),
                "input": [approval(&req_id, true)], "tools": tools}),
    )
    .await;
    assert_eq!(only(&run.resp, "mcp_call")["output"], "5");
    assert_eq!(*policy.0.lock().unwrap(), ["calc__add"]);
}

/// A mixed turn defers its MCP call; the continuation asks the policy,
/// which wants an approval: the paused call is closed and an approval
/// request takes its place; the approved call then runs after one more
/// (approved) pass through the policy.
#[tokio::test]
async fn a_deferred_call_the_policy_wants_approved_pauses_the_continuation() {
    let fx = McpFixture::python(PyMcp::V2).await;
    for mode in MODES {
        let policy = Arc::new(Supervised::default());
        let gw = start_with_policy(
            loopback_config(),
            EngineConfig::default(),
            Some(policy.clone()),
        )
        .await;
        gw.upstream.push(Reply::tool_calls(vec![
            ToolCallSpec::new("ask_user", "{}").id("call_c"),
            ToolCallSpec::new("calc__add", r#"{"a":2,"b":3}"#),
        ]));
        let tools = json!([mcp_tool("calc", &fx.url), func("ask_user")]);
        let parent = create(
            &gw,
            mode,
            &json!({"model": "m", "input": "2+3?", "tools": tools}),
        )
        .await;
        assert_eq!(parent.status(), "completed", "{mode:?}");
        // The client's call was decided; the MCP call was deferred.
        assert_eq!(*policy.0.lock().unwrap(), ["ask_user"], "{mode:?}");

        let answer = json!({"type": "function_call_output", "call_id": "call_c", "output": "yes"});
        let second = create(
            &gw,
            mode,
            &json!({"model": "m", "previous_response_id": parent.id(),
                    "input": [answer], "tools": tools}),
        )
        .await;
        assert_eq!(second.status(), "completed", "{mode:?}: {}", second.resp);
        assert_eq!(
            output_types(&second.resp),
            ["mcp_call", "mcp_approval_request"],
            "{mode:?}"
        );
        assert_eq!(only(&second.resp, "mcp_call")["status"], "incomplete");
        assert_eq!(gw.upstream.request_count(), 1, "{mode:?}: no model turn");
        assert!(gw.hub.calls().is_empty());
        let req_id = only(&second.resp, "mcp_approval_request")["id"]
            .as_str()
            .unwrap()
            .to_owned();

        gw.upstream.push(Reply::text("It is 5."));
        let third = create(
            &gw,
            mode,
            &json!({"model": "m", "previous_response_id": second.id(),
                    "input": [approval(&req_id, true)], "tools": tools}),
        )
        .await;
        assert_eq!(third.status(), "completed", "{mode:?}: {}", third.resp);
        assert_eq!(only(&third.resp, "mcp_call")["output"], "5");
        assert_eq!(gw.hub.calls().len(), 1);
        assert_eq!(
            *policy.0.lock().unwrap(),
            ["ask_user", "calc__add", "calc__add (approved)"],
            "{mode:?}"
        );
    }
}
