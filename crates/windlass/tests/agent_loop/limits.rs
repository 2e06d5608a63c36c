//! Seed 000, user story 5 and the loop's limits: turn limit (FR-013/015),
//! `max_tool_calls`, cancellation (FR-014), provider failure mid-loop
//! (FR-030), and the `Policy` gate (deny, rewrite, replace, stop). Over HTTP
//! as JSON and as SSE.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use windlass_engine::{
    CallDecision, EngineConfig, LoopBudget, Policy, PolicyContext, ToolCall, ToolDefinition,
    ToolResult, TurnDecision,
};
use windlass_testkit::scenario::*;
use windlass_testkit::{Gateway, GatewayOptions, MockBehavior, MockExecutor, Reply};

/// The plain loop: these scripted models repeat one call, which the stall
/// stop (on by default) would refuse before any limit is reached.
fn req(tools: &[&str]) -> Value {
    json!({"model": "m", "input": "keep going", "tools": funcs(tools),
           "metadata": {"windlass_techniques": "none"}})
}

/// US5 scenario 1 / FR-013 / SC-006: a model that always calls tools stops
/// after `max_agentic_turns` model turns: `incomplete` / `max_turns`, with
/// every call and result so far.
#[tokio::test]
async fn turn_limit_ends_incomplete_with_results() {
    for mode in MODES {
        let mock = MockExecutor::new().tool("again", MockBehavior::Echo);
        let gw = Gateway::start_with(GatewayOptions {
            executors: vec![mock.arc()],
            engine: EngineConfig {
                max_agentic_turns: 2,
                ..Default::default()
            },
            ..Default::default()
        })
        .await;
        gw.upstream
            .set_default(Reply::tool_call("again", r#"{"more":true}"#));
        let run = create(&gw, mode, &req(&["again"])).await;
        assert_eq!(run.status(), "incomplete", "{mode:?}: {}", run.resp);
        assert_eq!(run.resp["incomplete_details"]["reason"], "max_turns");
        assert!(run.resp["error"].is_null());
        assert_eq!(
            gw.upstream.request_count(),
            2,
            "{mode:?}: exactly max_agentic_turns model calls"
        );
        assert_eq!(
            output_types(&run.resp),
            [
                "function_call",
                "function_call_output",
                "function_call",
                "function_call_output"
            ],
            "{mode:?}: results accumulated"
        );
        assert_eq!(mock.calls().len(), 2);
        let out = output(&run.resp);
        assert_eq!(out[1]["call_id"], out[0]["call_id"]);
        assert_eq!(out[3]["call_id"], out[2]["call_id"]);
        assert_ne!(out[0]["call_id"], out[2]["call_id"]);
        // The second model turn saw the first round.
        let reqs = gw.upstream.requests();
        assert_eq!(tool_messages(&reqs[1]).len(), 1);
        if let Some(cap) = &run.sse {
            assert_eq!(terminal(cap), "response.incomplete");
        }
    }
}

/// DESIGN + seed 003: the request's `max_tool_calls` budget: when spent,
/// status `completed` with `incomplete_details.reason = "max_tool_calls"`,
/// identical in JSON and SSE (terminal event `response.completed`).
#[tokio::test]
async fn max_tool_calls_budget_completed_same_in_json_and_sse() {
    let mut seen = Vec::new();
    for mode in MODES {
        let mock = MockExecutor::new().tool("again", MockBehavior::Ok("r".into()));
        let gw = Gateway::start_with(GatewayOptions {
            executors: vec![mock.arc()],
            ..Default::default()
        })
        .await;
        gw.upstream.set_default(Reply::tool_call("again", "{}"));
        let mut body = req(&["again"]);
        body["max_tool_calls"] = json!(1);
        let run = create(&gw, mode, &body).await;
        assert_eq!(run.status(), "completed", "{mode:?}: {}", run.resp);
        assert_eq!(
            run.resp["incomplete_details"]["reason"], "max_tool_calls",
            "{mode:?}"
        );
        assert_eq!(run.resp["max_tool_calls"], 1);
        assert_eq!(mock.calls().len(), 1, "{mode:?}: budget overrun");
        assert_eq!(gw.upstream.request_count(), 2, "{mode:?}");
        assert_eq!(
            output_types(&run.resp),
            ["function_call", "function_call_output", "function_call"],
            "{mode:?}"
        );
        if let Some(cap) = &run.sse {
            assert_eq!(terminal(cap), "response.completed");
        }
        seen.push((
            run.resp["status"].clone(),
            run.resp["incomplete_details"].clone(),
            output_types(&run.resp),
        ));
    }
    assert_eq!(seen[0], seen[1], "JSON and SSE differ");
}

/// The budget also caps calls within one turn: the calls beyond it do not
/// run.
#[tokio::test]
async fn max_tool_calls_caps_calls_within_a_turn() {
    for mode in MODES {
        let mock = MockExecutor::new().tool("t", MockBehavior::Ok("r".into()));
        let gw = Gateway::start_with(GatewayOptions {
            executors: vec![mock.arc()],
            ..Default::default()
        })
        .await;
        gw.upstream.push(Reply::tool_calls(vec![
            windlass_testkit::ToolCallSpec::new("t", "{}").id("c1"),
            windlass_testkit::ToolCallSpec::new("t", "{}").id("c2"),
            windlass_testkit::ToolCallSpec::new("t", "{}").id("c3"),
        ]));
        let mut body = req(&["t"]);
        body["max_tool_calls"] = json!(2);
        let run = create(&gw, mode, &body).await;
        assert_eq!(run.status(), "completed", "{mode:?}: {}", run.resp);
        assert_eq!(run.resp["incomplete_details"]["reason"], "max_tool_calls");
        assert_eq!(mock.calls().len(), 2, "{mode:?}");
        assert_eq!(gw.upstream.request_count(), 1);
        let outs: Vec<_> = outputs_of(&run.resp, "function_call_output")
            .iter()
            .map(|o| o["call_id"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(outs, ["c1", "c2"]);
    }
}

async fn wait_terminal(gw: &Gateway, id: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (s, r) = gw.get_json(&format!("/v1/responses/{id}")).await;
        assert_eq!(s, 200, "{r}");
        if r["status"] != "in_progress" {
            return r;
        }
        assert!(Instant::now() < deadline, "response {id} never ended");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// US5 scenario 2 / FR-014: `POST /v1/responses/{id}/cancel` while a tool
/// runs: the tool stops at once (its 30 s sleep is cut short), the client
/// gets `cancelled` (`response.cancelled` in SSE), and it is stored so.
#[tokio::test]
async fn cancel_mid_tool_stops_the_tool() {
    for mode in MODES {
        let probe = Probe::new("slow", Duration::from_secs(30), "never");
        let gw = Arc::new(
            Gateway::start_with(GatewayOptions {
                executors: vec![probe.arc()],
                ..Default::default()
            })
            .await,
        );
        gw.upstream
            .push(Reply::tool_call("slow", "{}").with_call_id("call_slow"));
        gw.upstream.push(Reply::text("unreachable"));
        let body = req(&["slow"]);
        let client = {
            let gw = gw.clone();
            tokio::spawn(async move {
                match mode {
                    Mode::Json => {
                        let (s, r) = gw.post_json("/v1/responses", &body).await;
                        (s, r, None)
                    }
                    Mode::Sse => {
                        let cap = gw.stream(&body).await;
                        (cap.status, Value::Null, Some(cap))
                    }
                }
            })
        };
        probe.wait_started(1, Duration::from_secs(10)).await;
        let id = probe.response_ids()[0].clone();
        let t0 = Instant::now();
        let (s, cancelled) = gw
            .post_json(&format!("/v1/responses/{id}/cancel"), &json!({}))
            .await;
        assert_eq!(s, 200, "{mode:?}: {cancelled}");
        assert_eq!(cancelled["status"], "cancelled", "{mode:?}: {cancelled}");
        assert!(
            t0.elapsed() < Duration::from_secs(5),
            "cancel took {:?}",
            t0.elapsed()
        );
        assert!(
            probe.wait_ended(1, Duration::from_secs(5)).await,
            "{mode:?}: the tool kept running after cancel"
        );
        let end = &probe.ended()[0];
        assert_ne!(end.how, ProbeEndKind::Finished, "{mode:?}");
        assert!(end.after < Duration::from_secs(10), "{end:?}");

        let (status, json_body, cap) = tokio::time::timeout(Duration::from_secs(10), client)
            .await
            .expect("client request did not end")
            .expect("client task");
        assert_eq!(status, 200);
        let fin = match (mode, cap) {
            (Mode::Json, _) => json_body,
            (Mode::Sse, Some(cap)) => {
                let fin = check_stream(&gw, &cap).await;
                assert_eq!(terminal(&cap), "response.cancelled");
                fin
            }
            _ => unreachable!(),
        };
        assert_eq!(fin["id"], id.as_str());
        assert_eq!(fin["status"], "cancelled", "{mode:?}: {fin}");
        assert_eq!(fin["output"][0]["type"], "function_call");
        let stored = wait_terminal(&gw, &id).await;
        assert_eq!(stored["status"], "cancelled");
        assert_eq!(stored, fin, "{mode:?}: stored differs from the client's");
        assert_eq!(cancelled, fin);
        assert_eq!(
            gw.upstream.request_count(),
            1,
            "{mode:?}: loop went on after cancel"
        );
    }
}

/// Cancelling a finished response is refused and changes nothing.
#[tokio::test]
async fn cancel_after_the_end_is_refused() {
    let gw = Gateway::start().await;
    gw.upstream.push(Reply::text("hi"));
    let run = create(&gw, Mode::Json, &json!({"model": "m", "input": "hi"})).await;
    let (s, b) = gw
        .post_json(&format!("/v1/responses/{}/cancel", run.id()), &json!({}))
        .await;
    assert_eq!(s, 400, "{b}");
    assert_stored_equals(&gw, &run.resp).await;
}

/// US5 scenario 3 / FR-030: a provider error on the second turn ends the
/// response `failed` with the error details; the first turn's items stay.
#[tokio::test]
async fn provider_error_on_second_turn_fails_with_first_turn_items() {
    for mode in MODES {
        let probe = Probe::new("step", Duration::from_millis(1), "step done");
        let gw = Gateway::start_with(GatewayOptions {
            executors: vec![probe.arc()],
            ..Default::default()
        })
        .await;
        gw.upstream
            .push(Reply::tool_call("step", "{}").with_call_id("call_1"));
        gw.upstream
            .push(Reply::error(500, "the model server exploded"));
        let body = req(&["step"]);
        let fin = match mode {
            Mode::Json => {
                let (s, b) = gw.post_json("/v1/responses", &body).await;
                assert!(s >= 500, "JSON status {s}: {b}");
                let msg = b["error"]["message"].as_str().unwrap_or_default();
                assert!(msg.contains("exploded"), "{b}");
                assert_eq!(b["error"]["type"], "server_error");
                // The failed response is stored with what was done.
                let id = probe.response_ids()[0].clone();
                let (s, stored) = gw.get_json(&format!("/v1/responses/{id}")).await;
                assert_eq!(s, 200);
                stored
            }
            Mode::Sse => {
                let cap = gw.stream(&body).await;
                let fin = check_stream(&gw, &cap).await;
                assert_eq!(terminal(&cap), "response.failed");
                assert!(cap.of_type("error").is_empty() || cap.of_type("error").len() == 1);
                fin
            }
        };
        assert_eq!(fin["status"], "failed", "{mode:?}: {fin}");
        let err = &fin["error"];
        assert!(err.is_object(), "{mode:?}: no error details: {fin}");
        assert!(err["code"].is_string(), "{err}");
        assert!(
            err["message"]
                .as_str()
                .unwrap_or_default()
                .contains("exploded"),
            "{mode:?}: {err}"
        );
        assert_eq!(
            output_types(&fin),
            ["function_call", "function_call_output"],
            "{mode:?}: first turn's items lost"
        );
        assert_eq!(fin["output"][1]["output"], "step done");
        assert_eq!(gw.upstream.request_count(), 2);
        assert_eq!(
            tool_messages(&gw.upstream.requests()[1]),
            [("call_1".into(), "step done".into())]
        );
    }
}

// ---- Policy ---------------------------------------------------------------

/// Denies one tool, rewrites another's arguments, replaces a third's result,
/// and stops before a model turn once `stop_after_turns` turns were made.
#[derive(Default)]
struct TestPolicy {
    deny: Option<(&'static str, &'static str)>,
    rewrite: Option<(&'static str, &'static str)>,
    replace: Option<(&'static str, &'static str)>,
    stop_after_turns: Option<(u32, &'static str)>,
}

#[async_trait::async_trait]
impl Policy for TestPolicy {
    async fn before_turn(&self, _ctx: &PolicyContext<'_>, budget: &LoopBudget) -> TurnDecision {
        match self.stop_after_turns {
            Some((n, reason)) if budget.turns >= n => TurnDecision::Stop {
                reason: reason.to_owned(),
            },
            _ => TurnDecision::Continue,
        }
    }

    async fn before_call(
        &self,
        _ctx: &PolicyContext<'_>,
        call: &ToolCall,
        _tool: Option<&ToolDefinition>,
    ) -> CallDecision {
        if let Some((name, reason)) = self.deny {
            if call.name == name {
                return CallDecision::Deny {
                    reason: reason.to_owned(),
                };
            }
        }
        if let Some((name, args)) = self.rewrite {
            if call.name == name {
                return CallDecision::AllowWithArguments(args.to_owned());
            }
        }
        CallDecision::Allow
    }

    async fn after_call(
        &self,
        _ctx: &PolicyContext<'_>,
        call: &ToolCall,
        result: ToolResult,
    ) -> ToolResult {
        match self.replace {
            Some((name, text)) if call.name == name => ToolResult::ok(text),
            _ => result,
        }
    }
}

async fn policy_gateway(mock: &MockExecutor, policy: TestPolicy) -> Gateway {
    Gateway::start_with(GatewayOptions {
        executors: vec![mock.arc()],
        policy: Some(Arc::new(policy)),
        ..Default::default()
    })
    .await
}

/// A denied call is not executed; the reason is fed back as its error output.
#[tokio::test]
async fn policy_deny_feeds_reason_back() {
    for mode in MODES {
        let mock = MockExecutor::new()
            .tool("rm_rf", MockBehavior::Ok("deleted everything".into()))
            .tool("ls", MockBehavior::Ok("a b c".into()));
        let gw = policy_gateway(
            &mock,
            TestPolicy {
                deny: Some(("rm_rf", "destructive commands need a human")),
                ..Default::default()
            },
        )
        .await;
        gw.upstream.push(Reply::tool_calls(vec![
            windlass_testkit::ToolCallSpec::new("rm_rf", r#"{"path":"/"}"#).id("c_rm"),
            windlass_testkit::ToolCallSpec::new("ls", "{}").id("c_ls"),
        ]));
        gw.upstream
            .push(Reply::text("I was not allowed to delete."));
        let run = create(&gw, mode, &req(&["rm_rf", "ls"])).await;
        assert_eq!(run.status(), "completed", "{mode:?}: {}", run.resp);
        let names: Vec<_> = mock.calls().into_iter().map(|c| c.name).collect();
        assert_eq!(names, ["ls"], "{mode:?}: denied tool executed");
        let outs = outputs_of(&run.resp, "function_call_output");
        assert_eq!(outs[0]["call_id"], "c_rm");
        assert_eq!(outs[0]["is_error"], true);
        let text = outs[0]["output"].as_str().unwrap();
        assert!(text.contains("destructive commands need a human"), "{text}");
        assert_eq!(outs[1]["output"], "a b c");
        let fed = tool_messages(&gw.upstream.requests()[1]);
        assert_eq!(fed[0], ("c_rm".into(), text.into()));
        assert_eq!(fed[1], ("c_ls".into(), "a b c".into()));
    }
}

/// `AllowWithArguments`: the executor sees the policy's arguments.
#[tokio::test]
async fn policy_rewrites_arguments() {
    for mode in MODES {
        let mock = MockExecutor::new().tool("get_weather", MockBehavior::Echo);
        let gw = policy_gateway(
            &mock,
            TestPolicy {
                rewrite: Some(("get_weather", r#"{"city":"Berlin"}"#)),
                ..Default::default()
            },
        )
        .await;
        gw.upstream
            .push(Reply::tool_call("get_weather", r#"{"city":"Paris"}"#).with_call_id("c_w"));
        gw.upstream.push(Reply::text("Berlin weather"));
        let run = create(&gw, mode, &req(&["get_weather"])).await;
        assert_eq!(run.status(), "completed", "{mode:?}: {}", run.resp);
        let calls = mock.calls();
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].arguments, r#"{"city":"Berlin"}"#, "{mode:?}");
        assert_eq!(calls[0].call_id, "c_w");
        let out = &outputs_of(&run.resp, "function_call_output")[0];
        assert_eq!(out["output"], r#"{"city":"Berlin"}"#);
        assert_eq!(
            tool_messages(&gw.upstream.requests()[1]),
            [("c_w".into(), r#"{"city":"Berlin"}"#.into())]
        );
    }
}

/// `after_call` may replace a result: the client and the model see the
/// replacement.
#[tokio::test]
async fn policy_after_call_replaces_result() {
    for mode in MODES {
        let mock = MockExecutor::new().tool("read_secret", MockBehavior::Ok("hunter2".into()));
        let gw = policy_gateway(
            &mock,
            TestPolicy {
                replace: Some(("read_secret", "[redacted]")),
                ..Default::default()
            },
        )
        .await;
        gw.upstream
            .push(Reply::tool_call("read_secret", "{}").with_call_id("c_s"));
        gw.upstream.push(Reply::text("It is redacted."));
        let run = create(&gw, mode, &req(&["read_secret"])).await;
        assert_eq!(run.status(), "completed", "{mode:?}: {}", run.resp);
        assert_eq!(mock.calls().len(), 1);
        let out = &outputs_of(&run.resp, "function_call_output")[0];
        assert_eq!(out["output"], "[redacted]");
        let fed = tool_messages(&gw.upstream.requests()[1]);
        assert_eq!(fed, [("c_s".into(), "[redacted]".into())]);
        assert!(
            !serde_json::to_string(&gw.upstream.requests())
                .unwrap()
                .contains("hunter2"),
            "{mode:?}: the replaced result leaked upstream"
        );
        if let Some(cap) = &run.sse {
            assert!(!cap.raw.contains("hunter2"), "leaked into the stream");
        }
    }
}

/// `before_turn` Stop -> `incomplete` with the policy's reason; no further
/// model call.
#[tokio::test]
async fn policy_before_turn_stop_is_incomplete_with_reason() {
    for mode in MODES {
        let mock = MockExecutor::new().tool("t", MockBehavior::Ok("r".into()));
        let gw = policy_gateway(
            &mock,
            TestPolicy {
                stop_after_turns: Some((1, "autonomy_budget")),
                ..Default::default()
            },
        )
        .await;
        gw.upstream.set_default(Reply::tool_call("t", "{}"));
        let run = create(&gw, mode, &req(&["t"])).await;
        assert_eq!(run.status(), "incomplete", "{mode:?}: {}", run.resp);
        assert_eq!(run.resp["incomplete_details"]["reason"], "autonomy_budget");
        assert_eq!(gw.upstream.request_count(), 1, "{mode:?}");
        assert_eq!(
            output_types(&run.resp),
            ["function_call", "function_call_output"]
        );
        if let Some(cap) = &run.sse {
            assert_eq!(terminal(cap), "response.incomplete");
        }
    }
}

/// A Stop before the very first turn: no model call, empty output.
#[tokio::test]
async fn policy_stop_before_first_turn() {
    for mode in MODES {
        let mock = MockExecutor::new().tool("t", MockBehavior::Ok("r".into()));
        let gw = policy_gateway(
            &mock,
            TestPolicy {
                stop_after_turns: Some((0, "tenant_suspended")),
                ..Default::default()
            },
        )
        .await;
        let run = create(&gw, mode, &req(&["t"])).await;
        assert_eq!(run.status(), "incomplete", "{mode:?}: {}", run.resp);
        assert_eq!(run.resp["incomplete_details"]["reason"], "tenant_suspended");
        assert_eq!(gw.upstream.request_count(), 0);
        assert!(output(&run.resp).is_empty());
    }
}

// ---- Other ways the response's cancel token fires -------------------------

/// FR-014 + DESIGN ("client disconnect ... stop the upstream call and the
/// running tools"): a streaming client that hangs up while a tool runs ->
/// the tool stops and the response is stored `cancelled`.
#[tokio::test]
async fn sse_client_disconnect_mid_tool_stops_the_tool() {
    let probe = Probe::new("slow", Duration::from_secs(20), "never");
    let gw = Gateway::start_with(GatewayOptions {
        executors: vec![probe.arc()],
        ..Default::default()
    })
    .await;
    gw.upstream
        .push(Reply::tool_call("slow", "{}").with_call_id("call_slow"));
    gw.upstream.push(Reply::text("unreachable"));
    let mut body = req(&["slow"]);
    body["stream"] = json!(true);
    let mut resp = gw
        .client
        .post(gw.url("/v1/responses"))
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let _first = resp.chunk().await.unwrap();
    probe.wait_started(1, Duration::from_secs(10)).await;
    let id = probe.response_ids()[0].clone();
    drop(resp);
    assert!(
        probe.wait_ended(1, Duration::from_secs(3)).await,
        "the tool kept running after the client hung up"
    );
    assert_ne!(probe.ended()[0].how, ProbeEndKind::Finished);
    let stored = wait_terminal(&gw, &id).await;
    assert_eq!(stored["status"], "cancelled", "{stored}");
    assert_eq!(gw.upstream.request_count(), 1);
}

/// Same root cause during a model turn: a streaming client that hangs up
/// while the upstream has not answered yet -> the upstream call must be
/// abandoned.
#[tokio::test]
async fn sse_client_disconnect_while_upstream_is_silent_stops_the_upstream_call() {
    let gw = Gateway::start().await;
    gw.upstream
        .push(Reply::text("late").first_byte_delay(Duration::from_secs(6)));
    let mut resp = gw
        .client
        .post(gw.url("/v1/responses"))
        .json(&json!({"model": "m", "input": "x", "stream": true}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let first = resp.chunk().await.unwrap().unwrap();
    let text = String::from_utf8_lossy(&first).to_string();
    assert!(
        gw.upstream
            .wait_for_requests(1, Duration::from_secs(5))
            .await
    );
    drop(resp);
    assert!(
        gw.upstream
            .wait_for_disconnects(1, Duration::from_secs(3))
            .await,
        "the upstream call went on after the client hung up"
    );
    let id = text
        .split("\"id\":\"")
        .nth(1)
        .and_then(|r| r.split('"').next())
        .expect("response id in the first event")
        .to_owned();
    let stored = wait_terminal(&gw, &id).await;
    assert_eq!(stored["status"], "cancelled", "{stored}");
}

/// Same for a non-streaming client that hangs up.
#[tokio::test]
async fn json_client_disconnect_mid_tool_stops_the_tool() {
    let probe = Probe::new("slow", Duration::from_secs(20), "never");
    let gw = Arc::new(
        Gateway::start_with(GatewayOptions {
            executors: vec![probe.arc()],
            ..Default::default()
        })
        .await,
    );
    gw.upstream
        .push(Reply::tool_call("slow", "{}").with_call_id("call_slow"));
    gw.upstream.push(Reply::text("unreachable"));
    let body = req(&["slow"]);
    let task = {
        let gw = gw.clone();
        tokio::spawn(async move { gw.post_json("/v1/responses", &body).await })
    };
    probe.wait_started(1, Duration::from_secs(10)).await;
    let id = probe.response_ids()[0].clone();
    task.abort();
    let _ = task.await;
    assert!(
        probe.wait_ended(1, Duration::from_secs(3)).await,
        "the tool kept running after the client hung up"
    );
    let stored = wait_terminal(&gw, &id).await;
    assert_eq!(stored["status"], "cancelled", "{stored}");
    assert_eq!(gw.upstream.request_count(), 1);
}

/// FR-014 during a model turn: cancel while the second upstream call is
/// pending -> the upstream request is abandoned, `cancelled`, the first
/// round's items kept.
#[tokio::test]
async fn cancel_during_second_model_turn_stops_the_upstream_call() {
    for mode in MODES {
        let probe = Probe::new("step", Duration::from_millis(1), "step done");
        let gw = Arc::new(
            Gateway::start_with(GatewayOptions {
                executors: vec![probe.arc()],
                ..Default::default()
            })
            .await,
        );
        gw.upstream
            .push(Reply::tool_call("step", "{}").with_call_id("call_1"));
        gw.upstream
            .push(Reply::text("too slow").first_byte_delay(Duration::from_secs(30)));
        let body = req(&["step"]);
        let client = {
            let gw = gw.clone();
            tokio::spawn(async move {
                match mode {
                    Mode::Json => gw.post_json("/v1/responses", &body).await.1,
                    Mode::Sse => {
                        let cap = gw.stream(&body).await;
                        let fin = check_stream(&gw, &cap).await;
                        assert_eq!(terminal(&cap), "response.cancelled");
                        fin
                    }
                }
            })
        };
        assert!(
            gw.upstream
                .wait_for_requests(2, Duration::from_secs(10))
                .await
        );
        let id = probe.response_ids()[0].clone();
        let (s, c) = gw
            .post_json(&format!("/v1/responses/{id}/cancel"), &json!({}))
            .await;
        assert_eq!(s, 200, "{c}");
        assert_eq!(c["status"], "cancelled");
        assert!(
            gw.upstream
                .wait_for_disconnects(1, Duration::from_secs(5))
                .await,
            "{mode:?}: the upstream call was not abandoned"
        );
        let fin = tokio::time::timeout(Duration::from_secs(10), client)
            .await
            .expect("client did not end")
            .expect("client task");
        assert_eq!(fin["status"], "cancelled", "{mode:?}: {fin}");
        assert_eq!(
            output_types(&fin),
            ["function_call", "function_call_output"]
        );
        assert_eq!(wait_terminal(&gw, &id).await, fin);
    }
}

/// DESIGN: deadlines stop running tools too. With `max_response_time`, a
/// tool that outlives the response's wall-clock budget must not keep the
/// response open until it finishes.
#[tokio::test]
async fn max_response_time_stops_a_running_tool() {
    let probe = Probe::new("slow", Duration::from_secs(8), "late");
    let gw = Gateway::start_with(GatewayOptions {
        executors: vec![probe.arc()],
        engine: EngineConfig {
            max_response_time: Some(Duration::from_millis(300)),
            ..Default::default()
        },
        ..Default::default()
    })
    .await;
    gw.upstream
        .push(Reply::tool_call("slow", "{}").with_call_id("call_slow"));
    gw.upstream.push(Reply::text("unreachable"));
    let t0 = Instant::now();
    let run = create(&gw, Mode::Json, &req(&["slow"])).await;
    let took = t0.elapsed();
    assert_eq!(run.status(), "incomplete", "{}", run.resp);
    assert_eq!(
        run.resp["incomplete_details"]["reason"],
        "max_response_time"
    );
    assert!(
        took < Duration::from_secs(4),
        "the deadline did not stop the tool: the response took {took:?}"
    );
    assert_ne!(probe.ended()[0].how, ProbeEndKind::Finished);
}
