//! The completion check's words and the techniques' decisions on a call
//! before it runs (repeat guard, schema check), as pure functions over the
//! response's output, so each is unit-tested apart from the loop.

use serde_json::Value;
use windlass_protocol::{Item, Role};

use crate::config::VERIFICATION_PROMPT;
use crate::naming::mcp_tool_name;
use crate::ports::agent::events::Rejection;
use crate::ports::agent::tools::ToolCall;
use crate::techniques::Techniques;

/// The user turn after a check's answer that names a missing step: the next
/// turn is sent with `tool_choice: "required"`.
pub(crate) const REQUIRED_PROMPT: &str = "Do not write tool calls or their results as text. \
Call the tool for the next missing step of the request now.";

/// Longest tool result quoted back to the model in one line.
const QUOTE_LIMIT: usize = 300;

/// A tool call of the response with what it returned.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct DoneCall {
    pub name: String,
    pub arguments: String,
    /// The output text; `None` while it has none.
    pub output: Option<String>,
}

/// The calls in `output` with their outputs, in order.
pub(crate) fn done_calls(output: &[Item]) -> Vec<DoneCall> {
    let mut calls: Vec<(String, DoneCall)> = Vec::new();
    for item in output {
        match item {
            Item::FunctionCall(c) => calls.push((
                c.call_id.clone(),
                DoneCall {
                    name: c.name.clone(),
                    arguments: c.arguments.clone(),
                    output: None,
                },
            )),
            Item::FunctionCallOutput(o) => {
                if let Some((_, call)) = calls.iter_mut().find(|(id, _)| *id == o.call_id) {
                    call.output = Some(o.output.joined_text());
                }
            }
            Item::McpCall(c) => calls.push((
                c.id.clone(),
                DoneCall {
                    name: mcp_tool_name(&c.server_label, &c.name),
                    arguments: c.arguments.clone(),
                    output: match (&c.output, &c.error) {
                        (_, Some(e)) => Some(format!("Error: {}", e.text())),
                        (Some(o), None) => Some(o.clone()),
                        (None, None) => None,
                    },
                },
            )),
            _ => {}
        }
    }
    calls.into_iter().map(|(_, c)| c).collect()
}

/// The text of the request: the last user message of the input.
pub(crate) fn request_text(input: &[Item]) -> Option<String> {
    input.iter().rev().find_map(|item| match item {
        Item::Message(m) if m.role == Role::User => Some(m.content.joined_text()),
        _ => None,
    })
}

/// The text of the messages among `items` (a turn's answer).
pub(crate) fn answer_text(items: &[Item]) -> String {
    items
        .iter()
        .filter_map(|item| match item {
            Item::Message(m) => Some(m.content.joined_text()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The completion check's prompt, a user message (after the assistant's
/// draft, so roles alternate and no upstream sees an assistant prefill).
/// `restate`: the request and the tool results so far, and a question for
/// the missing steps, instead of the yes-question.
pub(crate) fn check_prompt(restate: bool, request: Option<&str>, output: &[Item]) -> Item {
    let text = if restate {
        restated(request, &done_calls(output))
    } else {
        VERIFICATION_PROMPT.to_owned()
    };
    Item::user_text(text)
}

fn restated(request: Option<&str>, calls: &[DoneCall]) -> String {
    let mut text = String::from("Check your work against the request before you answer.\n");
    if let Some(request) = request {
        text.push_str(&format!("The request: {}\n", one_line(request)));
    }
    text.push_str("The tool calls made so far and their results:\n");
    for c in calls {
        let result = c.output.as_deref().unwrap_or("(no result)");
        text.push_str(&format!(
            "- {}({}) returned: {}\n",
            c.name,
            one_line(&c.arguments),
            one_line(result)
        ));
    }
    text.push_str(
        "If a step of the request has not been done yet, call the tool for that step now \
(a real tool call, not text). If every step is done, reply with the final answer only.",
    );
    text
}

pub(crate) fn one_line(text: &str) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match flat.char_indices().nth(QUOTE_LIMIT) {
        Some((cut, _)) => format!("{}...", &flat[..cut]),
        None => flat,
    }
}

/// Whether a check's answer says a step is still to do, or writes a tool
/// call or its result as text instead of calling.
pub(crate) fn shows_missing_step(text: &str) -> bool {
    const SIGNS: [&str; 14] = [
        "not yet",
        "not been",
        "missing",
        "next step",
        "still need",
        "remaining",
        "need to ",
        "let's ",
        "i will ",
        "i'll ",
        "<tool_call>",
        "\"name\":",
        "tool result",
        "```json",
    ];
    let lower = text.to_lowercase();
    SIGNS.iter().any(|s| lower.contains(s))
}

/// The repeat guard: the output for `call` when an earlier call of the
/// response had the same tool and the same arguments (compared as JSON)
/// and has a result.
pub(crate) fn repeated_call(call: &ToolCall, output: &[Item]) -> Option<String> {
    let key = canonical(&call.arguments);
    let earlier = done_calls(output)
        .into_iter()
        .find(|c| c.name == call.name && canonical(&c.arguments) == key && c.output.is_some())?;
    Some(format!(
        "You already called {} with these arguments; the result was: {}. Do not repeat the \
call: use that result for the next step, or give the final answer if every step is done.",
        call.name,
        one_line(earlier.output.as_deref().unwrap_or_default())
    ))
}

/// Arguments in one spelling, so `{"a":1, "b":2}` and `{"b": 2, "a": 1}`
/// are the same call (serde_json's map is ordered by key).
fn canonical(arguments: &str) -> String {
    match serde_json::from_str::<Value>(arguments) {
        Ok(v) => v.to_string(),
        Err(_) => arguments.trim().to_owned(),
    }
}

/// The schema check: an error output naming the field when `arguments`
/// do not fit `schema` (`None` when they do, or when there is nothing to
/// check: no schema, a schema the validator cannot compile, or arguments
/// that are not JSON, which the tool itself reports).
pub(crate) fn schema_error(schema: &Value, arguments: &str) -> Option<String> {
    if !schema.is_object() {
        return None;
    }
    let args: Value = if arguments.trim().is_empty() {
        Value::Object(Default::default())
    } else {
        serde_json::from_str(arguments).ok()?
    };
    let validator = jsonschema::validator_for(schema).ok()?;
    let error = validator.iter_errors(&args).next()?;
    let field = error.instance_path().to_string();
    let field = field.trim_start_matches('/').replace('/', ".");
    let hint = fields_hint(schema);
    Some(if field.is_empty() {
        format!("Error: the arguments do not fit the tool's schema: {error}. {hint}")
    } else {
        format!("Error: the argument `{field}` is invalid: {error}. {hint}")
    })
}

/// Why a server tool's call is not run, decided before the policy sees it:
/// arguments that are not a JSON object (always), a stall (`stall_stop`,
/// see `crate::stall`; `request` is the user's request), a repeat of an
/// earlier call (`repeat_guard`), arguments that do not fit the schema
/// (`schema_check`). The text is the output the model gets.
pub(crate) fn before_run(
    techniques: &Techniques,
    call: &ToolCall,
    schema: &Value,
    output: &[Item],
    request: &str,
) -> Option<(Rejection, String)> {
    if !arguments_are_object(&call.arguments) {
        return Some((
            Rejection::InvalidArguments,
            format!(
                "Error: your arguments were not a valid JSON object: {}. Call the tool again with \
a complete JSON object. {}",
                one_line(&call.arguments),
                fields_hint(schema)
            ),
        ));
    }
    if techniques.stall_stop {
        if let Some(text) = crate::stall::stalled_call(call, output, request) {
            return Some((Rejection::Stalled, text));
        }
    }
    if techniques.repeat_guard {
        if let Some(text) = repeated_call(call, output) {
            return Some((Rejection::Repeated, text));
        }
    }
    if techniques.schema_check {
        if let Some(text) = schema_error(schema, &call.arguments) {
            return Some((Rejection::InvalidArguments, text));
        }
    }
    None
}

/// Whether `arguments` is a JSON object (empty counts as `{}`).
pub(crate) fn arguments_are_object(arguments: &str) -> bool {
    arguments.trim().is_empty()
        || matches!(
            serde_json::from_str::<Value>(arguments),
            Ok(Value::Object(_))
        )
}

/// `The arguments are a JSON object with: a (number), b (number).`
fn fields_hint(schema: &Value) -> String {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return String::new();
    };
    let fields: Vec<String> = props
        .iter()
        .map(|(k, v)| {
            let ty = v.get("type").and_then(Value::as_str).unwrap_or("any");
            format!("{k} ({ty})")
        })
        .collect();
    format!(
        "The arguments are a JSON object with: {}.",
        fields.join(", ")
    )
}

#[cfg(test)]
#[path = "check_tests.rs"]
mod tests;
