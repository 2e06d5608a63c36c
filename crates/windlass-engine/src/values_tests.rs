use super::*;
use crate::check::done_calls;
use serde_json::json;
use windlass_protocol::Item;

fn values(text: &str) -> Vec<f64> {
    numbers(text).into_iter().map(|m| m.value).collect()
}

fn spelled(text: &str) -> Vec<String> {
    numbers(text).into_iter().map(|m| m.text).collect()
}

fn items(v: Value) -> Vec<Item> {
    serde_json::from_value(v).unwrap()
}

#[test]
fn numbers_are_integers_and_decimals_with_a_sign_only_before_them() {
    assert_eq!(values("Add -15 and 40, then add 10."), [-15.0, 40.0, 10.0]);
    assert_eq!(spelled("Add -15 and 40, then add 10."), ["-15", "40", "10"]);
    assert_eq!(values("-100 and 37, then -12"), [-100.0, 37.0, -12.0]);
    assert_eq!(values("It costs 2.5 or 0.75 (maybe 3)."), [2.5, 0.75, 3.0]);
    // A `-` after a letter or a digit is not a sign: a range, a date.
    assert_eq!(values("pages 3-4"), [3.0, 4.0]);
    assert_eq!(values("on 2026-11-27"), [2026.0, 11.0, 27.0]);
    assert_eq!(values("x-5"), [5.0]);
    // A sentence's full stop is not a decimal point.
    assert_eq!(values("Start at 50. Add 25."), [50.0, 25.0]);
    assert_eq!(values("1,234 apples and 3,4"), [1234.0, 3.0, 4.0]);
    assert_eq!(spelled("1,234,567"), ["1,234,567"]);
    assert!(values("no digits here").is_empty());
}

#[test]
fn a_token_glued_to_letters_is_not_a_quantity() {
    assert_eq!(values("the 2nd and 10th step"), Vec::<f64>::new());
    assert_eq!(values("a 5km run, then 7 km more"), [7.0]);
    assert_eq!(values("mp3 file2 in v1.2.3 and 8"), [8.0]);
    // Units apart from the number are fine.
    assert_eq!(values("132 km, 87 km"), [132.0, 87.0]);
    assert_eq!(values("$40 and 15%"), [40.0, 15.0]);
}

#[test]
fn coverage_reads_every_calls_arguments_and_outputs() {
    let done = items(json!([
        {"type": "message", "role": "user", "content": "Add 9 and 11 (not 77)"},
        {"type": "function_call", "call_id": "c1", "name": "add",
         "arguments": "{\"num1\": 40, \"b\": \"-15\"}"},
        {"type": "function_call_output", "call_id": "c1", "output": "25"},
        {"type": "mcp_call", "id": "m1", "server_label": "calc", "name": "add",
         "arguments": "{\"a\":2.5,\"b\":[3]}", "output": "5.5"},
        {"type": "mcp_call", "id": "m2", "server_label": "calc", "name": "add",
         "arguments": "{\"a\":\"x\"}", "error": "bad 404"},
        {"type": "function_call", "call_id": "c2", "name": "sh", "arguments": "echo 6*7"},
    ]));
    let mut got = covered(&done_calls(&done));
    got.sort_by(f64::total_cmp);
    // The key `num1` is a name; the message is not a call.
    assert_eq!(got, [-15.0, 2.5, 3.0, 5.5, 6.0, 7.0, 25.0, 40.0, 404.0]);
}

#[test]
fn unused_numbers_are_those_no_call_touched_each_once() {
    let request = "Start with 9. Add 11, then add 30, then add 50, then add 900.";
    let left = unused(request, &[9.0, 11.0, 20.0]);
    let names: Vec<&str> = left.iter().map(|m| m.text.as_str()).collect();
    assert_eq!(names, ["30", "50", "900"]);
    assert!(unused(request, &[9.0, 11.0, 30.0, 50.0, 900.0]).is_empty());
    // Compared as numbers; a repeat is named once.
    assert!(unused("add 25, then 25 again", &[25.0]).is_empty());
    assert_eq!(unused("add 5, then 5", &[]).len(), 1);
    assert!(unused("add 2.50", &[2.5]).is_empty());
    // Either sign: "subtract 5" done as add(x, -5) used the 5.
    assert!(unused("subtract 5 from 12", &[12.0, -5.0]).is_empty());
    assert_eq!(
        unused("Add -15 and 40, then add 10.", &[40.0, -15.0, 25.0])[0].text,
        "10"
    );
}

#[test]
fn only_a_tool_with_a_numeric_parameter_opens_the_gate() {
    let add = json!({"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "integer"}}});
    let files = json!({"type": "object", "properties": {"path": {"type": "string"}}});
    let nullable = json!({"properties": {"n": {"type": ["integer", "null"]}}});
    let any_of = json!({"properties": {"n": {"anyOf": [{"type": "string"}, {"type": "number"}]}}});
    assert!(takes_numbers([&files, &add]));
    assert!(!takes_numbers([&files]));
    assert!(!takes_numbers([&json!({}), &json!(null)]));
    assert!(takes_numbers([&nullable]));
    assert!(takes_numbers([&any_of]));
    assert!(!takes_numbers(std::iter::empty()));
}

#[test]
fn the_nudge_names_the_unused_values_and_the_last_result() {
    let one = numbers("10");
    assert_eq!(
        nudge_prompt(&one, Some("25")),
        "Not finished: the request also mentions 10, which no tool call has used yet. \
The last result was 25. Call the tool for the next step now."
    );
    let three = numbers("30, 50, 900");
    let text = nudge_prompt(&three, None);
    assert!(text.contains("mentions 30, 50 and 900, which"), "{text}");
    assert!(!text.contains("last result"), "{text}");
}
