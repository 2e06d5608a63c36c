//! The boundary between the canonical transcript and what the upstream sees:
//! only messages, function calls, their outputs and reasoning go up.

use std::collections::{HashMap, HashSet};

use windlass_protocol::hosted_replay;
use windlass_protocol::{
    FunctionCall, FunctionCallOutput, Item, ItemStatus, McpCall, Role, ToolOutput,
};

use crate::naming::mcp_tool_name;
use crate::ports::agent::provider::{ModelRequest, ModelToolChoice, Transcript};
use crate::prepared::PreparedRun;

/// Adds `item` to `out` in the form the upstream understands:
/// `mcp_call` becomes a function call and its output; MCP listing and
/// approval items are client-facing only).
pub(crate) fn push_upstream(out: &mut Vec<Item>, item: &Item) {
    match item {
        Item::Message(_) | Item::Reasoning(_) => out.push(item.clone()),
        // Namespaced and custom calls go up as plain functions (client_shapes).
        Item::FunctionCall(_)
        | Item::FunctionCallOutput(_)
        | Item::CustomToolCall(_)
        | Item::CustomToolCallOutput(_) => {
            out.extend(crate::client_shapes::upstream_item(item).map(replayable))
        }
        // OpenAI's client-executed types and their outputs, likewise.
        _ if item.is_client_executed() => out.extend(crate::client_shapes::upstream_item(item)),
        Item::Compaction(c) => out.extend(crate::compaction::summary_message(c)),
        Item::FileSearchCall(_) | Item::WebSearchCall(_) | Item::CodeInterpreterCall(_) => {
            push_hosted(out, item)
        }
        Item::McpCall(c) => {
            out.push(Item::FunctionCall(FunctionCall {
                id: None,
                call_id: c.id.clone(),
                name: mcp_tool_name(&c.server_label, &c.name),
                arguments: replay_arguments(&c.arguments),
                namespace: None,
                status: Some(ItemStatus::Completed),
            }));
            // A replayed error is what the model sees as the output.
            let (text, is_error) = match (&c.output, &c.error) {
                (_, Some(err)) => (format!("Error: {}", err.text()), Some(true)),
                (Some(o), None) => (o.clone(), None),
                (None, None) => (
                    "Error: the tool call did not complete".to_owned(),
                    Some(true),
                ),
            };
            out.push(Item::FunctionCallOutput(FunctionCallOutput {
                id: None,
                call_id: c.id.clone(),
                output: ToolOutput::Text(text),
                status: Some(ItemStatus::Completed),
                is_error,
            }));
        }
        _ => {}
    }
}

/// Arguments as they go back upstream: a call whose arguments are not a
/// JSON object (or empty) goes back with `{}`, which every kind accepts (llama.cpp's
/// server answers 500 to the whole request for a call it cannot parse, and
/// Anthropic's `tool_use.input` must be an object); the model still sees
/// what it sent in the error output of that call.
pub(crate) fn replay_arguments(arguments: &str) -> String {
    if !arguments.trim().is_empty() && crate::check::arguments_are_object(arguments) {
        arguments.to_owned()
    } else {
        "{}".to_owned()
    }
}

fn replayable(item: Item) -> Item {
    match item {
        Item::FunctionCall(mut c) => {
            c.arguments = replay_arguments(&c.arguments);
            Item::FunctionCall(c)
        }
        other => other,
    }
}

/// A hosted item as the model saw it: its function call (call_id = the
/// item's id) and the output rendered from the item.
fn push_hosted(out: &mut Vec<Item>, item: &Item) {
    let (Some((name, arguments)), Some(text), Some(id)) = (
        hosted_replay::replay_call(item),
        hosted_replay::model_text(item),
        item.id(),
    ) else {
        return;
    };
    out.push(Item::FunctionCall(FunctionCall {
        id: None,
        call_id: id.to_owned(),
        name: name.to_owned(),
        arguments,
        namespace: None,
        status: Some(ItemStatus::Completed),
    }));
    out.push(Item::FunctionCallOutput(FunctionCallOutput {
        id: None,
        call_id: id.to_owned(),
        output: ToolOutput::Text(text),
        status: Some(ItemStatus::Completed),
        is_error: (!hosted_replay::succeeded(item)).then_some(true),
    }));
}

/// The transcript as the upstream sees it. An `mcp_call` paused in a parent
/// response is stored again, finished, by the continuation that ran it; the
/// latest version stands in at the first position and later ones are skipped.
///
/// A `compaction` item stands for everything before it but the user's
/// messages (what `/responses/compact` and `context_management` keep):
/// only those and what follows the last compaction go up (see
/// [`after_compaction`]).
pub(crate) fn upstream_transcript<'a>(items: impl Iterator<Item = &'a Item> + Clone) -> Vec<Item> {
    let ordered = after_compaction(items.collect());
    let items = ordered.iter().copied();
    let mut latest: HashMap<&str, &McpCall> = HashMap::new();
    for item in items.clone() {
        if let Item::McpCall(c) = item {
            latest.insert(c.id.as_str(), c);
        }
    }
    let mut seen: HashSet<&str> = HashSet::new();
    let mut out = Vec::new();
    for item in items {
        match item {
            Item::McpCall(c) => {
                if seen.insert(c.id.as_str()) {
                    let last = latest.get(c.id.as_str()).copied().unwrap_or(c);
                    push_upstream(&mut out, &Item::McpCall(last.clone()));
                }
            }
            other => push_upstream(&mut out, other),
        }
    }
    out
}

/// The chain as the model reads it after its last compaction: the user's
/// messages up to the last item the compaction replaced, the summary, the
/// user's messages after that item (the turn being answered, when the
/// compaction happened while answering it), then what followed.
fn after_compaction(items: Vec<&Item>) -> Vec<&Item> {
    let Some(cut) = items.iter().rposition(|i| matches!(i, Item::Compaction(_))) else {
        return items;
    };
    let is_user = |i: &Item| matches!(i, Item::Message(m) if m.role == Role::User);
    // Nothing but user messages before it (a `/responses/compact` window
    // given back): they all stay before the summary.
    let replaced = items[..cut]
        .iter()
        .rposition(|i| !is_user(i))
        .map_or(cut, |at| at + 1);
    let mut out: Vec<&Item> = items[..replaced]
        .iter()
        .copied()
        .filter(|i| is_user(i))
        .collect();
    out.push(items[cut]);
    out.extend(&items[replaced..cut]);
    out.extend(&items[cut + 1..]);
    out
}

/// Items the upstream sees that the response's output does not (the
/// completion check's draft answer and prompt, a re-prompt), each batch at
/// its position in `output`, in the order they were added.
pub(crate) type Hidden = [(usize, Vec<Item>)];

/// `output` with the hidden batches put in place.
fn with_hidden<'a>(output: &'a [Item], hidden: &'a Hidden) -> Vec<&'a Item> {
    let mut tail = Vec::with_capacity(output.len());
    let mut from = 0;
    for (at, items) in hidden {
        let at = (*at).clamp(from, output.len());
        tail.extend(&output[from..at]);
        tail.extend(items);
        from = at;
    }
    tail.extend(&output[from..]);
    tail
}

/// What the loop asks of one turn's tool choice, beyond the request's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum TurnChoice {
    /// The request's choice on the first turn, `auto` after it.
    #[default]
    Free,
    /// This turn must call a tool (the completion check found a missing
    /// step).
    Required,
    /// This turn must answer (the stall stop refused a call).
    Answer,
}

/// The upstream request for the next model turn, with the loop's `choice`
/// for it.
///
/// Per turn this copies only the response's own output: history and input
/// are converted once per run and shared (`PreparedRun::upstream_head`), as
/// is the tool list. (The wire body itself still carries the whole
/// conversation: a chat-completions upstream is stateless.)
pub(crate) fn model_request(
    run: &PreparedRun,
    output: &[Item],
    turn: u32,
    stream: bool,
    hidden: &Hidden,
    choice: TurnChoice,
) -> ModelRequest {
    let tail = with_hidden(output, hidden);
    let tail = tail.iter().copied();
    let whole = output
        .iter()
        .any(|i| matches!(i, Item::McpCall(_) | Item::Compaction(_)));
    let transcript = if whole {
        // A continuation's output may hold the finished version of an MCP
        // call its history paused: deduplicated over the whole transcript.
        // A compaction in the output replaces what came before it.
        Transcript::from(upstream_transcript(
            run.history.iter().chain(&run.input).chain(tail),
        ))
    } else {
        let head = run
            .upstream_head
            .get_or_init(|| upstream_transcript(run.history.iter().chain(&run.input)).into());
        Transcript::new(head.clone(), upstream_transcript(tail))
    };
    let req = &run.request;
    let tools = run.tools.model_tools();
    // A forced or required choice applies to the first turn only, so the loop can end.
    let tool_choice = if choice == TurnChoice::Required && !tools.is_empty() {
        ModelToolChoice::Required
    } else if choice == TurnChoice::Answer {
        ModelToolChoice::None
    } else if turn == 0 || run.first_choice == ModelToolChoice::None {
        run.first_choice.clone()
    } else {
        ModelToolChoice::Auto
    };
    let mut model_request = ModelRequest {
        model: run.response.model.clone(),
        instructions: req.instructions.clone(),
        transcript,
        tools,
        tool_choice,
        stream,
        ..ModelRequest::default()
    };
    model_request.apply_options(req);
    model_request
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::sync::Arc;
    use windlass_protocol::MessageContent;

    fn items(v: serde_json::Value) -> Vec<Item> {
        serde_json::from_value(v).unwrap()
    }

    fn pairs(transcript: &[Item]) -> Vec<(String, String)> {
        transcript
            .iter()
            .filter_map(|i| match i {
                Item::FunctionCall(c) => Some(("call".to_owned(), c.call_id.clone())),
                Item::FunctionCallOutput(o) => match &o.output {
                    ToolOutput::Text(t) => Some((t.clone(), o.call_id.clone())),
                    ToolOutput::Parts(_) => None,
                },
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_replayed_error_is_the_output_the_model_sees() {
        let chain = items(json!([
            {"type": "mcp_list_tools", "id": "mcpl_1", "server_label": "calc", "tools": []},
            {"type": "mcp_call", "id": "mcp_1", "server_label": "calc", "name": "add",
             "arguments": "{}", "status": "failed",
             "error": {"type": "mcp_protocol_error", "code": -32000, "message": "server gone"}},
            {"type": "mcp_call", "id": "mcp_2", "server_label": "calc", "name": "add",
             "arguments": "{}", "error": "legacy text error"},
        ]));
        let t = upstream_transcript(chain.iter());
        assert_eq!(
            pairs(&t),
            [
                ("call".to_owned(), "mcp_1".to_owned()),
                ("Error: server gone".to_owned(), "mcp_1".to_owned()),
                ("call".to_owned(), "mcp_2".to_owned()),
                ("Error: legacy text error".to_owned(), "mcp_2".to_owned()),
            ]
        );
        assert!(matches!(&t[0], Item::FunctionCall(c) if c.name == "calc__add"));
    }

    #[test]
    fn hidden_batches_go_in_at_their_positions() {
        let output = items(json!([
            {"type": "message", "role": "user", "content": "0"},
            {"type": "message", "role": "user", "content": "1"},
        ]));
        let a = items(json!([{"type": "message", "role": "user", "content": "a"}]));
        let b = items(json!([{"type": "message", "role": "user", "content": "b"}]));
        let c = items(json!([{"type": "message", "role": "user", "content": "c"}]));
        let hidden = vec![(1, a), (1, b), (9, c)];
        let texts: Vec<String> = with_hidden(&output, &hidden)
            .into_iter()
            .map(|i| match i {
                Item::Message(m) => match &m.content {
                    MessageContent::Text(t) => t.clone(),
                    MessageContent::Parts(_) => String::new(),
                },
                _ => String::new(),
            })
            .collect();
        assert_eq!(texts, ["0", "a", "b", "1", "c"]);
    }

    #[test]
    fn malformed_arguments_go_back_upstream_as_an_empty_object() {
        let chain = items(json!([
            {"type": "function_call", "call_id": "c1", "name": "add", "arguments": "{\"a\": 1, \"b\": }"},
            {"type": "function_call_output", "call_id": "c1", "output": "Error: not JSON"},
            {"type": "mcp_call", "id": "mcp_1", "server_label": "calc", "name": "add",
             "arguments": "[1, 2]", "error": "bad"},
            {"type": "function_call", "call_id": "c2", "name": "add", "arguments": "{\"a\": 1}"},
        ]));
        let args: Vec<String> = upstream_transcript(chain.iter())
            .into_iter()
            .filter_map(|i| match i {
                Item::FunctionCall(c) => Some(c.arguments),
                _ => None,
            })
            .collect();
        assert_eq!(args, ["{}", "{}", "{\"a\": 1}"]);
    }

    #[test]
    fn a_paused_call_is_replayed_once_in_its_latest_version() {
        let chain = items(json!([
            {"type": "mcp_call", "id": "mcp_1", "server_label": "calc", "name": "add",
             "arguments": "{}", "status": "in_progress"},
            {"type": "function_call_output", "call_id": "c1", "output": "yes"},
            {"type": "mcp_call", "id": "mcp_1", "server_label": "calc", "name": "add",
             "arguments": "{}", "status": "completed", "output": "5"},
        ]));
        let t = upstream_transcript(chain.iter());
        assert_eq!(
            pairs(&t),
            [
                ("call".to_owned(), "mcp_1".to_owned()),
                ("5".to_owned(), "mcp_1".to_owned()),
                ("yes".to_owned(), "c1".to_owned()),
            ]
        );
    }

    /// The per-turn path converts history+input once and the output per
    /// turn; that equals converting the whole transcript whenever the output
    /// holds no `mcp_call` (the case it is used for).
    #[test]
    fn a_shared_head_and_the_new_output_make_the_whole_transcript() {
        let head = items(json!([
            {"type": "message", "role": "user", "content": "hi"},
            {"type": "mcp_call", "id": "mcp_1", "server_label": "calc", "name": "add",
             "arguments": "{}", "status": "in_progress"},
            {"type": "mcp_list_tools", "id": "mcpl_1", "server_label": "calc", "tools": []},
            {"type": "mcp_call", "id": "mcp_1", "server_label": "calc", "name": "add",
             "arguments": "{}", "status": "completed", "output": "5"},
        ]));
        let output = items(json!([
            {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": "ok"},
            {"type": "message", "role": "assistant", "content": "done"},
        ]));
        let whole = upstream_transcript(head.iter().chain(&output));
        let shared: Arc<[Item]> = upstream_transcript(head.iter()).into();
        let turn = Transcript::new(shared.clone(), upstream_transcript(output.iter()));
        assert_eq!(turn.to_vec(), whole);
        assert_eq!(turn.len(), whole.len());
        // A second turn reuses the same head allocation.
        let next = Transcript::new(shared.clone(), Vec::new());
        assert_eq!(Arc::strong_count(&shared), 3);
        assert_eq!(next.iter().count(), shared.len());
    }

    #[test]
    fn a_compaction_replaces_what_came_before_it_but_the_users_messages() {
        let sealed = crate::compaction::seal("the summary");
        let chain = items(json!([
            {"type": "message", "role": "user", "content": "u1"},
            {"type": "message", "role": "assistant", "content": "long answer"},
            {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": "big output"},
            {"type": "message", "role": "user", "content": "u2"},
            {"type": "compaction", "encrypted_content": sealed},
            {"type": "message", "role": "assistant", "content": "after"},
        ]));
        let texts: Vec<String> = upstream_transcript(chain.iter())
            .iter()
            .map(|i| match i {
                Item::Message(m) => match &m.content {
                    MessageContent::Text(t) => t.clone(),
                    MessageContent::Parts(_) => "parts".to_owned(),
                },
                other => format!("{other:?}"),
            })
            .collect();
        assert_eq!(texts.len(), 4, "{texts:?}");
        assert_eq!(texts[0], "u1");
        assert!(texts[1].ends_with("the summary"), "{texts:?}");
        // The turn being answered when the compaction happened stays last.
        assert_eq!(texts[2], "u2");
        assert_eq!(texts[3], "after");
    }
}
