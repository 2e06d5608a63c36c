//! Issue 26 through the gateway and the scripted upstream: one final answer
//! with the completion check on every upstream kind, a bad turn that does
//! not break the run (malformed arguments, a transcript outgrowing the
//! model's context), and the techniques switched per request.

use serde_json::{json, Value};
use windlass_engine::{EngineConfig, VERIFICATION_PROMPT};
use windlass_providers::UpstreamKind;
use windlass_testkit::scenario::*;
use windlass_testkit::{Gateway, GatewayOptions, MockBehavior, MockExecutor, Reply};

use crate::kinds_support::{blocks, sent_results, KINDS};

pub(crate) async fn gateway(
    kind: UpstreamKind,
    mock: &MockExecutor,
    engine: EngineConfig,
) -> Gateway {
    Gateway::start_with(GatewayOptions {
        kind,
        executors: vec![mock.arc()],
        engine,
        ..GatewayOptions::default()
    })
    .await
}

fn checking() -> EngineConfig {
    EngineConfig {
        completion_check: true,
        ..EngineConfig::default()
    }
}

/// A `lookup(q: string)` tool.
fn lookup() -> Value {
    json!([{"type": "function", "name": "lookup", "description": "look up q",
            "parameters": {"type": "object", "properties": {"q": {"type": "string"}},
                           "required": ["q"]}}])
}

pub(crate) async fn trace(gw: &Gateway, id: &str) -> Value {
    let (status, t) = gw.get_json(&format!("/v1/responses/{id}/trace")).await;
    assert_eq!(status, 200, "{t}");
    t
}

/// `field` of every entry of the trace's `list` (`checks`, `actions`).
pub(crate) fn trace_fields<'a>(t: &'a Value, list: &str, field: &str) -> Vec<&'a Value> {
    t[list]
        .as_array()
        .unwrap_or_else(|| panic!("no {list} in the trace: {t}"))
        .iter()
        .map(|e| &e[field])
        .collect()
}

/// The last message the upstream got: `(role, text)` in the kind's format.
pub(crate) fn last_message(kind: UpstreamKind, req: &Value) -> (String, String) {
    let list = match kind {
        UpstreamKind::Responses => &req["input"],
        _ => &req["messages"],
    };
    let last = list.as_array().and_then(|l| l.last()).expect("messages");
    let text = match &last["content"] {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
        _ => String::new(),
    };
    (last["role"].as_str().unwrap_or_default().to_owned(), text)
}

/// The arguments of every call the request replays, as the kind carries them.
fn replayed_arguments(kind: UpstreamKind, req: &Value) -> Vec<Value> {
    match kind {
        UpstreamKind::Chat => messages(req)
            .iter()
            .flat_map(|m| m["tool_calls"].as_array().cloned().unwrap_or_default())
            .map(|c| c["function"]["arguments"].clone())
            .collect(),
        UpstreamKind::Responses => req["input"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|i| i["type"] == "function_call")
            .map(|c| c["arguments"].clone())
            .collect(),
        UpstreamKind::Anthropic => blocks(req, "tool_use")
            .map(|b| b["input"].clone())
            .collect(),
    }
}

#[tokio::test]
async fn the_completion_check_leaves_one_final_answer_on_every_kind() {
    for kind in KINDS {
        for mode in MODES {
            let mock = MockExecutor::new().tool("lookup", MockBehavior::Ok("found".into()));
            let gw = gateway(kind, &mock, checking()).await;
            gw.upstream.push(Reply::tool_call("lookup", r#"{"q":"x"}"#));
            gw.upstream.push(Reply::text("It is found."));
            gw.upstream.push(Reply::text(
                "Yes, I have verified that the task is complete.",
            ));
            let body = json!({"model": "m", "input": "find x", "tools": lookup()});
            let run = create(&gw, mode, &body).await;
            let what = format!("{kind:?}/{mode:?}: {}", run.resp);
            assert_eq!(run.status(), "completed", "{what}");
            assert_eq!(
                output_types(&run.resp),
                ["function_call", "function_call_output", "message"],
                "{what}"
            );
            assert_eq!(final_text(&run.resp), "It is found.", "{what}");
            if let Some(cap) = &run.sse {
                let streamed: String = cap
                    .of_type("response.output_text.delta")
                    .iter()
                    .filter_map(|e| e["delta"].as_str())
                    .collect();
                assert_eq!(streamed, "It is found.", "{what}");
                assert_eq!(cap.of_type("response.output_item.added").len(), 3, "{what}");
            }
            // The check's turn: the draft, then the prompt as a user turn
            // (no assistant prefill on Anthropic, roles alternate).
            let reqs = gw.upstream.requests();
            assert_eq!(reqs.len(), 3, "{what}");
            let (role, text) = last_message(kind, &reqs[2]);
            assert_eq!(role, "user", "{what}: {}", reqs[2]);
            assert_eq!(text, VERIFICATION_PROMPT, "{what}");
            let t = trace(&gw, &run.id()).await;
            let checks = t["checks"].as_array().expect("checks in the trace");
            assert_eq!(checks.len(), 1, "{t}");
            assert_eq!(checks[0]["outcome"], "confirmed");
            assert_eq!(checks[0]["draft"], "It is found.");
            assert!(checks[0]["answer"].as_str().unwrap().contains("verified"));
            assert_eq!(t["steps"][2]["verification"], true, "{t}");
        }
    }
}

#[tokio::test]
async fn a_check_that_finds_more_to_do_withdraws_the_draft() {
    for mode in MODES {
        let mock = MockExecutor::new().tool("lookup", MockBehavior::Ok("found".into()));
        let gw = gateway(UpstreamKind::Chat, &mock, checking()).await;
        gw.upstream.push(Reply::tool_call("lookup", r#"{"q":"a"}"#));
        gw.upstream.push(Reply::text("Half an answer."));
        gw.upstream.push(Reply::tool_call("lookup", r#"{"q":"b"}"#));
        gw.upstream.push(Reply::text("The whole answer."));
        let body = json!({"model": "m", "input": "find a and b", "tools": lookup()});
        let run = create(&gw, mode, &body).await;
        assert_eq!(run.status(), "completed", "{mode:?}: {}", run.resp);
        assert_eq!(output_types(&run.resp), TWO_CALLS_THEN_ANSWER);
        assert_eq!(final_text(&run.resp), "The whole answer.");
        assert!(!run.resp.to_string().contains("Half an answer"));
        assert_eq!(mock.calls().len(), 2);
        // The last turn still sees the draft and the check it answered.
        let reqs = gw.upstream.requests();
        assert_eq!(reqs.len(), 4);
        let roles = roles(&reqs[3]);
        assert_eq!(
            roles,
            [
                "user",
                "assistant",
                "tool",
                "assistant",
                "user",
                "assistant",
                "tool"
            ],
            "{}",
            reqs[3]
        );
        let t = trace(&gw, &run.id()).await;
        assert_eq!(t["checks"][0]["outcome"], "continued", "{t}");
        assert_eq!(t["checks"][0]["draft"], "Half an answer.");
    }
}

#[tokio::test]
async fn malformed_arguments_are_refused_and_replayed_as_an_empty_object() {
    // Anthropic's wire carries a call's input as an object: it cannot bring
    // malformed arguments, and gets `{}` back like the others (below).
    for kind in [UpstreamKind::Chat, UpstreamKind::Responses] {
        let mock = MockExecutor::new().tool("lookup", MockBehavior::Ok("found".into()));
        let gw = gateway(kind, &mock, EngineConfig::default()).await;
        gw.upstream
            .push(Reply::tool_call("lookup", r#"{"q": "a", "n": }"#));
        gw.upstream.push(Reply::text("Sorry."));
        let body = json!({"model": "m", "input": "find a", "tools": lookup()});
        let run = create(&gw, Mode::Json, &body).await;
        let what = format!("{kind:?}: {}", run.resp);
        assert_eq!(run.status(), "completed", "{what}");
        assert!(mock.calls().is_empty(), "{what}");
        // The client sees what the model wrote and why it was refused.
        let out = output(&run.resp);
        assert_eq!(out[0]["arguments"], r#"{"q": "a", "n": }"#, "{what}");
        let said = out[1]["output"].as_str().unwrap_or_default();
        assert!(said.contains("not a valid JSON object"), "{what}");
        assert!(
            said.contains(r#"{"q": "a", "n": }"#) && said.contains("q (string)"),
            "{what}"
        );
        // Upstream, the call goes back as `{}` with that error as its result.
        let req = gw.upstream.last_request().unwrap();
        let args = replayed_arguments(kind, &req);
        assert_eq!(args, [json!("{}")], "{what}: {req}");
        let results = sent_results(kind, &req);
        assert!(results[0].1.contains("not a valid JSON object"), "{what}");
    }
}

#[tokio::test]
async fn the_repeat_guard_and_the_schema_check_are_switched_per_request() {
    let script = |gw: &Gateway| {
        gw.upstream.push(Reply::tool_call("lookup", r#"{"q":"x"}"#));
        gw.upstream
            .push(Reply::tool_call("lookup", r#"{ "q": "x" }"#));
        gw.upstream.push(Reply::tool_call("lookup", r#"{"q": 5}"#));
        gw.upstream.push(Reply::text("done"));
    };
    let mock = MockExecutor::new().tool("lookup", MockBehavior::Ok("found".into()));
    let gw = gateway(UpstreamKind::Chat, &mock, EngineConfig::default()).await;
    script(&gw);
    let body = json!({"model": "m", "input": "find x", "tools": lookup(),
                      "metadata": {"windlass_techniques": "none,repeat_guard,schema_check"}});
    let run = create(&gw, Mode::Json, &body).await;
    assert_eq!(run.status(), "completed", "{}", run.resp);
    assert_eq!(mock.calls().len(), 1, "only the first call ran");
    let outputs: Vec<String> = outputs_of(&run.resp, "function_call_output")
        .iter()
        .map(|o| o["output"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(outputs[0], "found");
    assert!(outputs[1].starts_with("You already called lookup") && outputs[1].contains("found"));
    assert!(outputs[2].contains("`q`"), "{}", outputs[2]);
    let t = trace(&gw, &run.id()).await;
    let why = trace_fields(&t, "actions", "denied_because");
    assert_eq!(
        why,
        [
            &Value::Null,
            &json!("repeated_call"),
            &json!("invalid_arguments")
        ]
    );

    // Off (the plain loop): every call runs.
    let mock = MockExecutor::new().tool("lookup", MockBehavior::Ok("found".into()));
    let gw = gateway(UpstreamKind::Chat, &mock, EngineConfig::default()).await;
    script(&gw);
    let body = json!({"model": "m", "input": "find x", "tools": lookup(),
                      "metadata": {"windlass_techniques": "none"}});
    assert_eq!(create(&gw, Mode::Json, &body).await.status(), "completed");
    assert_eq!(mock.calls().len(), 3);

    // An unknown technique is a 400 that calls nothing.
    let body = json!({"model": "m", "input": "x", "metadata": {"windlass_techniques": "plan"}});
    let (status, err) = gw.post_json("/v1/responses", &body).await;
    assert_eq!(status, 400, "{err}");
    assert_eq!(err["error"]["param"], "metadata.windlass_techniques");
    assert_eq!(gw.upstream.request_count(), 4);
}

/// The tool choice a turn's upstream request carries, in the kind's format.
pub(crate) fn tool_choice(kind: UpstreamKind, req: &Value) -> Value {
    match kind {
        UpstreamKind::Anthropic => req["tool_choice"]["type"].clone(),
        _ => req["tool_choice"].clone(),
    }
}

#[tokio::test]
async fn the_stall_stop_refuses_a_runaway_call_and_asks_for_the_answer_on_every_kind() {
    for kind in KINDS {
        let mock = MockExecutor::new().tool("lookup", MockBehavior::Ok("found".into()));
        let gw = gateway(kind, &mock, EngineConfig::default()).await;
        gw.upstream.push(Reply::tool_call("lookup", r#"{"q":"x"}"#));
        // The previous step applied again to its own result.
        gw.upstream
            .push(Reply::tool_call("lookup", r#"{"q":"found"}"#));
        gw.upstream.push(Reply::text("It is found."));
        // On by default.
        let body = json!({"model": "m", "input": "look up x", "tools": lookup()});
        let run = create(&gw, Mode::Sse, &body).await;
        let what = format!("{kind:?}: {}", run.resp);
        assert_eq!(run.status(), "completed", "{what}");
        assert_eq!(final_text(&run.resp), "It is found.", "{what}");
        assert_eq!(
            mock.calls().len(),
            1,
            "the runaway call did not run: {what}"
        );
        let outputs = outputs_of(&run.resp, "function_call_output");
        let refused = outputs[1]["output"].as_str().unwrap_or_default();
        assert!(
            refused.starts_with("Not run: this call applies your previous step again")
                && refused.contains(r#"lookup({"q":"x"}) returned: found"#),
            "{refused}"
        );
        let reqs = gw.upstream.requests();
        assert_eq!(reqs.len(), 3, "{what}");
        assert_ne!(tool_choice(kind, &reqs[1]), json!("none"), "{what}");
        assert_eq!(tool_choice(kind, &reqs[2]), json!("none"), "{what}");
        let t = trace(&gw, &run.id()).await;
        assert_eq!(t["actions"][1]["denied_because"], "stalled_call", "{t}");
    }

    // Off: the runaway call runs and the next turn is free.
    let mock = MockExecutor::new().tool("lookup", MockBehavior::Ok("found".into()));
    let gw = gateway(UpstreamKind::Chat, &mock, EngineConfig::default()).await;
    gw.upstream.push(Reply::tool_call("lookup", r#"{"q":"x"}"#));
    gw.upstream
        .push(Reply::tool_call("lookup", r#"{"q":"found"}"#));
    gw.upstream.push(Reply::text("It is found."));
    let body = json!({"model": "m", "input": "look up x", "tools": lookup(),
                      "metadata": {"windlass_techniques": "-stall_stop"}});
    assert_eq!(create(&gw, Mode::Json, &body).await.status(), "completed");
    assert_eq!(mock.calls().len(), 2);
    assert_ne!(gw.upstream.requests()[2]["tool_choice"], "none");
}

#[tokio::test]
async fn an_api_key_carries_its_own_techniques() {
    use windlass_testkit::tenants::{key, resolve, As};
    let mock = MockExecutor::new().tool("lookup", MockBehavior::Ok("found".into()));
    let mut opts = GatewayOptions {
        executors: vec![mock.arc()],
        ..GatewayOptions::default()
    };
    let mut plain = key("plain", "acme");
    plain.techniques = Some(vec!["none".into()]);
    opts.server.keys = resolve(&[key("lab", "acme"), plain]);
    let gw = Gateway::start_with(opts).await;
    let body = json!({"model": "m", "input": "look up x", "tools": lookup()});
    let runaway = |gw: &Gateway| {
        gw.upstream.push(Reply::tool_call("lookup", r#"{"q":"x"}"#));
        gw.upstream
            .push(Reply::tool_call("lookup", r#"{"q":"found"}"#));
        gw.upstream.push(Reply::text("It is found."));
    };
    runaway(&gw);
    let resp = As::new(&gw, "lab").create(&body).await;
    assert_eq!(resp["status"], "completed", "{resp}");
    assert_eq!(
        mock.calls().len(),
        1,
        "the server's stall stop refused the second call"
    );
    runaway(&gw);
    As::new(&gw, "plain").create(&body).await;
    assert_eq!(mock.calls().len(), 3, "the plain key's loop ran both");
    // The request still changes the key's set.
    runaway(&gw);
    let on = json!({"model": "m", "input": "look up x", "tools": lookup(),
                    "metadata": {"windlass_techniques": "stall_stop"}});
    As::new(&gw, "plain").create(&on).await;
    assert_eq!(mock.calls().len(), 4);
}

#[tokio::test]
async fn a_check_answer_naming_a_missing_step_gets_a_required_tool_turn() {
    let mock = MockExecutor::new().tool("lookup", MockBehavior::Ok("found".into()));
    let gw = gateway(UpstreamKind::Chat, &mock, EngineConfig::default()).await;
    gw.upstream.push(Reply::tool_call("lookup", r#"{"q":"a"}"#));
    gw.upstream.push(Reply::text("Draft."));
    gw.upstream
        .push(Reply::text("The next step is to look up b."));
    gw.upstream.push(Reply::tool_call("lookup", r#"{"q":"b"}"#));
    gw.upstream.push(Reply::text("Final."));
    let body = json!({"model": "m", "input": "look up a, then b", "tools": lookup(),
                      "metadata": {"windlass_techniques": "restate_check,require_after_check"}});
    let run = create(&gw, Mode::Sse, &body).await;
    assert_eq!(run.status(), "completed", "{}", run.resp);
    assert_eq!(final_text(&run.resp), "Final.");
    assert_eq!(mock.calls().len(), 2);
    let reqs = gw.upstream.requests();
    assert_eq!(reqs.len(), 5);
    // The restating check quotes the request and the result so far.
    let (role, check) = last_message(UpstreamKind::Chat, &reqs[2]);
    assert_eq!(role, "user");
    assert!(check.contains("The request: look up a, then b"), "{check}");
    assert!(
        check.contains(r#"lookup({"q":"a"}) returned: found"#),
        "{check}"
    );
    assert_eq!(reqs[3]["tool_choice"], "required", "{}", reqs[3]);
    assert_ne!(reqs[4]["tool_choice"], "required");
    let t = trace(&gw, &run.id()).await;
    let outcomes = trace_fields(&t, "checks", "outcome");
    assert_eq!(outcomes, [&json!("reprompted"), &json!("continued")], "{t}");
}

#[tokio::test]
async fn a_transcript_outgrowing_the_context_ends_in_an_error_naming_it() {
    let mock = MockExecutor::new().tool("lookup", MockBehavior::Ok("y".repeat(400)));
    let mut opts = GatewayOptions {
        executors: vec![mock.arc()],
        ..GatewayOptions::default()
    };
    opts.provider.context_length = Some(150);
    let gw = Gateway::start_with(opts).await;
    gw.upstream
        .push(Reply::tool_call("lookup", r#"{"q":"a"}"#).usage(90, 10));
    gw.upstream.push(Reply::text("never asked"));
    let body = json!({"model": "m", "input": "find a", "tools": lookup()});
    let (status, err) = gw.post_json("/v1/responses", &body).await;
    assert_eq!(status, 400, "{err}");
    assert_eq!(err["error"]["code"], "context_length_exceeded", "{err}");
    let message = err["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("context length of 150 tokens"),
        "{message}"
    );
    assert_eq!(gw.upstream.request_count(), 1);
}
