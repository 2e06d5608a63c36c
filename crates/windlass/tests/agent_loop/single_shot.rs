//! Seed 000, user story 1: single-turn function tool calls and `tool_choice`
//! (FR-004..FR-007), over HTTP as JSON and as SSE.

use serde_json::json;
use windlass_testkit::scenario::*;
use windlass_testkit::{Gateway, GatewayOptions, MockBehavior, MockExecutor, Reply, ToolCallSpec};

fn weather_tools() -> serde_json::Value {
    funcs(&["get_weather", "get_time"])
}

/// US1 scenario 1 / FR-004 / SC-008: no executors -> the calls come back as
/// function_call items, status `completed`, nothing else happens.
#[tokio::test]
async fn no_executors_returns_function_calls_completed() {
    for mode in MODES {
        let gw = Gateway::start_with(GatewayOptions {
            client_functions: false,
            ..Default::default()
        })
        .await;
        gw.upstream.push(Reply::tool_calls(vec![
            ToolCallSpec::new("get_weather", r#"{"city":"Paris"}"#).id("call_w"),
            ToolCallSpec::new("get_time", r#"{"tz":"CET"}"#).id("call_t"),
        ]));
        let run = create(
            &gw,
            mode,
            &json!({"model": "m", "input": "Weather and time in Paris?", "tools": weather_tools()}),
        )
        .await;
        assert_eq!(run.status(), "completed", "{mode:?}: {}", run.resp);
        assert!(run.resp["incomplete_details"].is_null(), "{mode:?}");
        assert_eq!(
            output_types(&run.resp),
            ["function_call", "function_call"],
            "{mode:?}"
        );
        let calls = output(&run.resp);
        assert_eq!(calls[0]["name"], "get_weather");
        assert_eq!(calls[0]["call_id"], "call_w");
        assert_eq!(calls[0]["arguments"], r#"{"city":"Paris"}"#);
        assert_eq!(calls[0]["status"], "completed");
        assert_eq!(calls[1]["name"], "get_time");
        assert_eq!(calls[1]["call_id"], "call_t");
        assert_eq!(calls[1]["arguments"], r#"{"tz":"CET"}"#);

        // One upstream call, with the tools and the default choice.
        let reqs = gw.upstream.requests();
        assert_eq!(reqs.len(), 1, "{mode:?}: single shot");
        assert_eq!(upstream_tool_names(&reqs[0]), ["get_weather", "get_time"]);
        assert_eq!(reqs[0]["tool_choice"], "auto");
        assert_eq!(roles(&reqs[0]), ["user"]);

        if let Some(cap) = &run.sse {
            assert_eq!(terminal(cap), "response.completed");
            // Parallel calls of one answer may stay open together; each is
            // opened and closed once (the grammar check verifies the windows).
            let mut ev = item_events(cap);
            ev.sort();
            assert_eq!(
                ev,
                [
                    "added:function_call",
                    "added:function_call",
                    "done:function_call",
                    "done:function_call"
                ]
            );
            assert_eq!(
                cap.of_type("response.function_call_arguments.done").len(),
                2
            );
        }
    }
}

/// US1 scenario 2 / FR-006: `tool_choice: "none"` -> tools still sent (with
/// `tool_choice: "none"`), calls returned as-is, nothing executed even though
/// an executor owns the tool, status `completed`.
#[tokio::test]
async fn tool_choice_none_sends_tools_but_never_executes() {
    for mode in MODES {
        let mock = MockExecutor::new()
            .tool("get_weather", MockBehavior::Ok("sunny".into()))
            .tool("get_time", MockBehavior::Ok("noon".into()));
        let gw = Gateway::start_with(GatewayOptions {
            executors: vec![mock.arc()],
            ..Default::default()
        })
        .await;
        // The model calls a tool anyway.
        gw.upstream
            .push(Reply::tool_call("get_weather", r#"{"city":"Oslo"}"#).with_call_id("call_n"));
        let run = create(
            &gw,
            mode,
            &json!({
                "model": "m",
                "input": "Weather in Oslo?",
                "tools": weather_tools(),
                "tool_choice": "none",
            }),
        )
        .await;
        assert_eq!(run.status(), "completed", "{mode:?}: {}", run.resp);
        assert!(run.resp["incomplete_details"].is_null());
        assert_eq!(output_types(&run.resp), ["function_call"], "{mode:?}");
        let call = &output(&run.resp)[0];
        assert_eq!(call["name"], "get_weather");
        assert_eq!(call["call_id"], "call_n");
        assert_eq!(call["arguments"], r#"{"city":"Oslo"}"#);
        assert!(mock.calls().is_empty(), "{mode:?}: executed under none");

        let reqs = gw.upstream.requests();
        assert_eq!(reqs.len(), 1, "{mode:?}: no loop under tool_choice none");
        assert_eq!(upstream_tool_names(&reqs[0]), ["get_weather", "get_time"]);
        assert_eq!(reqs[0]["tool_choice"], "none");
        assert_eq!(run.resp["tool_choice"], "none");
        if let Some(cap) = &run.sse {
            assert_eq!(terminal(cap), "response.completed");
        }
    }
}

/// FR-006 with only client function tools registered (the default gateway):
/// `none` still means `completed`, not `requires_action`.
#[tokio::test]
async fn tool_choice_none_with_client_functions_is_completed() {
    for mode in MODES {
        let gw = Gateway::start().await;
        gw.upstream
            .push(Reply::tool_call("get_time", "{}").with_call_id("call_c"));
        let run = create(
            &gw,
            mode,
            &json!({"model": "m", "input": "time?", "tools": weather_tools(), "tool_choice": "none"}),
        )
        .await;
        assert_eq!(run.status(), "completed", "{mode:?}: {}", run.resp);
        assert_eq!(output_types(&run.resp), ["function_call"]);
        assert_eq!(gw.upstream.request_count(), 1);
        if let Some(cap) = &run.sse {
            assert_eq!(terminal(cap), "response.completed");
        }
    }
}

/// US1 scenario 3 / edge case: `tool_choice: "required"` with a text-only
/// answer -> returned as-is, `completed`; the upstream was asked for `required`.
#[tokio::test]
async fn tool_choice_required_text_answer_returned_as_is() {
    for mode in MODES {
        let mock = MockExecutor::new().tool("get_weather", MockBehavior::Ok("sunny".into()));
        let gw = Gateway::start_with(GatewayOptions {
            executors: vec![mock.arc()],
            ..Default::default()
        })
        .await;
        gw.upstream
            .push(Reply::text("I don't need a tool for that."));
        let run = create(
            &gw,
            mode,
            &json!({
                "model": "m",
                "input": "Say hi",
                "tools": weather_tools(),
                "tool_choice": "required",
            }),
        )
        .await;
        assert_eq!(run.status(), "completed", "{mode:?}: {}", run.resp);
        assert!(run.resp["incomplete_details"].is_null());
        assert_eq!(output_types(&run.resp), ["message"]);
        assert_eq!(final_text(&run.resp), "I don't need a tool for that.");
        assert!(mock.calls().is_empty());
        let reqs = gw.upstream.requests();
        assert_eq!(reqs.len(), 1, "{mode:?}: no retry to force a tool");
        assert_eq!(reqs[0]["tool_choice"], "required");
        if let Some(cap) = &run.sse {
            assert_eq!(terminal(cap), "response.completed");
        }
    }
}

/// FR-005/FR-007 and DESIGN: a forced function choice applies to the first
/// turn only; the second upstream request has `tool_choice: "auto"`.
#[tokio::test]
async fn forced_function_choice_applies_to_first_turn_only() {
    for mode in MODES {
        let mock = MockExecutor::new().tool("get_weather", MockBehavior::Ok("sunny".into()));
        let gw = Gateway::start_with(GatewayOptions {
            executors: vec![mock.arc()],
            ..Default::default()
        })
        .await;
        gw.upstream
            .push(Reply::tool_call("get_weather", r#"{"city":"Rome"}"#).with_call_id("call_f"));
        gw.upstream.push(Reply::text("Sunny in Rome."));
        let run = create(
            &gw,
            mode,
            &json!({
                "model": "m",
                "input": "Weather in Rome?",
                "tools": weather_tools(),
                "tool_choice": {"type": "function", "name": "get_weather"},
            }),
        )
        .await;
        assert_eq!(run.status(), "completed", "{mode:?}: {}", run.resp);
        assert_eq!(
            output_types(&run.resp),
            ["function_call", "function_call_output", "message"]
        );
        assert_eq!(mock.calls().len(), 1);
        let reqs = gw.upstream.requests();
        assert_eq!(reqs.len(), 2, "{mode:?}");
        assert_eq!(
            reqs[0]["tool_choice"],
            json!({"type": "function", "function": {"name": "get_weather"}}),
            "{mode:?}: first turn forced"
        );
        assert_eq!(
            reqs[1]["tool_choice"], "auto",
            "{mode:?}: the forced choice must not repeat on the second turn"
        );
        // Tools stay visible on the second turn.
        assert_eq!(upstream_tool_names(&reqs[1]), ["get_weather", "get_time"]);
        assert_eq!(
            run.resp["tool_choice"],
            json!({"type": "function", "name": "get_weather"})
        );
    }
}

/// DESIGN: `required` is also a first-turn-only choice (else the loop could
/// never end with a text answer).
#[tokio::test]
async fn required_choice_applies_to_first_turn_only() {
    for mode in MODES {
        let mock = MockExecutor::new().tool("get_time", MockBehavior::Ok("noon".into()));
        let gw = Gateway::start_with(GatewayOptions {
            executors: vec![mock.arc()],
            ..Default::default()
        })
        .await;
        gw.upstream.push(Reply::tool_call("get_time", "{}"));
        gw.upstream.push(Reply::text("It is noon."));
        let run = create(
            &gw,
            mode,
            &json!({"model": "m", "input": "time?", "tools": weather_tools(), "tool_choice": "required"}),
        )
        .await;
        assert_eq!(run.status(), "completed", "{mode:?}: {}", run.resp);
        let reqs = gw.upstream.requests();
        assert_eq!(reqs.len(), 2);
        assert_eq!(reqs[0]["tool_choice"], "required");
        assert_eq!(reqs[1]["tool_choice"], "auto");
    }
}

/// Edge case (single shot): text and tool calls in the same answer are both
/// returned, in the model's order.
#[tokio::test]
async fn single_shot_keeps_text_and_calls_of_one_answer() {
    for mode in MODES {
        let gw = Gateway::start_with(GatewayOptions {
            client_functions: false,
            ..Default::default()
        })
        .await;
        gw.upstream.push(Reply::text_then_tools(
            "Let me check.",
            [ToolCallSpec::new("get_weather", r#"{"city":"Lima"}"#).id("call_l")],
        ));
        let run = create(
            &gw,
            mode,
            &json!({"model": "m", "input": "Weather in Lima?", "tools": weather_tools()}),
        )
        .await;
        assert_eq!(run.status(), "completed", "{mode:?}: {}", run.resp);
        assert_eq!(output_types(&run.resp), ["message", "function_call"]);
        assert_eq!(final_text(&run.resp), "Let me check.");
        assert_eq!(output(&run.resp)[1]["call_id"], "call_l");
        assert_eq!(gw.upstream.request_count(), 1);
    }
}
