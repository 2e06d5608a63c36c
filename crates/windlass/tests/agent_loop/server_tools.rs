//! Seed 000, user story 2: the multi-turn loop with server-side executors
//! (FR-011/012, FR-016/017, FR-022..031), over HTTP as JSON and as SSE.

use std::time::Duration;

use serde_json::json;
use windlass_engine::EngineConfig;
use windlass_testkit::scenario::*;
use windlass_testkit::{Gateway, GatewayOptions, MockBehavior, MockExecutor, Reply, ToolCallSpec};

async fn gateway(mock: &MockExecutor) -> Gateway {
    Gateway::start_with(GatewayOptions {
        executors: vec![mock.arc()],
        ..Default::default()
    })
    .await
}

/// US2 scenario 1 / SC-001: tool call, then text -> `completed`; the executor
/// got the model's arguments; the result went back as a `tool` message with
/// the call's id, after the assistant message holding the call.
#[tokio::test]
async fn tool_call_then_text_completes() {
    for mode in MODES {
        let mock = MockExecutor::new().tool("get_weather", MockBehavior::Echo);
        let gw = gateway(&mock).await;
        let args = r#"{"city":"Paris","unit":"C"}"#;
        gw.upstream
            .push(Reply::tool_call("get_weather", args).with_call_id("call_1"));
        gw.upstream.push(Reply::text("It is 18C in Paris."));
        let run = create(
            &gw,
            mode,
            &json!({"model": "m", "input": "Weather in Paris?", "tools": funcs(&["get_weather"])}),
        )
        .await;
        assert_eq!(run.status(), "completed", "{mode:?}: {}", run.resp);
        assert!(run.resp["incomplete_details"].is_null());
        assert_eq!(
            output_types(&run.resp),
            ["function_call", "function_call_output", "message"],
            "{mode:?}"
        );
        let out = output(&run.resp);
        assert_eq!(out[0]["call_id"], "call_1");
        assert_eq!(out[0]["name"], "get_weather");
        assert_eq!(out[0]["arguments"], args);
        assert_eq!(out[1]["call_id"], "call_1");
        assert_eq!(out[1]["output"], args);
        assert!(out[1]["is_error"].is_null() || out[1]["is_error"] == false);
        assert_eq!(final_text(&run.resp), "It is 18C in Paris.");

        let calls = mock.calls();
        assert_eq!(calls.len(), 1, "{mode:?}");
        assert_eq!(calls[0].name, "get_weather");
        assert_eq!(calls[0].arguments, args);
        assert_eq!(calls[0].call_id, "call_1");

        let reqs = gw.upstream.requests();
        assert_eq!(reqs.len(), 2, "{mode:?}");
        assert_eq!(roles(&reqs[0]), ["user"]);
        assert_eq!(roles(&reqs[1]), ["user", "assistant", "tool"]);
        assert_eq!(
            assistant_calls(&reqs[1]),
            [("call_1".into(), "get_weather".into(), args.into())]
        );
        assert_eq!(tool_messages(&reqs[1]), [("call_1".into(), args.into())]);

        if let Some(cap) = &run.sse {
            assert_eq!(terminal(cap), "response.completed");
            assert_eq!(
                item_events(cap),
                [
                    "added:function_call",
                    "done:function_call",
                    "added:function_call_output",
                    "done:function_call_output",
                    "added:message",
                    "done:message"
                ]
            );
        }
    }
}

/// US2 scenario 2 / FR-022..025 / SC-003: A, result A, B, result B, answer
/// in ONE stream (created / in_progress once, one terminal event, no
/// lifecycle events between turns); the JSON form has the same items.
#[tokio::test]
async fn three_turn_loop_is_one_response() {
    for mode in MODES {
        let mock = MockExecutor::new()
            .tool("tool_a", MockBehavior::Ok("result A".into()))
            .tool("tool_b", MockBehavior::Ok("result B".into()));
        let gw = gateway(&mock).await;
        gw.upstream
            .push(Reply::tool_call("tool_a", r#"{"step":1}"#).with_call_id("call_a"));
        gw.upstream
            .push(Reply::tool_call("tool_b", r#"{"step":2}"#).with_call_id("call_b"));
        gw.upstream.push(Reply::text("Done: A then B."));
        let run = create(
            &gw,
            mode,
            &json!({"model": "m", "input": "Do A then B", "tools": funcs(&["tool_a", "tool_b"])}),
        )
        .await;
        assert_eq!(run.status(), "completed", "{mode:?}: {}", run.resp);
        assert_eq!(output_types(&run.resp), TWO_CALLS_THEN_ANSWER, "{mode:?}");
        let out = output(&run.resp);
        assert_eq!(
            (&out[1]["call_id"], &out[1]["output"]),
            (&json!("call_a"), &json!("result A"))
        );
        assert_eq!(
            (&out[3]["call_id"], &out[3]["output"]),
            (&json!("call_b"), &json!("result B"))
        );
        let names: Vec<_> = mock.calls().into_iter().map(|c| c.name).collect();
        assert_eq!(names, ["tool_a", "tool_b"]);

        let reqs = gw.upstream.requests();
        assert_eq!(reqs.len(), 3, "{mode:?}");
        assert_eq!(
            tool_messages(&reqs[1]),
            [("call_a".into(), "result A".into())]
        );
        assert_eq!(
            roles(&reqs[2]),
            ["user", "assistant", "tool", "assistant", "tool"]
        );
        assert_eq!(
            tool_messages(&reqs[2]),
            [
                ("call_a".into(), "result A".into()),
                ("call_b".into(), "result B".into())
            ]
        );
        let ids: Vec<_> = assistant_calls(&reqs[2]).into_iter().map(|c| c.0).collect();
        assert_eq!(ids, ["call_a", "call_b"]);

        if let Some(cap) = &run.sse {
            assert_eq!(terminal(cap), "response.completed");
            assert_eq!(
                item_events(cap),
                [
                    "added:function_call",
                    "done:function_call",
                    "added:function_call_output",
                    "done:function_call_output",
                    "added:function_call",
                    "done:function_call",
                    "added:function_call_output",
                    "done:function_call_output",
                    "added:message",
                    "done:message"
                ]
            );
            // One response id throughout.
            let id = run.id();
            for (name, d) in &cap.events {
                if let Some(rid) = d["response"]["id"].as_str() {
                    assert_eq!(rid, id, "{name} carries another response id");
                }
            }
        }
    }
}

/// US2 scenario 3 / FR-016/017 / SC-002: the calls of one turn run
/// concurrently; outputs are appended (and fed back) in the model's order
/// with matching call ids, whatever order they finish in.
#[tokio::test]
async fn calls_of_one_turn_run_concurrently_results_in_model_order() {
    for mode in MODES {
        // The first call is the slowest: completion order is the reverse.
        let mock = MockExecutor::new()
            .tool(
                "slow_1",
                MockBehavior::Sleep(Duration::from_millis(300), "r1".into()),
            )
            .tool(
                "slow_2",
                MockBehavior::Sleep(Duration::from_millis(250), "r2".into()),
            )
            .tool(
                "slow_3",
                MockBehavior::Sleep(Duration::from_millis(200), "r3".into()),
            )
            .tool(
                "slow_4",
                MockBehavior::Sleep(Duration::from_millis(150), "r4".into()),
            );
        let gw = gateway(&mock).await;
        gw.upstream.push(Reply::tool_calls(vec![
            ToolCallSpec::new("slow_1", r#"{"n":1}"#).id("c1"),
            ToolCallSpec::new("slow_2", r#"{"n":2}"#).id("c2"),
            ToolCallSpec::new("slow_3", r#"{"n":3}"#).id("c3"),
            ToolCallSpec::new("slow_4", r#"{"n":4}"#).id("c4"),
        ]));
        gw.upstream.push(Reply::text("all four done"));
        let run = create(
            &gw,
            mode,
            &json!({
                "model": "m",
                "input": "run all four",
                "tools": funcs(&["slow_1", "slow_2", "slow_3", "slow_4"]),
            }),
        )
        .await;
        assert_eq!(run.status(), "completed", "{mode:?}: {}", run.resp);
        assert_eq!(mock.calls().len(), 4);
        assert_eq!(
            mock.max_concurrency(),
            4,
            "{mode:?}: calls were not concurrent"
        );
        let outs: Vec<_> = outputs_of(&run.resp, "function_call_output")
            .into_iter()
            .map(|o| {
                (
                    o["call_id"].as_str().unwrap().to_owned(),
                    o["output"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        let expected: Vec<(String, String)> = (1..=4)
            .map(|i| (format!("c{i}"), format!("r{i}")))
            .collect();
        assert_eq!(outs, expected, "{mode:?}: outputs not in the model's order");
        assert_eq!(
            output_types(&run.resp)[..4],
            ["function_call"; 4],
            "calls first"
        );

        let reqs = gw.upstream.requests();
        assert_eq!(reqs.len(), 2);
        assert_eq!(
            tool_messages(&reqs[1]),
            expected,
            "{mode:?}: fed back order"
        );
        assert_eq!(
            roles(&reqs[1]),
            ["user", "assistant", "tool", "tool", "tool", "tool"],
            "one assistant message holds all parallel calls"
        );
        if let Some(cap) = &run.sse {
            let announced: Vec<_> = cap
                .of_type("response.output_item.added")
                .into_iter()
                .filter(|d| d["item"]["type"] == "function_call_output")
                .map(|d| d["item"]["call_id"].as_str().unwrap().to_owned())
                .collect();
            assert_eq!(announced, ["c1", "c2", "c3", "c4"]);
        }
    }
}

/// `parallel_tool_calls: false` -> the calls of a turn run one at a time
/// (and the upstream is told so).
#[tokio::test]
async fn parallel_tool_calls_false_runs_one_at_a_time() {
    for mode in MODES {
        let mock = MockExecutor::new()
            .tool(
                "slow_1",
                MockBehavior::Sleep(Duration::from_millis(60), "r1".into()),
            )
            .tool(
                "slow_2",
                MockBehavior::Sleep(Duration::from_millis(60), "r2".into()),
            )
            .tool(
                "slow_3",
                MockBehavior::Sleep(Duration::from_millis(60), "r3".into()),
            );
        let gw = gateway(&mock).await;
        gw.upstream.push(Reply::tool_calls(vec![
            ToolCallSpec::new("slow_1", "{}").id("c1"),
            ToolCallSpec::new("slow_2", "{}").id("c2"),
            ToolCallSpec::new("slow_3", "{}").id("c3"),
        ]));
        gw.upstream.push(Reply::text("done"));
        let run = create(
            &gw,
            mode,
            &json!({
                "model": "m",
                "input": "go",
                "tools": funcs(&["slow_1", "slow_2", "slow_3"]),
                "parallel_tool_calls": false,
            }),
        )
        .await;
        assert_eq!(run.status(), "completed", "{mode:?}: {}", run.resp);
        assert_eq!(mock.calls().len(), 3);
        assert_eq!(mock.max_concurrency(), 1, "{mode:?}: ran in parallel");
        let names: Vec<_> = mock.calls().into_iter().map(|c| c.name).collect();
        assert_eq!(names, ["slow_1", "slow_2", "slow_3"]);
        assert_eq!(run.resp["parallel_tool_calls"], false);
        let reqs = gw.upstream.requests();
        assert_eq!(reqs[0]["parallel_tool_calls"], false);
        assert_eq!(
            tool_messages(&reqs[1]),
            [
                ("c1".into(), "r1".into()),
                ("c2".into(), "r2".into()),
                ("c3".into(), "r3".into())
            ]
        );
    }
}

/// US2 scenario 4 / FR-029..031 / SC-007: a failing tool becomes a
/// `function_call_output` with `is_error: true` and the error text; the
/// model gets it and the loop goes on.
#[tokio::test]
async fn tool_error_is_fed_back_and_loop_continues() {
    for mode in MODES {
        let mock = MockExecutor::new()
            .tool("flaky", MockBehavior::Fail("disk on fire".into()))
            .tool("fine", MockBehavior::Ok("ok!".into()));
        let gw = gateway(&mock).await;
        gw.upstream.push(Reply::tool_calls(vec![
            ToolCallSpec::new("flaky", "{}").id("call_bad"),
            ToolCallSpec::new("fine", "{}").id("call_ok"),
        ]));
        gw.upstream.push(Reply::text("flaky failed, fine worked"));
        let run = create(
            &gw,
            mode,
            &json!({"model": "m", "input": "try both", "tools": funcs(&["flaky", "fine"])}),
        )
        .await;
        assert_eq!(run.status(), "completed", "{mode:?}: {}", run.resp);
        let outs = outputs_of(&run.resp, "function_call_output");
        assert_eq!(outs.len(), 2);
        assert_eq!(outs[0]["call_id"], "call_bad");
        assert_eq!(outs[0]["is_error"], true, "{mode:?}: {}", outs[0]);
        let err = outs[0]["output"].as_str().unwrap();
        assert!(err.contains("disk on fire"), "error text lost: {err}");
        assert_eq!(outs[1]["call_id"], "call_ok");
        assert_eq!(outs[1]["output"], "ok!");
        assert!(outs[1]["is_error"].is_null() || outs[1]["is_error"] == false);
        assert_eq!(final_text(&run.resp), "flaky failed, fine worked");

        let reqs = gw.upstream.requests();
        assert_eq!(reqs.len(), 2, "{mode:?}: loop did not continue");
        let fed = tool_messages(&reqs[1]);
        assert_eq!(fed.len(), 2);
        assert_eq!(fed[0].0, "call_bad");
        assert_eq!(fed[0].1, err, "the model must see the same error text");
        assert_eq!(fed[1], ("call_ok".into(), "ok!".into()));
    }
}

/// Edge case: every call of a turn fails -> all errors fed back, the loop
/// does not stop on tool errors alone.
#[tokio::test]
async fn all_calls_failing_does_not_stop_the_loop() {
    for mode in MODES {
        let mock = MockExecutor::new()
            .tool("bad_1", MockBehavior::Fail("boom one".into()))
            .tool("bad_2", MockBehavior::Fail("boom two".into()));
        let gw = gateway(&mock).await;
        gw.upstream.push(Reply::tool_calls(vec![
            ToolCallSpec::new("bad_1", "{}").id("c1"),
            ToolCallSpec::new("bad_2", "{}").id("c2"),
        ]));
        // The model retries once, fails again, then gives up with text.
        gw.upstream
            .push(Reply::tool_call("bad_1", r#"{"retry":true}"#).with_call_id("c3"));
        gw.upstream.push(Reply::text("Both tools are broken."));
        let run = create(
            &gw,
            mode,
            &json!({"model": "m", "input": "go", "tools": funcs(&["bad_1", "bad_2"])}),
        )
        .await;
        assert_eq!(run.status(), "completed", "{mode:?}: {}", run.resp);
        assert!(run.resp["error"].is_null());
        let outs = outputs_of(&run.resp, "function_call_output");
        assert_eq!(outs.len(), 3);
        for o in &outs {
            assert_eq!(o["is_error"], true, "{o}");
        }
        assert!(outs[0]["output"].as_str().unwrap().contains("boom one"));
        assert!(outs[1]["output"].as_str().unwrap().contains("boom two"));
        assert_eq!(final_text(&run.resp), "Both tools are broken.");
        let reqs = gw.upstream.requests();
        assert_eq!(reqs.len(), 3);
        let fed = tool_messages(&reqs[2]);
        assert_eq!(
            fed.iter().map(|f| f.0.as_str()).collect::<Vec<_>>(),
            ["c1", "c2", "c3"]
        );
        assert!(fed[1].1.contains("boom two"));
        if let Some(cap) = &run.sse {
            assert_eq!(terminal(cap), "response.completed");
        }
    }
}

/// FR-028: usage is summed over every turn, cached and reasoning details
/// included.
#[tokio::test]
async fn usage_is_summed_over_turns() {
    for mode in MODES {
        let mock = MockExecutor::new().tool("t", MockBehavior::Ok("x".into()));
        let gw = gateway(&mock).await;
        gw.upstream.push(
            Reply::tool_call("t", "{}")
                .usage(10, 3)
                .cached_tokens(4)
                .reasoning_tokens(1),
        );
        gw.upstream.push(Reply::tool_call("t", "{}").usage(7, 2));
        gw.upstream.push(
            Reply::text("done")
                .usage(20, 5)
                .cached_tokens(6)
                .reasoning_tokens(2),
        );
        let run = create(
            &gw,
            mode,
            &json!({"model": "m", "input": "go", "tools": funcs(&["t"])}),
        )
        .await;
        assert_eq!(run.status(), "completed", "{mode:?}: {}", run.resp);
        let u = &run.resp["usage"];
        assert_eq!(u["input_tokens"], 37, "{mode:?}: {u}");
        assert_eq!(u["output_tokens"], 10, "{mode:?}: {u}");
        assert_eq!(u["total_tokens"], 47, "{mode:?}: {u}");
        assert_eq!(u["input_tokens_details"]["cached_tokens"], 10, "{u}");
        assert_eq!(u["output_tokens_details"]["reasoning_tokens"], 3, "{u}");
    }
}

/// A call that outlives `tool_timeout` becomes an error output; the loop
/// goes on.
#[tokio::test]
async fn tool_timeout_becomes_error_output() {
    for mode in MODES {
        let mock = MockExecutor::new()
            .tool(
                "slow",
                MockBehavior::Sleep(Duration::from_secs(20), "too late".into()),
            )
            .tool("quick", MockBehavior::Ok("fast".into()));
        let gw = Gateway::start_with(GatewayOptions {
            executors: vec![mock.arc()],
            engine: EngineConfig {
                tool_timeout: Duration::from_millis(200),
                ..Default::default()
            },
            ..Default::default()
        })
        .await;
        gw.upstream.push(Reply::tool_calls(vec![
            ToolCallSpec::new("slow", "{}").id("c_slow"),
            ToolCallSpec::new("quick", "{}").id("c_quick"),
        ]));
        gw.upstream.push(Reply::text("slow timed out"));
        let started = std::time::Instant::now();
        let run = create(
            &gw,
            mode,
            &json!({"model": "m", "input": "go", "tools": funcs(&["slow", "quick"])}),
        )
        .await;
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "timeout not applied"
        );
        assert_eq!(run.status(), "completed", "{mode:?}: {}", run.resp);
        let outs = outputs_of(&run.resp, "function_call_output");
        assert_eq!(outs.len(), 2);
        assert_eq!(outs[0]["call_id"], "c_slow");
        assert_eq!(outs[0]["is_error"], true);
        let text = outs[0]["output"].as_str().unwrap();
        assert!(text.contains("timed out"), "{text}");
        assert_eq!(outs[1]["output"], "fast");
        let reqs = gw.upstream.requests();
        assert_eq!(reqs.len(), 2);
        assert_eq!(tool_messages(&reqs[1])[0], ("c_slow".into(), text.into()));
    }
}

/// Edge case: text and tool calls in the same answer -> both in the output;
/// the calls drive the loop; the upstream gets them back as one assistant
/// message with content and tool_calls.
#[tokio::test]
async fn text_and_calls_in_one_answer_are_both_kept() {
    for mode in MODES {
        let mock = MockExecutor::new().tool("lookup", MockBehavior::Ok("42".into()));
        let gw = gateway(&mock).await;
        gw.upstream.push(Reply::text_then_tools(
            "Let me look that up.",
            [ToolCallSpec::new("lookup", r#"{"q":"answer"}"#).id("c_l")],
        ));
        gw.upstream.push(Reply::text("The answer is 42."));
        let run = create(
            &gw,
            mode,
            &json!({"model": "m", "input": "answer?", "tools": funcs(&["lookup"])}),
        )
        .await;
        assert_eq!(run.status(), "completed", "{mode:?}: {}", run.resp);
        assert_eq!(
            output_types(&run.resp),
            [
                "message",
                "function_call",
                "function_call_output",
                "message"
            ]
        );
        assert_eq!(mock.calls().len(), 1);
        let reqs = gw.upstream.requests();
        assert_eq!(roles(&reqs[1]), ["user", "assistant", "tool"]);
        let assistant = &messages(&reqs[1])[1];
        assert_eq!(assistant["content"], "Let me look that up.");
        assert_eq!(assistant["tool_calls"][0]["id"], "c_l");
        assert_eq!(tool_messages(&reqs[1]), [("c_l".into(), "42".into())]);
    }
}

/// The server's fan-out bound (`tool_concurrency`) caps how many calls of a
/// turn run at once; all still run and come back in order.
#[tokio::test]
async fn tool_concurrency_bounds_the_fan_out() {
    let mock = MockExecutor::new()
        .tool(
            "s1",
            MockBehavior::Sleep(Duration::from_millis(80), "r1".into()),
        )
        .tool(
            "s2",
            MockBehavior::Sleep(Duration::from_millis(80), "r2".into()),
        )
        .tool(
            "s3",
            MockBehavior::Sleep(Duration::from_millis(80), "r3".into()),
        )
        .tool(
            "s4",
            MockBehavior::Sleep(Duration::from_millis(80), "r4".into()),
        );
    let gw = Gateway::start_with(GatewayOptions {
        executors: vec![mock.arc()],
        engine: EngineConfig {
            tool_concurrency: 2,
            ..Default::default()
        },
        ..Default::default()
    })
    .await;
    gw.upstream.push(Reply::tool_calls(
        (1..=4).map(|i| ToolCallSpec::new(format!("s{i}"), "{}").id(format!("c{i}"))),
    ));
    gw.upstream.push(Reply::text("done"));
    let run = create(
        &gw,
        Mode::Sse,
        &json!({"model": "m", "input": "go", "tools": funcs(&["s1", "s2", "s3", "s4"])}),
    )
    .await;
    assert_eq!(run.status(), "completed", "{}", run.resp);
    assert_eq!(mock.calls().len(), 4);
    assert_eq!(mock.max_concurrency(), 2);
    let expected: Vec<(String, String)> = (1..=4)
        .map(|i| (format!("c{i}"), format!("r{i}")))
        .collect();
    assert_eq!(tool_messages(&gw.upstream.requests()[1]), expected);
}
