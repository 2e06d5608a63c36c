//! The stall stop (`stall_stop`): a call that shows the model is no longer
//! making progress is not run, and the next turn is asked for the answer
//! (`tool_choice: "none"`).
//!
//! Measured on a small model (Qwen2.5-Coder-1.5B), the loop's commonest
//! failure after the premature answer is the runaway: the work is done,
//! then the model goes on applying its last step to its own result
//! (`add(30, 5) = 35`, `add(35, 5) = 40`, …) or listing a directory it
//! already listed, until the turn limit ends the response without an
//! answer. Two signs, both pure functions of the response's calls:
//! - **a repeat**: the same tool with the same arguments as an earlier call
//!   that has a result (it can only return what the model already has; a
//!   call that failed may be retried once);
//! - **a re-application**: the same tool as the previous call, every
//!   changed argument now equal to the previous call's result, and every
//!   unchanged argument already used as often as the request mentions it.
//!   "Start at 50. Add 25, then add 25 again" mentions 25 twice, so
//!   `add(75, 25)` after `add(50, 25) = 75` still runs; "add 10 and 20,
//!   then add 5" mentions 5 once, so `add(35, 5)` after `add(30, 5) = 35`
//!   does not.

use serde_json::{Map, Value};

use crate::check::{done_calls, one_line, DoneCall};
use crate::ports::agent::tools::ToolCall;
use windlass_protocol::Item;

/// Why a call shows a stall.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stall {
    Repeat,
    Reapplied,
}

/// The output for `call` when it shows a stall: what was done, with its
/// results, and the request to answer from them.
pub(crate) fn stalled_call(call: &ToolCall, output: &[Item], request: &str) -> Option<String> {
    let done = done_calls(output);
    let why = stall(call, &done, request)?;
    let reason = match why {
        Stall::Repeat => "this call repeats one you already made",
        Stall::Reapplied => {
            "this call applies your previous step again to its own result, which the request \
did not ask for"
        }
    };
    let mut text = format!("Not run: {reason}. Results so far:\n");
    for c in done.iter().filter(|c| c.output.is_some()) {
        text.push_str(&format!(
            "- {}({}) returned: {}\n",
            c.name,
            one_line(&c.arguments),
            one_line(c.output.as_deref().unwrap_or_default())
        ));
    }
    // Measured on the 1.5B model: asked for "the final answer", it wrote
    // the call it wanted as a JSON block; asked for one plain sentence, it
    // answered.
    text.push_str(
        "No more tool calls: answer the request now in one plain sentence that states the \
final result.",
    );
    Some(text)
}

/// Whether `call`, after the response's `done` calls, shows a stall.
pub(crate) fn stall(call: &ToolCall, done: &[DoneCall], request: &str) -> Option<Stall> {
    let args = object(&call.arguments)?;
    let mut finished = done.iter().filter(|c| c.output.is_some());
    let same: Vec<&DoneCall> = finished
        .clone()
        .filter(|c| c.name == call.name && object(&c.arguments).as_ref() == Some(&args))
        .collect();
    // A retry after an error may be worth it (a timeout, a rate limit):
    // one is allowed; a repeat of a call that worked is not.
    if same.iter().any(|c| !failed(c)) || same.len() >= 2 {
        return Some(Stall::Repeat);
    }
    let previous = finished.next_back()?;
    if previous.name != call.name {
        return None;
    }
    let before = object(&previous.arguments)?;
    let result = previous.output.as_deref().unwrap_or_default().trim();
    if !same_keys(&args, &before) {
        return None;
    }
    let changed: Vec<&Value> = args
        .iter()
        .filter(|(k, v)| before.get(*k) != Some(v))
        .map(|(_, v)| v)
        .collect();
    if changed.is_empty()
        || !changed
            .iter()
            .all(|v| scalar_text(v).as_deref() == Some(result))
    {
        return None;
    }
    let kept_exhausted = args
        .iter()
        .filter(|(k, v)| before.get(*k) == Some(v))
        .all(|(_, v)| uses(&call.name, v, done) >= mentions(request, v));
    kept_exhausted.then_some(Stall::Reapplied)
}

/// Whether a call's output reports an error (the gateway's own and the
/// built-in tools' error outputs start so; an MCP error is given so by
/// `done_calls`).
fn failed(call: &DoneCall) -> bool {
    call.output
        .as_deref()
        .is_some_and(|o| o.trim_start().starts_with("Error"))
}

fn object(arguments: &str) -> Option<Map<String, Value>> {
    match serde_json::from_str::<Value>(arguments) {
        Ok(Value::Object(map)) => Some(map),
        // No arguments is the empty object.
        _ if arguments.trim().is_empty() => Some(Map::new()),
        _ => None,
    }
}

fn same_keys(a: &Map<String, Value>, b: &Map<String, Value>) -> bool {
    a.len() == b.len() && a.keys().all(|k| b.contains_key(k))
}

/// A number or a string as the model would read it in a result.
fn scalar_text(v: &Value) -> Option<String> {
    match v {
        Value::Number(n) => Some(n.to_string()),
        Value::String(s) => Some(s.trim().to_owned()),
        _ => None,
    }
}

/// How many finished calls of `tool` took `value` as one of their
/// arguments (the call being decided is already in the output, without a
/// result: it does not count).
fn uses(tool: &str, value: &Value, done: &[DoneCall]) -> usize {
    done.iter()
        .filter(|c| c.name == tool && c.output.is_some())
        .filter(|c| object(&c.arguments).is_some_and(|m| m.values().any(|v| v == value)))
        .count()
}

/// How often `value` appears in the request as a word of its own (`25` in
/// "add 25", not in "125" or "2.5").
fn mentions(request: &str, value: &Value) -> usize {
    let Some(needle) = scalar_text(value).filter(|n| !n.is_empty()) else {
        return 0;
    };
    let bytes = request.as_bytes();
    let part_of_word = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'.';
    request
        .match_indices(&needle)
        .filter(|(at, _)| {
            let end = at + needle.len();
            let before_ok = *at == 0 || (!part_of_word(bytes[at - 1]) && bytes[at - 1] != b'-');
            // A sentence's full stop may follow a number.
            let after_ok = end == bytes.len()
                || !part_of_word(bytes[end])
                || (bytes[end] == b'.' && bytes.get(end + 1).is_none_or(|c| !c.is_ascii_digit()));
            before_ok && after_ok
        })
        .count()
}

#[cfg(test)]
#[path = "stall_tests.rs"]
mod tests;
