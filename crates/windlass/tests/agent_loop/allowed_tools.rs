//! Seed 000, user story 4: allowed-tools filtering (FR-008..010), both the
//! seed's top-level `allowed_tools` list and OpenResponses'
//! `tool_choice: {type: allowed_tools}`, plus calls to tools the request does
//! not have (edge case). Over HTTP as JSON and as SSE.

use serde_json::{json, Value};
use windlass_testkit::scenario::*;
use windlass_testkit::{Gateway, GatewayOptions, MockBehavior, MockExecutor, Reply, ToolCallSpec};

fn abc_mock() -> MockExecutor {
    MockExecutor::new()
        .tool("tool_a", MockBehavior::Ok("A ran".into()))
        .tool("tool_b", MockBehavior::Ok("B ran".into()))
        .tool("tool_c", MockBehavior::Ok("C ran".into()))
}

async fn gateway(mock: &MockExecutor) -> Gateway {
    Gateway::start_with(GatewayOptions {
        executors: vec![mock.arc()],
        ..Default::default()
    })
    .await
}

fn tools() -> Value {
    funcs(&["tool_a", "tool_b", "tool_c"])
}

fn called(mock: &MockExecutor) -> Vec<String> {
    mock.calls().into_iter().map(|c| c.name).collect()
}

/// The two ways to restrict the request to tool_a.
fn only_a_variants() -> Vec<(&'static str, Value)> {
    vec![
        ("allowed_tools", json!({"allowed_tools": ["tool_a"]})),
        (
            "tool_choice",
            json!({"tool_choice": {
                "type": "allowed_tools",
                "mode": "auto",
                "tools": [{"type": "function", "name": "tool_a"}],
            }}),
        ),
    ]
}

fn body(extra: &Value, input: &str) -> Value {
    let mut b = json!({"model": "m", "input": input, "tools": tools()});
    for (k, v) in extra.as_object().unwrap() {
        b[k] = v.clone();
    }
    b
}

/// US4 scenario 1 / FR-008: all tools are shown to the model; a call to the
/// allowed tool runs normally.
#[tokio::test]
async fn allowed_call_is_executed_and_all_tools_are_sent() {
    for (variant, extra) in only_a_variants() {
        for mode in MODES {
            let mock = abc_mock();
            let gw = gateway(&mock).await;
            gw.upstream
                .push(Reply::tool_call("tool_a", r#"{"x":1}"#).with_call_id("call_a"));
            gw.upstream.push(Reply::text("A done"));
            let run = create(&gw, mode, &body(&extra, "use A")).await;
            let tag = format!("{variant}/{mode:?}");
            assert_eq!(run.status(), "completed", "{tag}: {}", run.resp);
            assert_eq!(called(&mock), ["tool_a"], "{tag}");
            let outs = outputs_of(&run.resp, "function_call_output");
            assert_eq!(outs[0]["output"], "A ran");
            assert!(outs[0]["is_error"].is_null() || outs[0]["is_error"] == false);

            let reqs = gw.upstream.requests();
            assert_eq!(reqs.len(), 2, "{tag}");
            assert_eq!(
                upstream_tool_names(&reqs[0]),
                ["tool_a", "tool_b", "tool_c"],
                "{tag}: every tool is shown to the model"
            );
            assert_eq!(reqs[0]["tool_choice"], "auto", "{tag}");
            assert_eq!(tool_messages(&reqs[1]), [("call_a".into(), "A ran".into())]);
        }
    }
}

/// US4 scenario 2 / FR-009 / SC-005: a call outside the list is not run; an
/// error saying it is not allowed is fed back; the loop goes on.
#[tokio::test]
async fn disallowed_call_is_not_executed_and_error_fed_back() {
    for (variant, extra) in only_a_variants() {
        for mode in MODES {
            let mock = abc_mock();
            let gw = gateway(&mock).await;
            gw.upstream
                .push(Reply::tool_call("tool_b", r#"{"x":2}"#).with_call_id("call_b"));
            gw.upstream.push(Reply::text("B is not allowed, sorry"));
            let run = create(&gw, mode, &body(&extra, "use B")).await;
            let tag = format!("{variant}/{mode:?}");
            assert_eq!(run.status(), "completed", "{tag}: {}", run.resp);
            assert!(called(&mock).is_empty(), "{tag}: B was executed");
            assert_eq!(
                output_types(&run.resp),
                ["function_call", "function_call_output", "message"],
                "{tag}"
            );
            let out = &outputs_of(&run.resp, "function_call_output")[0];
            assert_eq!(out["call_id"], "call_b");
            assert_eq!(out["is_error"], true, "{tag}: {out}");
            let text = out["output"].as_str().unwrap();
            assert!(text.contains("tool_b"), "{tag}: {text}");
            assert!(text.contains("not allowed"), "{tag}: {text}");

            let reqs = gw.upstream.requests();
            assert_eq!(reqs.len(), 2, "{tag}: loop must go on");
            assert_eq!(tool_messages(&reqs[1]), [("call_b".into(), text.into())]);
            if let Some(cap) = &run.sse {
                assert_eq!(terminal(cap), "response.completed");
            }
        }
    }
}

/// FR-009 in a turn with both: the allowed call runs, the other is refused;
/// outputs stay in the model's order.
#[tokio::test]
async fn allowed_and_disallowed_in_one_turn() {
    for (variant, extra) in only_a_variants() {
        for mode in MODES {
            let mock = abc_mock();
            let gw = gateway(&mock).await;
            gw.upstream.push(Reply::tool_calls(vec![
                ToolCallSpec::new("tool_c", "{}").id("call_c"),
                ToolCallSpec::new("tool_a", "{}").id("call_a"),
            ]));
            gw.upstream.push(Reply::text("partly done"));
            let run = create(&gw, mode, &body(&extra, "use C and A")).await;
            let tag = format!("{variant}/{mode:?}");
            assert_eq!(run.status(), "completed", "{tag}: {}", run.resp);
            assert_eq!(called(&mock), ["tool_a"], "{tag}");
            let outs = outputs_of(&run.resp, "function_call_output");
            assert_eq!(outs[0]["call_id"], "call_c");
            assert_eq!(outs[0]["is_error"], true);
            assert_eq!(outs[1]["call_id"], "call_a");
            assert_eq!(outs[1]["output"], "A ran");
            let fed = tool_messages(&gw.upstream.requests()[1]);
            assert_eq!(fed[0].0, "call_c");
            assert!(fed[0].1.contains("not allowed"), "{}", fed[0].1);
            assert_eq!(fed[1], ("call_a".into(), "A ran".into()));
        }
    }
}

/// US4 scenario 3 / FR-010: an empty or absent list allows every tool.
#[tokio::test]
async fn empty_or_absent_list_allows_all() {
    for extra in [json!({"allowed_tools": []}), json!({})] {
        for mode in MODES {
            let mock = abc_mock();
            let gw = gateway(&mock).await;
            gw.upstream.push(Reply::tool_calls(vec![
                ToolCallSpec::new("tool_b", "{}").id("call_b"),
                ToolCallSpec::new("tool_c", "{}").id("call_c"),
            ]));
            gw.upstream.push(Reply::text("both ran"));
            let run = create(&gw, mode, &body(&extra, "use B and C")).await;
            let tag = format!("{extra}/{mode:?}");
            assert_eq!(run.status(), "completed", "{tag}: {}", run.resp);
            let mut names = called(&mock);
            names.sort();
            assert_eq!(names, ["tool_b", "tool_c"], "{tag}");
            for o in outputs_of(&run.resp, "function_call_output") {
                assert!(
                    o["is_error"].is_null() || o["is_error"] == false,
                    "{tag}: {o}"
                );
            }
            assert_eq!(
                tool_messages(&gw.upstream.requests()[1]),
                [
                    ("call_b".into(), "B ran".into()),
                    ("call_c".into(), "C ran".into())
                ]
            );
        }
    }
}

/// A disallowed client function tool is refused by the server (error output,
/// loop goes on), not handed to the client with `requires_action`.
#[tokio::test]
async fn disallowed_client_function_is_refused_not_returned() {
    for mode in MODES {
        let mock = MockExecutor::new().tool("tool_a", MockBehavior::Ok("A ran".into()));
        let gw = gateway(&mock).await;
        gw.upstream
            .push(Reply::tool_call("tool_b", "{}").with_call_id("call_b"));
        gw.upstream.push(Reply::text("ok"));
        let run = create(
            &gw,
            mode,
            &body(&json!({"allowed_tools": ["tool_a"]}), "use B"),
        )
        .await;
        assert_eq!(run.status(), "completed", "{mode:?}: {}", run.resp);
        let out = &outputs_of(&run.resp, "function_call_output")[0];
        assert_eq!(out["is_error"], true);
        assert!(out["output"].as_str().unwrap().contains("not allowed"));
        assert_eq!(gw.upstream.request_count(), 2);
    }
}

/// Edge case: a call to a tool that is not in the request at all -> an
/// error output is fed back; nothing is executed; the loop goes on.
#[tokio::test]
async fn call_to_tool_not_in_request_gets_error_output() {
    for mode in MODES {
        // The executor could run "tool_d", but the request did not offer it.
        let mock = abc_mock().tool("tool_d", MockBehavior::Ok("D ran".into()));
        let gw = gateway(&mock).await;
        gw.upstream
            .push(Reply::tool_call("tool_d", "{}").with_call_id("call_d"));
        gw.upstream.push(Reply::text("tool_d does not exist"));
        let run = create(&gw, mode, &body(&json!({}), "use D")).await;
        assert_eq!(run.status(), "completed", "{mode:?}: {}", run.resp);
        assert!(called(&mock).is_empty(), "{mode:?}: unknown tool executed");
        let out = &outputs_of(&run.resp, "function_call_output")[0];
        assert_eq!(out["call_id"], "call_d");
        assert_eq!(out["is_error"], true);
        let text = out["output"].as_str().unwrap();
        assert!(text.contains("tool_d"), "{text}");
        let reqs = gw.upstream.requests();
        assert_eq!(reqs.len(), 2);
        assert_eq!(tool_messages(&reqs[1]), [("call_d".into(), text.into())]);
    }
}

/// Same edge case on a gateway whose only executor is the client one: the
/// unknown call is answered with an error by the server, not returned to
/// the client.
#[tokio::test]
async fn unknown_tool_with_only_client_functions() {
    for mode in MODES {
        let gw = Gateway::start().await;
        gw.upstream
            .push(Reply::tool_call("not_a_tool", "{}").with_call_id("call_x"));
        gw.upstream.push(Reply::text("sorry"));
        let run = create(&gw, mode, &body(&json!({}), "go")).await;
        assert_eq!(run.status(), "completed", "{mode:?}: {}", run.resp);
        let out = &outputs_of(&run.resp, "function_call_output")[0];
        assert_eq!(out["is_error"], true);
        assert_eq!(
            tool_messages(&gw.upstream.requests()[1])[0].0,
            "call_x".to_owned()
        );
    }
}

/// An allowed list naming a tool the request does not define is a 400, and
/// the model is not called.
#[tokio::test]
async fn allowed_list_naming_unknown_tool_is_400() {
    let gw = gateway(&abc_mock()).await;
    for extra in [
        json!({"allowed_tools": ["tool_z"]}),
        json!({"tool_choice": {"type": "allowed_tools", "mode": "auto",
            "tools": [{"type": "function", "name": "tool_z"}]}}),
    ] {
        let (s, b) = gw.post_json("/v1/responses", &body(&extra, "x")).await;
        assert_eq!(s, 400, "{extra}: {b}");
        assert_eq!(b["error"]["type"], "invalid_request_error");
    }
    assert_eq!(gw.upstream.request_count(), 0);
}
