//! Seed 000, user story 3: client-executed function tools, `requires_action`
//! and continuations (FR-018..021, FR-026), mixed turns (clarification), over
//! HTTP as JSON and as SSE.

use serde_json::{json, Value};
use windlass_engine::{ClientToolsStatus, EngineConfig};
use windlass_testkit::scenario::*;
use windlass_testkit::{Gateway, GatewayOptions, MockBehavior, MockExecutor, Reply, ToolCallSpec};

fn fco(call_id: &str, output: &str) -> Value {
    json!({"type": "function_call_output", "call_id": call_id, "output": output})
}

/// US3 scenarios 1 and 3 / FR-019/020/026: a client function call ends the
/// response `requires_action` (terminal event `response.requires_action`)
/// with the call in the output.
#[tokio::test]
async fn client_function_call_requires_action() {
    for mode in MODES {
        let gw = Gateway::start_with(GatewayOptions::requires_action()).await;
        gw.upstream
            .push(Reply::tool_call("get_weather", r#"{"city":"Paris"}"#).with_call_id("call_c"));
        let run = create(
            &gw,
            mode,
            &json!({"model": "m", "input": "Weather in Paris?", "tools": funcs(&["get_weather"])}),
        )
        .await;
        assert_eq!(run.status(), "requires_action", "{mode:?}: {}", run.resp);
        assert!(run.resp["incomplete_details"].is_null());
        assert_eq!(output_types(&run.resp), ["function_call"]);
        let call = &output(&run.resp)[0];
        assert_eq!(call["call_id"], "call_c");
        assert_eq!(call["name"], "get_weather");
        assert_eq!(call["arguments"], r#"{"city":"Paris"}"#);
        assert_eq!(gw.upstream.request_count(), 1, "{mode:?}: no second turn");
        if let Some(cap) = &run.sse {
            assert_eq!(terminal(cap), "response.requires_action");
            assert_eq!(
                item_events(cap),
                ["added:function_call", "done:function_call"]
            );
        }
    }
}

/// US3 scenario 2 / FR-021 / SC-004: the continuation sends the model the
/// full chain: user, the assistant message with the stored call, the tool
/// message with the client's output; the answer ends `completed`.
#[tokio::test]
async fn continuation_with_outputs_sends_full_chain() {
    for first in MODES {
        for second in MODES {
            let gw = Gateway::start_with(GatewayOptions::requires_action()).await;
            let tools = funcs(&["get_weather"]);
            gw.upstream.push(
                Reply::tool_call("get_weather", r#"{"city":"Paris"}"#).with_call_id("call_c"),
            );
            let parent = create(
                &gw,
                first,
                &json!({"model": "m", "input": "Weather in Paris?", "tools": tools}),
            )
            .await;
            assert_eq!(parent.status(), "requires_action");

            gw.upstream.push(Reply::text("It is 18C in Paris."));
            let run = create(
                &gw,
                second,
                &json!({
                    "model": "m",
                    "previous_response_id": parent.id(),
                    "input": [fco("call_c", "18C, sunny")],
                    "tools": tools,
                }),
            )
            .await;
            let tag = format!("{first:?}->{second:?}");
            assert_eq!(run.status(), "completed", "{tag}: {}", run.resp);
            assert_eq!(run.resp["previous_response_id"], parent.id().as_str());
            assert_eq!(output_types(&run.resp), ["message"], "{tag}");
            assert_eq!(final_text(&run.resp), "It is 18C in Paris.");

            let reqs = gw.upstream.requests();
            assert_eq!(reqs.len(), 2, "{tag}");
            assert_eq!(roles(&reqs[1]), ["user", "assistant", "tool"], "{tag}");
            assert_eq!(messages(&reqs[1])[0]["content"], "Weather in Paris?");
            assert_eq!(
                assistant_calls(&reqs[1]),
                [(
                    "call_c".into(),
                    "get_weather".into(),
                    r#"{"city":"Paris"}"#.into()
                )],
                "{tag}"
            );
            assert_eq!(
                tool_messages(&reqs[1]),
                [("call_c".into(), "18C, sunny".into())],
                "{tag}"
            );
            if let Some(cap) = &run.sse {
                assert_eq!(terminal(cap), "response.completed");
            }
        }
    }
}

/// DESIGN: `client_tools_status = completed` gives the OpenAI form: status
/// `completed`, terminal event `response.completed`, calls in the output.
#[tokio::test]
async fn client_tools_status_completed_gives_openai_form() {
    for mode in MODES {
        let gw = Gateway::start_with(GatewayOptions {
            engine: EngineConfig {
                client_tools_status: ClientToolsStatus::Completed,
                ..Default::default()
            },
            ..GatewayOptions::requires_action()
        })
        .await;
        gw.upstream
            .push(Reply::tool_call("get_weather", r#"{"city":"Paris"}"#).with_call_id("call_c"));
        let run = create(
            &gw,
            mode,
            &json!({"model": "m", "input": "Weather?", "tools": funcs(&["get_weather"])}),
        )
        .await;
        assert_eq!(run.status(), "completed", "{mode:?}: {}", run.resp);
        assert!(run.resp["incomplete_details"].is_null());
        assert_eq!(output_types(&run.resp), ["function_call"]);
        assert_eq!(gw.upstream.request_count(), 1);
        if let Some(cap) = &run.sse {
            assert_eq!(terminal(cap), "response.completed");
        }

        // The OpenAI-form response can be continued the same way.
        gw.upstream.push(Reply::text("18C"));
        let next = create(
            &gw,
            mode,
            &json!({
                "model": "m",
                "previous_response_id": run.id(),
                "input": [fco("call_c", "18C")],
                "tools": funcs(&["get_weather"]),
            }),
        )
        .await;
        assert_eq!(next.status(), "completed");
        assert_eq!(
            tool_messages(&gw.upstream.requests()[1]),
            [("call_c".into(), "18C".into())]
        );
    }
}

/// Clarification + DESIGN: a turn with a server call and a client call
/// pauses WHOLE (the server executor is not called). On continuation the
/// pending server call runs first, then the model sees both outputs.
#[tokio::test]
async fn mixed_turn_pauses_whole_and_resumes_server_call_first() {
    for mode in MODES {
        let mock = MockExecutor::new().tool("lookup", MockBehavior::Ok("found it".into()));
        let gw = Gateway::start_with(GatewayOptions {
            executors: vec![mock.arc()],
            ..GatewayOptions::requires_action()
        })
        .await;
        let tools = funcs(&["lookup", "ask_user"]);
        gw.upstream.push(Reply::tool_calls(vec![
            ToolCallSpec::new("lookup", r#"{"q":"x"}"#).id("call_s"),
            ToolCallSpec::new("ask_user", r#"{"question":"ok?"}"#).id("call_c"),
        ]));
        let parent = create(
            &gw,
            mode,
            &json!({"model": "m", "input": "look up x and ask me", "tools": tools}),
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
            ["function_call", "function_call"],
            "{mode:?}: no partial server result"
        );
        assert!(
            mock.calls().is_empty(),
            "{mode:?}: server call ran in a paused turn"
        );
        assert_eq!(gw.upstream.request_count(), 1);
        if let Some(cap) = &parent.sse {
            assert_eq!(terminal(cap), "response.requires_action");
        }

        gw.upstream.push(Reply::text("x found and you said yes"));
        let run = create(
            &gw,
            mode,
            &json!({
                "model": "m",
                "previous_response_id": parent.id(),
                "input": [fco("call_c", "yes")],
                "tools": tools,
            }),
        )
        .await;
        assert_eq!(run.status(), "completed", "{mode:?}: {}", run.resp);
        let calls = mock.calls();
        assert_eq!(calls.len(), 1, "{mode:?}: pending server call not run");
        assert_eq!(calls[0].call_id, "call_s");
        assert_eq!(calls[0].arguments, r#"{"q":"x"}"#);
        assert_eq!(
            output_types(&run.resp),
            ["function_call_output", "message"],
            "{mode:?}"
        );
        let out = output(&run.resp);
        assert_eq!(out[0]["call_id"], "call_s");
        assert_eq!(out[0]["output"], "found it");

        let reqs = gw.upstream.requests();
        assert_eq!(reqs.len(), 2, "{mode:?}");
        // The executor ran before this request: its output is in it.
        let mut fed = tool_messages(&reqs[1]);
        fed.sort();
        assert_eq!(
            fed,
            [
                ("call_c".into(), "yes".into()),
                ("call_s".into(), "found it".into())
            ],
            "{mode:?}"
        );
        let ids: Vec<_> = assistant_calls(&reqs[1]).into_iter().map(|c| c.0).collect();
        assert_eq!(ids, ["call_s", "call_c"]);
        assert_eq!(
            roles(&reqs[1]),
            ["user", "assistant", "tool", "tool"],
            "{mode:?}"
        );
        if let Some(cap) = &run.sse {
            assert_eq!(terminal(cap), "response.completed");
            assert_eq!(
                item_events(cap),
                [
                    "added:function_call_output",
                    "done:function_call_output",
                    "added:message",
                    "done:message"
                ]
            );
        }
    }
}

/// DESIGN: a `function_call_output` whose call_id matches no open call ->
/// 400 with a clear message; nothing is stored, the model is not called.
#[tokio::test]
async fn unknown_call_id_is_rejected_and_nothing_stored() {
    let gw = Gateway::start_with(GatewayOptions::requires_action()).await;
    let tools = funcs(&["get_weather"]);
    gw.upstream
        .push(Reply::tool_call("get_weather", "{}").with_call_id("call_c"));
    let parent = create(
        &gw,
        Mode::Json,
        &json!({"model": "m", "input": "Weather?", "tools": tools}),
    )
    .await;
    assert_eq!(parent.status(), "requires_action");
    let before = gw.upstream.request_count();

    let bad = json!({
        "model": "m",
        "previous_response_id": parent.id(),
        "input": [fco("call_nope", "18C")],
        "tools": tools,
    });
    let (status, body) = gw.post_json("/v1/responses", &bad).await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["error"]["type"], "invalid_request_error");
    assert_eq!(body["error"]["code"], "unknown_call_id");
    let msg = body["error"]["message"].as_str().unwrap();
    assert!(msg.contains("call_nope"), "{msg}");

    // The streaming form is refused the same way, before any stream starts.
    let cap = gw.stream(&bad).await;
    assert_eq!(cap.status, 400, "{}", cap.raw);
    assert!(cap.events.is_empty(), "events sent for a refused request");
    let err: Value = serde_json::from_str(&cap.raw).expect("JSON error body");
    assert_eq!(err["error"]["code"], "unknown_call_id");

    // Without a parent at all, too.
    let (status, body) = gw
        .post_json(
            "/v1/responses",
            &json!({"model": "m", "input": [fco("call_orphan", "x")], "tools": tools}),
        )
        .await;
    assert_eq!(status, 400, "{body}");

    assert_eq!(
        gw.upstream.request_count(),
        before,
        "the model was called for a refused request"
    );
    // The parent is untouched and still continuable.
    assert_stored_equals(&gw, &parent.resp).await;
    gw.upstream.push(Reply::text("18C"));
    let ok = create(
        &gw,
        Mode::Json,
        &json!({
            "model": "m",
            "previous_response_id": parent.id(),
            "input": [fco("call_c", "18C")],
            "tools": tools,
        }),
    )
    .await;
    assert_eq!(ok.status(), "completed");
    assert_eq!(
        roles(&gw.upstream.last_request().unwrap()),
        ["user", "assistant", "tool"],
        "a refused request must leave no trace in the chain"
    );
}

/// An output for a call that was already answered (earlier in the chain, or
/// twice in one input) is refused like an unknown call_id.
#[tokio::test]
async fn output_for_an_already_answered_call_is_400() {
    let gw = Gateway::start_with(GatewayOptions::requires_action()).await;
    let tools = funcs(&["get_weather"]);
    gw.upstream
        .push(Reply::tool_call("get_weather", "{}").with_call_id("call_c"));
    let parent = create(
        &gw,
        Mode::Json,
        &json!({"model": "m", "input": "Weather?", "tools": tools}),
    )
    .await;
    let twice = json!({
        "model": "m",
        "previous_response_id": parent.id(),
        "input": [fco("call_c", "18C"), fco("call_c", "19C")],
        "tools": tools,
    });
    let (s, b) = gw.post_json("/v1/responses", &twice).await;
    assert_eq!(s, 400, "{b}");
    assert_eq!(b["error"]["param"], "input[1].call_id");

    gw.upstream.push(Reply::text("18C"));
    let answered = create(
        &gw,
        Mode::Json,
        &json!({
            "model": "m",
            "previous_response_id": parent.id(),
            "input": [fco("call_c", "18C")],
            "tools": tools,
        }),
    )
    .await;
    assert_eq!(answered.status(), "completed");
    let again = json!({
        "model": "m",
        "previous_response_id": answered.id(),
        "input": [fco("call_c", "18C")],
        "tools": tools,
    });
    let (s, b) = gw.post_json("/v1/responses", &again).await;
    assert_eq!(s, 400, "{b}");
    assert_eq!(b["error"]["code"], "unknown_call_id");
    assert_eq!(gw.upstream.request_count(), 2);
}

/// Edge case: continuing a `requires_action` response without outputs ->
/// the conversation is sent to the model anyway (it may call again).
#[tokio::test]
async fn continuation_without_outputs_goes_to_the_model() {
    for mode in MODES {
        let gw = Gateway::start_with(GatewayOptions::requires_action()).await;
        let tools = funcs(&["get_weather"]);
        gw.upstream
            .push(Reply::tool_call("get_weather", r#"{"city":"Paris"}"#).with_call_id("call_c"));
        let parent = create(
            &gw,
            mode,
            &json!({"model": "m", "input": "Weather in Paris?", "tools": tools}),
        )
        .await;
        assert_eq!(parent.status(), "requires_action");

        gw.upstream.push(Reply::text("Okay, never mind."));
        let run = create(
            &gw,
            mode,
            &json!({
                "model": "m",
                "previous_response_id": parent.id(),
                "input": "Forget it.",
                "tools": tools,
            }),
        )
        .await;
        assert_eq!(run.status(), "completed", "{mode:?}: {}", run.resp);
        assert_eq!(final_text(&run.resp), "Okay, never mind.");
        let reqs = gw.upstream.requests();
        assert_eq!(reqs.len(), 2, "{mode:?}");
        assert_eq!(roles(&reqs[1]), ["user", "assistant", "user"], "{mode:?}");
        assert_eq!(assistant_calls(&reqs[1])[0].0, "call_c");
        assert_eq!(messages(&reqs[1])[2]["content"], "Forget it.");
    }
}

/// Edge case combined with a mixed turn: continuing a paused mixed turn
/// without the client's output. The pending server call may run first
/// (DESIGN), but the conversation must still reach the model.
#[tokio::test]
async fn mixed_turn_continuation_without_outputs_goes_to_the_model() {
    for mode in MODES {
        let mock = MockExecutor::new().tool("lookup", MockBehavior::Ok("found it".into()));
        let gw = Gateway::start_with(GatewayOptions {
            executors: vec![mock.arc()],
            ..GatewayOptions::requires_action()
        })
        .await;
        let tools = funcs(&["lookup", "ask_user"]);
        gw.upstream.push(Reply::tool_calls(vec![
            ToolCallSpec::new("lookup", "{}").id("call_s"),
            ToolCallSpec::new("ask_user", "{}").id("call_c"),
        ]));
        let parent = create(
            &gw,
            mode,
            &json!({"model": "m", "input": "look up and ask", "tools": tools}),
        )
        .await;
        assert_eq!(parent.status(), "requires_action");

        gw.upstream
            .push(Reply::text("Fine, skipping the question."));
        let run = create(
            &gw,
            mode,
            &json!({
                "model": "m",
                "previous_response_id": parent.id(),
                "input": "Don't ask me anything, just go on.",
                "tools": tools,
            }),
        )
        .await;
        assert_eq!(
            gw.upstream.request_count(),
            2,
            "{mode:?}: the model was never called; got {}",
            run.resp
        );
        assert_eq!(run.status(), "completed", "{mode:?}: {}", run.resp);
        assert!(
            run.resp["incomplete_details"].is_null(),
            "{mode:?}: {}",
            run.resp
        );
        assert_eq!(final_text(&run.resp), "Fine, skipping the question.");
    }
}

/// Edge case / FR-018: an executor is registered but accepts none of the
/// request's tools -> the calls are the client's (`requires_action`), and
/// the executor is not called.
#[tokio::test]
async fn executor_accepting_no_tool_leaves_calls_to_the_client() {
    for mode in MODES {
        let mock = MockExecutor::new().tool("something_else", MockBehavior::Ok("no".into()));
        let gw = Gateway::start_with(GatewayOptions {
            executors: vec![mock.arc()],
            client_functions: false,
            ..GatewayOptions::requires_action()
        })
        .await;
        gw.upstream
            .push(Reply::tool_call("get_weather", "{}").with_call_id("call_c"));
        let run = create(
            &gw,
            mode,
            &json!({"model": "m", "input": "Weather?", "tools": funcs(&["get_weather"])}),
        )
        .await;
        assert_eq!(run.status(), "requires_action", "{mode:?}: {}", run.resp);
        assert_eq!(output_types(&run.resp), ["function_call"]);
        assert!(mock.calls().is_empty());
        assert_eq!(gw.upstream.request_count(), 1);
        if let Some(cap) = &run.sse {
            assert_eq!(terminal(cap), "response.requires_action");
        }
    }
}

/// A server call of the loop followed by a client call in a later turn:
/// the response keeps the server round and pauses on the client call; the
/// continuation carries the whole chain.
#[tokio::test]
async fn server_round_then_client_call_then_continuation() {
    for mode in MODES {
        let mock = MockExecutor::new().tool("lookup", MockBehavior::Ok("id=7".into()));
        let gw = Gateway::start_with(GatewayOptions {
            executors: vec![mock.arc()],
            ..GatewayOptions::requires_action()
        })
        .await;
        let tools = funcs(&["lookup", "confirm"]);
        gw.upstream
            .push(Reply::tool_call("lookup", "{}").with_call_id("call_s"));
        gw.upstream
            .push(Reply::tool_call("confirm", r#"{"id":7}"#).with_call_id("call_c"));
        let parent = create(
            &gw,
            mode,
            &json!({"model": "m", "input": "find and confirm", "tools": tools}),
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
            ["function_call", "function_call_output", "function_call"]
        );
        gw.upstream.push(Reply::text("confirmed 7"));
        let run = create(
            &gw,
            mode,
            &json!({
                "model": "m",
                "previous_response_id": parent.id(),
                "input": [fco("call_c", "confirmed")],
                "tools": tools,
            }),
        )
        .await;
        assert_eq!(run.status(), "completed");
        assert_eq!(mock.calls().len(), 1, "the server call must not run twice");
        let last = gw.upstream.last_request().unwrap();
        assert_eq!(
            roles(&last),
            ["user", "assistant", "tool", "assistant", "tool"]
        );
        assert_eq!(
            tool_messages(&last),
            [
                ("call_s".into(), "id=7".into()),
                ("call_c".into(), "confirmed".into())
            ]
        );
    }
}
