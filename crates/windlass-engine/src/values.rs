//! The value check (`value_check`): counting which numbers of the user's
//! request no tool call has touched yet, as pure functions.
//!
//! Measured on a small model (Qwen2.5-Coder-1.5B), the commonest failure
//! left after the stall stop is the premature answer: one call, then its
//! result given as the answer ("Add -15 and 40, then add 10" → `add(40,
//! -15) = 25`, "25"). Asking the model whether it is done does not help (it
//! confirms its draft); counting does: a number of the request that no
//! call's arguments and no call's result contain shows a step not taken.

use serde_json::Value;

use crate::check::{one_line, DoneCall};

/// A number a text mentions: as written, and its value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Mention {
    pub text: String,
    pub value: f64,
}

/// The numbers `text` mentions, in order: integers and decimals
/// (`1,234` with thousands separators is one number), with a leading `-`
/// as the sign unless a letter or digit comes right before it (`3-4` is 3
/// and 4, a date's parts are positive). A token glued to letters is not a
/// quantity and is skipped: `2nd`, `10th`, `5km`, `mp3`, `file2`.
pub(crate) fn numbers(text: &str) -> Vec<Mention> {
    let chars: Vec<char> = text.chars().collect();
    let digit = |i: usize| chars.get(i).is_some_and(char::is_ascii_digit);
    let letter = |i: usize| chars.get(i).is_some_and(|c| c.is_alphabetic());
    let mut found = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if !digit(i) {
            i += 1;
            continue;
        }
        let start = i;
        while digit(i) {
            i += 1;
        }
        // Thousands groups (`1,234,567`) after a first group of at most three digits.
        if i - start <= 3 {
            while chars.get(i) == Some(&',') && (1..=3).all(|k| digit(i + k)) && !digit(i + 4) {
                i += 4;
            }
        }
        if chars.get(i) == Some(&'.') && digit(i + 1) {
            i += 1;
            while digit(i) {
                i += 1;
            }
        }
        let end = i;
        // More dots and digits (`1.2.3`, a version): not a quantity.
        while digit(i) || (chars.get(i) == Some(&'.') && digit(i + 1)) {
            i += 1;
        }
        if letter(end) || (start > 0 && letter(start - 1)) || end != i {
            continue;
        }
        let signed = start > 0
            && chars[start - 1] == '-'
            && !(start > 1 && chars[start - 2].is_alphanumeric());
        let from = if signed { start - 1 } else { start };
        let spelled: String = chars[from..end].iter().collect();
        if let Ok(value) = spelled.replace(',', "").parse::<f64>() {
            found.push(Mention {
                text: spelled,
                value,
            });
        }
    }
    found
}

/// Every number the `calls` touched: their arguments (each JSON value:
/// numbers, and the numbers inside strings) and their outputs (errors
/// included).
pub(crate) fn covered(calls: &[DoneCall]) -> Vec<f64> {
    let mut values = Vec::new();
    let mut text = |t: &str| values.extend(numbers(t).into_iter().map(|m| m.value));
    for call in calls {
        argument_numbers(&call.arguments, &mut text);
        if let Some(output) = &call.output {
            text(output);
        }
    }
    values
}

/// Hands `text` the number-bearing parts of a call's arguments: their JSON
/// values (keys such as `num1` are names, not values), or the raw text
/// when it is not JSON.
fn argument_numbers(arguments: &str, text: &mut impl FnMut(&str)) {
    fn walk(v: &Value, text: &mut impl FnMut(&str)) {
        match v {
            Value::Number(n) => text(&n.to_string()),
            Value::String(s) => text(s),
            Value::Array(a) => a.iter().for_each(|v| walk(v, text)),
            Value::Object(m) => m.values().for_each(|v| walk(v, text)),
            Value::Bool(_) | Value::Null => {}
        }
    }
    match serde_json::from_str::<Value>(arguments) {
        Ok(v) => walk(&v, text),
        Err(_) => text(arguments),
    }
}

/// The numbers of `request` that `covered` does not hold, each once, in
/// request order. A number counts as used with either sign: "subtract 5"
/// done as `add(x, -5)` used the 5.
pub(crate) fn unused(request: &str, covered: &[f64]) -> Vec<Mention> {
    let same = |a: f64, b: f64| (a.abs() - b.abs()).abs() <= 1e-9 * a.abs().max(1.0);
    let mut left: Vec<Mention> = Vec::new();
    for m in numbers(request) {
        let seen = covered.iter().any(|&c| same(c, m.value))
            || left.iter().any(|l| same(l.value, m.value));
        if !seen {
            left.push(m);
        }
    }
    left
}

/// Whether a tool with these JSON schemas takes a number: some parameter of
/// type `number` or `integer` (so "give me 3 ideas" with file tools only is
/// not held to its numbers).
pub(crate) fn takes_numbers<'a>(schemas: impl IntoIterator<Item = &'a Value>) -> bool {
    fn numeric(schema: &Value) -> bool {
        let typed = |t: &Value| matches!(t.as_str(), Some("number" | "integer"));
        match schema.get("type") {
            Some(Value::Array(types)) if types.iter().any(typed) => return true,
            Some(t) if typed(t) => return true,
            _ => {}
        }
        ["anyOf", "oneOf"].iter().any(|k| {
            schema
                .get(*k)
                .and_then(Value::as_array)
                .is_some_and(|alts| alts.iter().any(numeric))
        })
    }
    schemas.into_iter().any(|schema| {
        schema
            .get("properties")
            .and_then(Value::as_object)
            .is_some_and(|props| props.values().any(numeric))
    })
}

/// The user message after a draft that left `values` unused: names them
/// and the last tool result, and asks for the call.
pub(crate) fn nudge_prompt(values: &[Mention], last_result: Option<&str>) -> String {
    let names: Vec<&str> = values.iter().map(|m| m.text.as_str()).collect();
    let listed = match names.as_slice() {
        [rest @ .., last] if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => names.concat(),
    };
    let mut text = format!(
        "Not finished: the request also mentions {listed}, which no tool call has used yet."
    );
    if let Some(result) = last_result {
        text.push_str(&format!(" The last result was {}.", one_line(result)));
    }
    text.push_str(" Call the tool for the next step now.");
    text
}

#[cfg(test)]
#[path = "values_tests.rs"]
mod tests;
