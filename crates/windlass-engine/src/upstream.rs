//! The boundary between the canonical transcript and what the upstream sees:
//! only messages, function calls, their outputs and reasoning go up.

use std::collections::{HashMap, HashSet};

use windlass_protocol::{
    FunctionCall, FunctionCallOutput, Item, ItemStatus, McpCall, Message, MessageContent, Role,
    ToolOutput,
};

use crate::config::VERIFICATION_PROMPT;

use crate::ports::provider::{ModelRequest, ModelToolChoice};
use crate::prepare::PreparedRun;
use crate::tooling::mcp_tool_name;

/// The completion check's prompt, as the model sees it (it is not part of
/// the response's output).
fn verification_prompt() -> Item {
    Item::Message(Message {
        id: None,
        role: Role::System,
        content: MessageContent::Text(VERIFICATION_PROMPT.to_owned()),
        status: None,
        phase: None,
    })
}

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
        | Item::CustomToolCallOutput(_) => out.extend(crate::client_shapes::upstream_item(item)),
        Item::Compaction(c) => out.extend(crate::compaction::summary_message(c)),
        Item::McpCall(c) => {
            out.push(Item::FunctionCall(FunctionCall {
                id: None,
                call_id: c.id.clone(),
                name: mcp_tool_name(&c.server_label, &c.name),
                arguments: c.arguments.clone(),
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

/// The transcript as the upstream sees it. An `mcp_call` paused in a parent
/// response is stored again, finished, by the continuation that ran it; the
/// latest version stands in at the first position and later ones are skipped.
pub(crate) fn upstream_transcript<'a>(items: impl Iterator<Item = &'a Item> + Clone) -> Vec<Item> {
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

/// The upstream request for the next model turn.
/// `verify_at`: where the completion check's prompt goes in `output`, once sent.
pub(crate) fn model_request(
    run: &PreparedRun,
    output: &[Item],
    turn: u32,
    stream: bool,
    verify_at: Option<usize>,
) -> ModelRequest {
    let transcript = match verify_at.filter(|&at| at <= output.len()) {
        None => upstream_transcript(run.history.iter().chain(&run.input).chain(output)),
        Some(at) => {
            let prompt = verification_prompt();
            upstream_transcript(
                run.history
                    .iter()
                    .chain(&run.input)
                    .chain(&output[..at])
                    .chain(std::iter::once(&prompt))
                    .chain(&output[at..]),
            )
        }
    };
    let req = &run.request;
    let tools = run.tools.model_tools();
    // A forced or required choice applies to the first turn only, so the loop can end.
    let tool_choice = if turn == 0 || run.first_choice == ModelToolChoice::None {
        run.first_choice.clone()
    } else {
        ModelToolChoice::Auto
    };
    ModelRequest {
        model: run.response.model.clone(),
        instructions: req.instructions.clone(),
        transcript,
        tools,
        tool_choice,
        parallel_tool_calls: req.parallel_tool_calls,
        temperature: req.temperature,
        top_p: req.top_p,
        presence_penalty: req.presence_penalty,
        frequency_penalty: req.frequency_penalty,
        max_output_tokens: req.max_output_tokens,
        top_logprobs: req.top_logprobs,
        text_format: req.text.as_ref().and_then(|t| t.format.clone()),
        reasoning_effort: req.reasoning.as_ref().and_then(|r| r.effort),
        user: req.safety_identifier.clone().or_else(|| req.user.clone()),
        stream,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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

    #[test]
    fn qualified_names_fit_what_models_accept() {
        assert_eq!(mcp_tool_name("calc", "add"), "calc__add");
        assert_eq!(mcp_tool_name("fs", "read.file/v2"), "fs__read_file_v2");
        let long = mcp_tool_name("server", &"x".repeat(100));
        assert_eq!(long.len(), 64);
        assert_ne!(long, mcp_tool_name("server", &"x".repeat(101)));
    }
}
