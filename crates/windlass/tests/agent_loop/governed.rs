//! Seed 004's loop limits, completion check and execution trace, through
//! HTTP (JSON and SSE) with the scripted upstream standing in for the model.

use serde_json::{json, Value};
use windlass_engine::{
    CallDecision, EngineConfig, Policy, PolicyContext, RuledDecision, ToolCall, ToolDefinition,
    VERIFICATION_PROMPT,
};
use windlass_testkit::scenario::*;
use windlass_testkit::{Gateway, GatewayOptions, MockBehavior, MockExecutor, Reply, ToolCallSpec};

fn gateway_opts(mock: &MockExecutor, engine: EngineConfig) -> GatewayOptions {
    GatewayOptions {
        executors: vec![mock.arc()],
        engine,
        ..Default::default()
    }
}

async fn trace(gw: &Gateway, id: &str) -> Value {
    let (status, t) = gw.get_json(&format!("/v1/responses/{id}/trace")).await;
    assert_eq!(status, 200, "{t}");
    t
}

#[tokio::test]
async fn the_trace_has_a_step_per_turn_and_an_action_per_call_with_secrets_redacted() {
    for mode in MODES {
        let mock = MockExecutor::new().tool("lookup", MockBehavior::Ok("found it".into()));
        let gw = Gateway::start_with(gateway_opts(&mock, EngineConfig::default())).await;
        gw.upstream.push(Reply::tool_calls(vec![
            ToolCallSpec::new("lookup", r#"{"q":"x","api_key":"sk-secret"}"#).id("call_1"),
            ToolCallSpec::new("nope", "{}").id("call_2"),
        ]));
        gw.upstream.push(Reply::text("done"));
        let run = create(
            &gw,
            mode,
            &json!({"model": "m", "input": "go", "tools": funcs(&["lookup"])}),
        )
        .await;
        assert_eq!(run.status(), "completed", "{mode:?}");
        let t = trace(&gw, &run.id()).await;
        assert_eq!(t["object"], "response.trace");
        assert_eq!(t["response_id"], run.id().as_str());
        let steps = t["steps"].as_array().unwrap();
        assert_eq!(steps.len(), 2, "{t}");
        assert_eq!(steps[0]["index"], 0);
        assert_eq!(steps[0]["finish_reason"], "tool_calls");
        assert_eq!(steps[0]["tool_calls"], 2);
        assert_eq!(steps[1]["finish_reason"], "stop");
        let actions = t["actions"].as_array().unwrap();
        assert_eq!(actions.len(), 2, "{t}");
        let a = &actions[0];
        assert_eq!(a["tool"], "lookup");
        assert_eq!(a["owner"], "builtin");
        assert_eq!(a["step"], 0);
        assert_eq!(a["decision"], "allow");
        assert_eq!(a["outcome"], "ok");
        assert_eq!(a["output_bytes"], "found it".len());
        assert_eq!(a["arguments"], json!({"q": "x", "api_key": "[redacted]"}));
        assert!(!t.to_string().contains("sk-secret"));
        let b = &actions[1];
        assert_eq!(b["decision"], "deny");
        assert_eq!(b["denied_because"], "unknown_tool");
        assert_eq!(b["outcome"], "denied");
        assert_eq!(b["owner"], Value::Null);
    }
}

#[tokio::test]
async fn an_unknown_or_unstored_trace_is_404() {
    let gw = Gateway::start().await;
    let (status, body) = gw.get_json("/v1/responses/resp_nope/trace").await;
    assert_eq!(status, 404);
    assert_eq!(body["error"]["type"], "invalid_request_error");
    gw.upstream.push(Reply::text("hi"));
    let (status, r) = gw
        .post_json(
            "/v1/responses",
            &json!({"model": "m", "input": "hi", "store": false}),
        )
        .await;
    assert_eq!(status, 200);
    let id = r["id"].as_str().unwrap();
    let (status, _) = gw.get_json(&format!("/v1/responses/{id}/trace")).await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn consecutive_failed_calls_end_the_response_at_the_threshold() {
    for mode in MODES {
        let mock = MockExecutor::new().tool("flaky", MockBehavior::Fail("down".into()));
        let gw = Gateway::start_with(gateway_opts(&mock, EngineConfig::default())).await;
        gw.upstream.push(Reply::tool_call("flaky", "{}"));
        gw.upstream.push(Reply::tool_call("flaky", "{}"));
        gw.upstream.push(Reply::text("never asked"));
        let run = create(
            &gw,
            mode,
            &json!({"model": "m", "input": "go", "tools": funcs(&["flaky"]),
                    "metadata": {"windlass_tool_error_threshold": "2"}}),
        )
        .await;
        assert_eq!(run.status(), "incomplete", "{mode:?}");
        assert_eq!(
            run.resp["incomplete_details"]["reason"],
            "tool_error_threshold"
        );
        assert_eq!(mock.calls().len(), 2);
        assert_eq!(gw.upstream.request_count(), 2);
    }
}

#[tokio::test]
async fn a_success_resets_the_error_count() {
    let mock = MockExecutor::new()
        .tool("flaky", MockBehavior::Fail("down".into()))
        .tool("fine", MockBehavior::Ok("ok".into()));
    let config = EngineConfig {
        tool_error_threshold: Some(2),
        ..EngineConfig::default()
    };
    let gw = Gateway::start_with(gateway_opts(&mock, config)).await;
    for name in ["flaky", "fine", "flaky"] {
        gw.upstream.push(Reply::tool_call(name, "{}"));
    }
    gw.upstream.push(Reply::text("done"));
    let run = create(
        &gw,
        Mode::Json,
        &json!({"model": "m", "input": "go", "tools": funcs(&["flaky", "fine"])}),
    )
    .await;
    assert_eq!(run.status(), "completed");
}

#[tokio::test]
async fn calls_over_the_per_turn_limit_get_an_error_output() {
    for mode in MODES {
        let mock = MockExecutor::new().tool("lookup", MockBehavior::Ok("found".into()));
        let config = EngineConfig {
            max_tool_calls_per_turn: Some(5),
            ..EngineConfig::default()
        };
        let gw = Gateway::start_with(gateway_opts(&mock, config)).await;
        gw.upstream.push(Reply::tool_calls(vec![
            ToolCallSpec::new("lookup", r#"{"n":1}"#),
            ToolCallSpec::new("lookup", r#"{"n":2}"#),
        ]));
        gw.upstream.push(Reply::text("done"));
        // The request lowers the server's 5 to 1.
        let run = create(
            &gw,
            mode,
            &json!({"model": "m", "input": "go", "tools": funcs(&["lookup"]),
                    "metadata": {"windlass_max_tool_calls_per_turn": "1"}}),
        )
        .await;
        assert_eq!(run.status(), "completed", "{mode:?}");
        assert_eq!(mock.calls().len(), 1);
        let outputs: Vec<&Value> = run.resp["output"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|i| i["type"] == "function_call_output")
            .collect();
        assert_eq!(outputs.len(), 2);
        assert_eq!(outputs[0]["output"], "found");
        assert!(outputs[1]["output"]
            .as_str()
            .unwrap()
            .contains("at most 1 tool calls per turn"));
    }
}

#[tokio::test]
async fn the_request_lowers_max_turns_but_cannot_raise_it() {
    let mock = MockExecutor::new().tool("lookup", MockBehavior::Ok("found".into()));
    let config = EngineConfig {
        max_agentic_turns: 2,
        ..EngineConfig::default()
    };
    let gw = Gateway::start_with(gateway_opts(&mock, config)).await;
    gw.upstream.set_default(Reply::tool_call("lookup", "{}"));
    let body = |turns: &str| {
        json!({"model": "m", "input": "go", "tools": funcs(&["lookup"]),
               "metadata": {"windlass_max_turns": turns}})
    };
    let run = create(&gw, Mode::Json, &body("1")).await;
    assert_eq!(run.resp["incomplete_details"]["reason"], "max_turns");
    assert_eq!(gw.upstream.request_count(), 1);
    let run = create(&gw, Mode::Json, &body("50")).await;
    assert_eq!(run.resp["incomplete_details"]["reason"], "max_turns");
    assert_eq!(gw.upstream.request_count(), 1 + 2);
}

#[tokio::test]
async fn a_bad_limit_is_a_400_and_nothing_runs() {
    let gw = Gateway::start().await;
    let (status, body) = gw
        .post_json(
            "/v1/responses",
            &json!({"model": "m", "input": "go", "metadata": {"windlass_max_turns": "zero"}}),
        )
        .await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["error"]["param"], "metadata.windlass_max_turns");
    assert_eq!(gw.upstream.request_count(), 0);
}

#[tokio::test]
async fn the_completion_check_adds_exactly_one_turn_after_tools() {
    for mode in MODES {
        let mock = MockExecutor::new().tool("lookup", MockBehavior::Ok("found".into()));
        let config = EngineConfig {
            completion_check: true,
            ..EngineConfig::default()
        };
        let gw = Gateway::start_with(gateway_opts(&mock, config)).await;
        gw.upstream.push(Reply::tool_call("lookup", "{}"));
        gw.upstream.push(Reply::text("it is found"));
        gw.upstream.push(Reply::text("verified: it is found"));
        let run = create(
            &gw,
            mode,
            &json!({"model": "m", "input": "go", "tools": funcs(&["lookup"])}),
        )
        .await;
        assert_eq!(run.status(), "completed", "{mode:?}");
        let reqs = gw.upstream.requests();
        assert_eq!(reqs.len(), 3);
        let last = reqs[2]["messages"].as_array().unwrap();
        let prompt = last.last().unwrap();
        assert_eq!(prompt["role"], "system");
        assert_eq!(prompt["content"], VERIFICATION_PROMPT);
        assert_eq!(last[last.len() - 2]["content"], "it is found");
        // The prompt is the model's, not part of the output.
        assert!(!run.resp.to_string().contains("Before I accept"));
        let t = trace(&gw, &run.id()).await;
        let steps = t["steps"].as_array().unwrap();
        assert_eq!(steps.len(), 3);
        assert_eq!(steps[2]["verification"], true);
        assert_eq!(steps[1]["verification"], false);
    }
}

#[tokio::test]
async fn the_completion_check_leaves_tool_free_answers_alone() {
    let mock = MockExecutor::new();
    let config = EngineConfig {
        completion_check: true,
        ..EngineConfig::default()
    };
    let gw = Gateway::start_with(gateway_opts(&mock, config)).await;
    gw.upstream.push(Reply::text("hello"));
    let run = create(&gw, Mode::Json, &json!({"model": "m", "input": "hi"})).await;
    assert_eq!(run.status(), "completed");
    assert_eq!(gw.upstream.request_count(), 1);
}

/// Denies `write` naming the rule, allows the rest.
struct Rules;

#[async_trait::async_trait]
impl Policy for Rules {
    async fn decide_call(
        &self,
        _ctx: &PolicyContext<'_>,
        call: &ToolCall,
        _tool: Option<&ToolDefinition>,
    ) -> RuledDecision {
        if call.name == "write" {
            RuledDecision {
                decision: CallDecision::Deny {
                    reason: "read-only key".into(),
                },
                rule: Some("autonomy:read_only".into()),
            }
        } else {
            CallDecision::Allow.into()
        }
    }
}

#[tokio::test]
async fn the_trace_names_the_rule_that_denied_a_call() {
    let mock = MockExecutor::new().tool("write", MockBehavior::Ok("written".into()));
    let gw = Gateway::start_with(GatewayOptions {
        executors: vec![mock.arc()],
        policy: Some(std::sync::Arc::new(Rules)),
        ..Default::default()
    })
    .await;
    gw.upstream.push(Reply::tool_call("write", "{}"));
    gw.upstream.push(Reply::text("could not"));
    let run = create(
        &gw,
        Mode::Json,
        &json!({"model": "m", "input": "go", "tools": funcs(&["write"])}),
    )
    .await;
    assert_eq!(run.status(), "completed");
    assert!(mock.calls().is_empty());
    let t = trace(&gw, &run.id()).await;
    let a = &t["actions"][0];
    assert_eq!(a["decision"], "deny");
    assert_eq!(a["denied_because"], "policy");
    assert_eq!(a["rule"], "autonomy:read_only");
    assert_eq!(a["outcome"], "denied");
}
