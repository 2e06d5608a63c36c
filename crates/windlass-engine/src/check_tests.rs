use super::*;
use serde_json::json;
use windlass_protocol::MessageContent;

fn items(v: Value) -> Vec<Item> {
    serde_json::from_value(v).unwrap()
}

fn call(name: &str, arguments: &str) -> ToolCall {
    ToolCall {
        call_id: "c9".into(),
        name: name.into(),
        arguments: arguments.into(),
    }
}

fn text_of(item: &Item) -> (Role, String) {
    match item {
        Item::Message(m) => match &m.content {
            MessageContent::Text(t) => (m.role, t.clone()),
            MessageContent::Parts(_) => panic!("parts"),
        },
        other => panic!("not a message: {other:?}"),
    }
}

fn output() -> Vec<Item> {
    items(json!([
        {"type": "function_call", "call_id": "c1", "name": "add", "arguments": "{\"a\": 10, \"b\": 20}"},
        {"type": "function_call_output", "call_id": "c1", "output": "30"},
        {"type": "mcp_call", "id": "mcp_1", "server_label": "calc", "name": "add",
         "arguments": "{\"a\":30,\"b\":5}", "output": "35"},
        {"type": "function_call", "call_id": "c2", "name": "read_file", "arguments": "{}"},
    ]))
}

#[test]
fn done_calls_pair_each_call_with_its_output() {
    let done = done_calls(&output());
    assert_eq!(done.len(), 3);
    assert_eq!(done[0].output.as_deref(), Some("30"));
    assert_eq!(done[1].name, "calc__add");
    assert_eq!(done[1].output.as_deref(), Some("35"));
    assert_eq!(done[2].output, None);
}

#[test]
fn the_check_prompt_is_a_user_turn_and_the_restating_one_quotes_request_and_results() {
    let (role, plain) = text_of(&check_prompt(
        false,
        Some("add 10 and 20, then 5"),
        &output(),
    ));
    assert_eq!(role, Role::User);
    assert_eq!(plain, VERIFICATION_PROMPT);
    let (role, restated) = text_of(&check_prompt(
        true,
        Some("add 10 and 20,\nthen 5"),
        &output(),
    ));
    assert_eq!(role, Role::User);
    assert!(
        restated.contains("The request: add 10 and 20, then 5"),
        "{restated}"
    );
    assert!(
        restated.contains("- add({\"a\": 10, \"b\": 20}) returned: 30"),
        "{restated}"
    );
    assert!(
        restated.contains("calc__add({\"a\":30,\"b\":5}) returned: 35"),
        "{restated}"
    );
    assert!(
        restated.contains("read_file({}) returned: (no result)"),
        "{restated}"
    );
    assert!(!restated.to_lowercase().contains("yes"), "{restated}");
}

#[test]
fn a_long_result_is_quoted_on_one_short_line() {
    let long = "word ".repeat(200);
    let quoted = one_line(&long);
    assert!(quoted.ends_with("...") && quoted.chars().count() == QUOTE_LIMIT + 3);
    assert!(!one_line("a\n b").contains('\n'));
}

#[test]
fn the_guard_answers_an_identical_call_with_the_earlier_result() {
    let out = output();
    // Same tool, same arguments in another spelling.
    let again = repeated_call(&call("add", "{\"b\":20,\"a\":10}"), &out).expect("repeat");
    assert!(again.contains("the result was: 30"), "{again}");
    assert!(repeated_call(&call("calc__add", "{\"a\": 30, \"b\": 5}"), &out).is_some());
    // Other arguments, another tool, or an earlier call with no result yet.
    assert_eq!(
        repeated_call(&call("add", "{\"a\": 10, \"b\": 21}"), &out),
        None
    );
    assert_eq!(
        repeated_call(&call("sub", "{\"a\": 10, \"b\": 20}"), &out),
        None
    );
    assert_eq!(repeated_call(&call("read_file", "{}"), &out), None);
}

#[test]
fn the_schema_check_names_the_field() {
    let schema = json!({"type": "object",
        "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
        "required": ["a", "b"]});
    assert_eq!(schema_error(&schema, "{\"a\": 1, \"b\": 2}"), None);
    let wrong = schema_error(&schema, "{\"a\": \"one\", \"b\": 2}").expect("type error");
    assert!(
        wrong.contains("`a`") && wrong.contains("a (number), b (number)"),
        "{wrong}"
    );
    let missing = schema_error(&schema, "{\"a\": 1}").expect("missing");
    assert!(missing.contains("\"b\""), "{missing}");
    // Not JSON: the tool reports it; no schema: nothing to check.
    assert_eq!(schema_error(&schema, "{\"a\": 1, \"b\": }"), None);
    assert_eq!(schema_error(&Value::Null, "{\"x\": 1}"), None);
}

#[test]
fn a_missing_step_is_seen_in_the_checks_answer() {
    assert!(shows_missing_step("The next step is to add 5."));
    assert!(shows_missing_step("{\"name\": \"add\", \"arguments\": {}}"));
    assert!(shows_missing_step("Tool result: 35"));
    assert!(!shows_missing_step("The sum is 35."));
}

#[test]
fn before_run_refuses_malformed_arguments_always_and_the_rest_by_switch() {
    let schema =
        json!({"type": "object", "properties": {"a": {"type": "number"}}, "required": ["a"]});
    let off = Techniques::none();
    let (why, text) =
        before_run(&off, &call("add", "{\"a\": 1, \"b\": }"), &schema, &[], "").expect("malformed");
    assert_eq!(why, Rejection::InvalidArguments);
    assert!(
        text.contains("{\"a\": 1, \"b\": }") && text.contains("a (number)"),
        "{text}"
    );
    assert!(before_run(&off, &call("add", "[1]"), &schema, &[], "").is_some());
    assert_eq!(before_run(&off, &call("add", ""), &schema, &[], ""), None);
    // Off by default: a repeat runs, a schema mismatch goes to the tool.
    assert_eq!(
        before_run(
            &off,
            &call("add", "{\"a\": 10, \"b\": 20}"),
            &schema,
            &output(),
            ""
        ),
        None
    );
    assert_eq!(
        before_run(&off, &call("add", "{\"a\": \"x\"}"), &schema, &[], ""),
        None
    );
    let on = Techniques {
        repeat_guard: true,
        schema_check: true,
        ..Techniques::none()
    };
    let (why, _) = before_run(
        &on,
        &call("add", "{\"a\": 10, \"b\": 20}"),
        &schema,
        &output(),
        "",
    )
    .expect("repeat");
    assert_eq!(why, Rejection::Repeated);
    // With the stall stop on too, the stop decides.
    let both = Techniques {
        stall_stop: true,
        ..on
    };
    let (why, text) = before_run(
        &both,
        &call("add", "{\"a\": 10, \"b\": 20}"),
        &schema,
        &output(),
        "Add 10 and 20, then add 5.",
    )
    .expect("stall");
    assert_eq!(why, Rejection::Stalled);
    assert!(
        text.contains("calc__add({\"a\":30,\"b\":5}) returned: 35"),
        "{text}"
    );
    let (why, text) =
        before_run(&on, &call("add", "{\"a\": \"x\"}"), &schema, &[], "").expect("schema");
    assert_eq!(why, Rejection::InvalidArguments);
    assert!(text.contains("`a`"), "{text}");
}
