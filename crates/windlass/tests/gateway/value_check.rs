//! The value check (`value_check`, issue 26) through the gateway and the
//! scripted upstream: an answer that leaves a number of the request unused
//! is withdrawn, the model is nudged with a tool call required, and the
//! client sees one final answer; an answer that used every number stands.

use serde_json::{json, Value};
use windlass_engine::EngineConfig;
use windlass_providers::UpstreamKind;
use windlass_testkit::scenario::*;
use windlass_testkit::{Gateway, MockBehavior, MockExecutor, Reply};

use crate::kinds_support::KINDS;
use crate::task_success::{gateway, last_message, tool_choice, trace, trace_fields};

/// An `add(a: number, b: number)` tool.
fn add() -> Value {
    json!([{"type": "function", "name": "add", "description": "a + b",
            "parameters": {"type": "object",
                           "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                           "required": ["a", "b"]}}])
}

fn request(input: &str, tools: Value) -> Value {
    json!({"model": "m", "input": input, "tools": tools,
           "metadata": {"windlass_techniques": "value_check"}})
}

/// What a `tool_choice: "required"` turn carries on each kind.
fn required(kind: UpstreamKind) -> Value {
    match kind {
        UpstreamKind::Anthropic => json!("any"),
        _ => json!("required"),
    }
}

/// The text the client was streamed, and how many messages were announced.
fn streamed(run: &Run) -> Option<(String, usize)> {
    let cap = run.sse.as_ref()?;
    let text = cap
        .of_type("response.output_text.delta")
        .iter()
        .filter_map(|e| e["delta"].as_str())
        .collect();
    let messages = cap
        .of_type("response.output_item.added")
        .iter()
        .filter(|e| e["item"]["type"] == "message")
        .count();
    Some((text, messages))
}

#[tokio::test]
async fn an_answer_leaving_a_value_unused_is_withdrawn_and_the_model_nudged() {
    let runs = KINDS
        .iter()
        .map(|k| (*k, Mode::Sse))
        .chain([(UpstreamKind::Chat, Mode::Json)]);
    for (kind, mode) in runs {
        let mock = MockExecutor::new().tool("add", MockBehavior::Ok("25".into()));
        let gw = gateway(kind, &mock, EngineConfig::default()).await;
        gw.upstream
            .push(Reply::tool_call("add", r#"{"a":40,"b":-15}"#));
        gw.upstream.push(Reply::text("The answer is 25."));
        gw.upstream
            .push(Reply::tool_call("add", r#"{"a":25,"b":10}"#));
        gw.upstream.push(Reply::text("The result is 35."));
        let body = request("Add -15 and 40, then add 10.", add());
        let run = create(&gw, mode, &body).await;
        let what = format!("{kind:?}/{mode:?}: {}", run.resp);
        assert_eq!(run.status(), "completed", "{what}");
        assert_eq!(output_types(&run.resp), TWO_CALLS_THEN_ANSWER, "{what}");
        assert_eq!(final_text(&run.resp), "The result is 35.", "{what}");
        assert!(!run.resp.to_string().contains("The answer is 25"), "{what}");
        if let Some((text, messages)) = streamed(&run) {
            assert_eq!(text, "The result is 35.", "{what}");
            assert_eq!(messages, 1, "{what}");
        }
        assert_eq!(mock.calls().len(), 2, "{what}");
        // The upstream saw the draft and the nudge, and the turn after them
        // had to call a tool; the turn after that is free again.
        let reqs = gw.upstream.requests();
        assert_eq!(reqs.len(), 4, "{what}");
        let (role, nudge) = last_message(kind, &reqs[2]);
        assert_eq!(role, "user", "{what}: {}", reqs[2]);
        assert_eq!(
            nudge,
            "Not finished: the request also mentions 10, which no tool call has used yet. \
The last result was 25. Call the tool for the next step now.",
            "{what}"
        );
        assert!(reqs[2].to_string().contains("The answer is 25."), "{what}");
        assert_eq!(tool_choice(kind, &reqs[2]), required(kind), "{what}");
        assert_ne!(tool_choice(kind, &reqs[1]), required(kind), "{what}");
        assert_ne!(tool_choice(kind, &reqs[3]), required(kind), "{what}");
        let t = trace(&gw, &run.id()).await;
        let checks = t["checks"].as_array().expect("the nudge in the trace");
        assert_eq!(checks.len(), 1, "{t}");
        assert_eq!(checks[0]["outcome"], "value_nudge", "{t}");
        assert_eq!(checks[0]["draft"], "The answer is 25.", "{t}");
        assert_eq!(checks[0]["prompt"], json!(nudge), "{t}");
    }
}

#[tokio::test]
async fn at_most_two_nudges_then_the_answer_stands() {
    let mock = MockExecutor::new().tool("add", MockBehavior::Ok("25".into()));
    let gw = gateway(UpstreamKind::Chat, &mock, EngineConfig::default()).await;
    gw.upstream
        .push(Reply::tool_call("add", r#"{"a":40,"b":-15}"#));
    // A model that answers whatever it is asked.
    for draft in ["First 25.", "Second 25.", "Third 25."] {
        gw.upstream.push(Reply::text(draft));
    }
    let body = request("Add -15 and 40, then add 10.", add());
    let run = create(&gw, Mode::Sse, &body).await;
    assert_eq!(run.status(), "completed", "{}", run.resp);
    assert_eq!(
        output_types(&run.resp),
        ["function_call", "function_call_output", "message"]
    );
    assert_eq!(final_text(&run.resp), "Third 25.");
    assert_eq!(streamed(&run), Some(("Third 25.".to_owned(), 1)));
    let reqs = gw.upstream.requests();
    assert_eq!(reqs.len(), 4);
    // The last turn replays both drafts, each with its nudge.
    let last = reqs[3].to_string();
    assert!(
        last.contains("First 25.") && last.contains("Second 25."),
        "{last}"
    );
    assert_eq!(roles(&reqs[3]).len(), 7, "{}", reqs[3]);
    let t = trace(&gw, &run.id()).await;
    let outcomes = trace_fields(&t, "checks", "outcome");
    assert_eq!(
        outcomes,
        [&json!("value_nudge"), &json!("value_nudge")],
        "{t}"
    );
}

/// A Chat gateway whose tool `tool` always returns `result`, its scripted
/// model answering with `replies`, and the run of `body`.
async fn scripted(
    tool: &str,
    result: &str,
    replies: Vec<Reply>,
    mode: Mode,
    body: &Value,
) -> (Gateway, Run) {
    let mock = MockExecutor::new().tool(tool, MockBehavior::Ok(result.into()));
    let gw = gateway(UpstreamKind::Chat, &mock, EngineConfig::default()).await;
    for reply in replies {
        gw.upstream.push(reply);
    }
    let run = create(&gw, mode, body).await;
    (gw, run)
}

#[tokio::test]
async fn an_answer_that_used_every_value_stands_and_so_does_one_without_numeric_tools() {
    // Every number of the request is in a call: one turn after the tool.
    let replies = vec![
        Reply::tool_call("add", r#"{"a":2,"b":3}"#),
        Reply::text("It is 5."),
    ];
    let (gw, run) = scripted(
        "add",
        "5",
        replies,
        Mode::Sse,
        &request("Add 2 and 3.", add()),
    )
    .await;
    assert_eq!(run.status(), "completed", "{}", run.resp);
    assert_eq!(final_text(&run.resp), "It is 5.");
    assert_eq!(streamed(&run), Some(("It is 5.".to_owned(), 1)));
    assert_eq!(gw.upstream.request_count(), 2);
    let t = trace(&gw, &run.id()).await;
    assert!(t.get("checks").is_none_or(|c| c == &json!([])), "{t}");

    // No tool takes a number: "3 ideas" is not a value to use.
    let lookup = json!([{"type": "function", "name": "lookup", "description": "look up q",
        "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}]);
    let replies = vec![
        Reply::tool_call("lookup", r#"{"q":"tea"}"#),
        Reply::text("Three ideas."),
    ];
    let body = request("Look up tea and give me 3 ideas.", lookup);
    let (gw, run) = scripted("lookup", "found", replies, Mode::Json, &body).await;
    assert_eq!(final_text(&run.resp), "Three ideas.", "{}", run.resp);
    assert_eq!(gw.upstream.request_count(), 2);

    // Turned off for the request (it is on by default): the early answer
    // stands.
    let early = || {
        vec![
            Reply::tool_call("add", r#"{"a":40,"b":-15}"#),
            Reply::text("The answer is 25."),
        ]
    };
    let body = json!({"model": "m", "input": "Add -15 and 40, then add 10.", "tools": add(),
                      "metadata": {"windlass_techniques": "-value_check"}});
    let (gw, run) = scripted("add", "25", early(), Mode::Json, &body).await;
    assert_eq!(final_text(&run.resp), "The answer is 25.", "{}", run.resp);
    assert_eq!(gw.upstream.request_count(), 2);

    // Not named at all: on, as shipped.
    let mut replies = early();
    replies.push(Reply::tool_call("add", r#"{"a":25,"b":10}"#));
    replies.push(Reply::text("The answer is 35."));
    let body = json!({"model": "m", "input": "Add -15 and 40, then add 10.", "tools": add()});
    let (gw, run) = scripted("add", "25", replies, Mode::Json, &body).await;
    assert_eq!(final_text(&run.resp), "The answer is 35.", "{}", run.resp);
    assert_eq!(gw.upstream.request_count(), 4);
}
