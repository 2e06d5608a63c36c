use super::*;
use serde_json::json;

fn call(name: &str, arguments: Value) -> ToolCall {
    ToolCall {
        call_id: "c9".into(),
        name: name.into(),
        arguments: arguments.to_string(),
    }
}

fn done(calls: &[(&str, Value, &str)]) -> Vec<DoneCall> {
    calls
        .iter()
        .map(|(name, args, out)| DoneCall {
            name: (*name).into(),
            arguments: args.to_string(),
            output: Some((*out).into()),
        })
        .collect()
}

#[test]
fn the_last_step_applied_to_its_own_result_is_a_stall() {
    let request = "Add 10 and 20, then add 5 to the result.";
    let so_far = done(&[
        ("add", json!({"a": 10, "b": 20}), "30"),
        ("add", json!({"a": 30, "b": 5}), "35"),
    ]);
    assert_eq!(
        stall(&call("add", json!({"a": 35, "b": 5})), &so_far, request),
        Some(Stall::Reapplied)
    );
    // The request's next step is not a stall: `b` changes to a new value.
    assert_eq!(
        stall(&call("add", json!({"b": 7, "a": 35})), &so_far, request),
        None
    );
    // Nor is the second step, whose `b` is not the first result.
    assert_eq!(
        stall(
            &call("add", json!({"a": 30, "b": 5})),
            &so_far[..1],
            request
        ),
        None
    );
}

#[test]
fn a_value_the_request_names_twice_may_be_used_twice() {
    let request = "Start at 50. Add 25, then add 25 again, then add 100.";
    let once = done(&[("add", json!({"a": 50, "b": 25}), "75")]);
    assert_eq!(
        stall(&call("add", json!({"a": 75, "b": 25})), &once, request),
        None
    );
    let twice = done(&[
        ("add", json!({"a": 50, "b": 25}), "75"),
        ("add", json!({"a": 75, "b": 25}), "100"),
    ]);
    assert_eq!(
        stall(&call("add", json!({"a": 100, "b": 25})), &twice, request),
        Some(Stall::Reapplied)
    );
    // Every argument replaced by the result (18 + 18 after 7 + 11 = 18).
    let pairs = done(&[("add", json!({"a": 7, "b": 11}), "18")]);
    assert_eq!(
        stall(
            &call("add", json!({"a": 18, "b": 18})),
            &pairs,
            "Add 3 and 4."
        ),
        Some(Stall::Reapplied)
    );
}

#[test]
fn a_repeat_of_any_earlier_call_is_a_stall_and_other_tools_are_not() {
    let so_far = done(&[
        (
            "write_file",
            json!({"path": "r.txt", "content": "425"}),
            "wrote 3 bytes",
        ),
        ("list_dir", json!({"path": "."}), "r.txt"),
    ]);
    assert_eq!(
        stall(&call("list_dir", json!({"path": "."})), &so_far, ""),
        Some(Stall::Repeat)
    );
    assert_eq!(
        stall(&call("list_dir", json!({"path": "sub"})), &so_far, ""),
        None
    );
    assert_eq!(
        stall(&call("read_file", json!({"path": "r.txt"})), &so_far, ""),
        None
    );
    // One retry of a failed call is allowed, a second is a stall.
    let failed = done(&[("list_dir", json!({"path": "x"}), "Error: cannot list 'x'")]);
    let again = call("list_dir", json!({"path": "x"}));
    assert_eq!(stall(&again, &failed, ""), None);
    let twice = done(&[
        ("list_dir", json!({"path": "x"}), "Error: cannot list 'x'"),
        ("list_dir", json!({"path": "x"}), "Error: cannot list 'x'"),
    ]);
    assert_eq!(stall(&again, &twice, ""), Some(Stall::Repeat));
    // A call still waiting for its output is not something the model has.
    let waiting = vec![DoneCall {
        name: "list_dir".into(),
        arguments: json!({"path": "."}).to_string(),
        output: None,
    }];
    assert_eq!(
        stall(&call("list_dir", json!({"path": "."})), &waiting, ""),
        None
    );
}

#[test]
fn mentions_count_whole_numbers_only() {
    let text = "Add 25, then 125, then 2.5, then -25 and 25.";
    assert_eq!(mentions(text, &json!(25)), 2);
    assert_eq!(mentions(text, &json!(-25)), 1);
    assert_eq!(mentions(text, &json!(2.5)), 1);
    assert_eq!(mentions("notes.txt and notes.txt", &json!("notes.txt")), 2);
    assert_eq!(mentions(text, &json!(true)), 0);
}

#[test]
fn the_output_lists_the_work_so_far_and_asks_for_the_answer() {
    let output: Vec<Item> = serde_json::from_value(json!([
        {"type": "function_call", "call_id": "c1", "name": "add", "arguments": "{\"a\": 10, \"b\": 20}"},
        {"type": "function_call_output", "call_id": "c1", "output": "30"},
        {"type": "function_call", "call_id": "c2", "name": "add", "arguments": "{\"a\": 30, \"b\": 5}"},
        {"type": "function_call_output", "call_id": "c2", "output": "35"},
    ]))
    .unwrap();
    let text = stalled_call(
        &call("add", json!({"a": 35, "b": 5})),
        &output,
        "Add 10 and 20, then add 5.",
    )
    .expect("stall");
    assert!(text.contains("applies your previous step again"), "{text}");
    assert!(
        text.contains("add({\"a\": 30, \"b\": 5}) returned: 35"),
        "{text}"
    );
    assert!(text.ends_with("states the final result."), "{text}");
}

#[test]
fn the_call_being_decided_is_in_the_output_and_does_not_count_as_a_use() {
    // An MCP call's item is in the output while it is decided.
    let output: Vec<Item> = serde_json::from_value(json!([
        {"type": "mcp_call", "id": "mcp_1", "server_label": "calc", "name": "add",
         "arguments": "{\"a\": 50, \"b\": 25}", "output": "75"},
        {"type": "mcp_call", "id": "mcp_2", "server_label": "calc", "name": "add",
         "arguments": "{\"a\": 75, \"b\": 25}"},
    ]))
    .unwrap();
    let request = "Start at 50. Add 25, then add 25 again, then add 100.";
    let again = call("calc__add", json!({"a": 75, "b": 25}));
    assert_eq!(stalled_call(&again, &output, request), None);
    let once = "Start at 50. Add 25, then add 100.";
    assert!(stalled_call(&again, &output, once).is_some());
}
