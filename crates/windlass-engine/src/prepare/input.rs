//! The request's input items: checked, references resolved, ids assigned,
//! and every `function_call_output` matched to an open call.

use std::collections::HashSet;

use windlass_protocol::ids::{new_id, prefix};
use windlass_protocol::{
    ContentPart, CustomToolCallOutput, FunctionCallOutput, Item, ItemStatus, MessageContent, Role,
    ToolOutput,
};

use crate::error::EngineError;
use crate::ports::agent::store::ResponseStore;
use crate::ports::agent::tools::ToolCall;

/// Resolves `item_reference`s, rejects unknown types, assigns missing ids.
pub(super) async fn canonicalize_input(
    items: Vec<Item>,
    store: &dyn ResponseStore,
    tenant: &str,
) -> Result<Vec<Item>, EngineError> {
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.into_iter().enumerate() {
        let item = match item {
            Item::ItemReference(r) => store.find_item(tenant, &r.id).await?.ok_or_else(|| {
                EngineError::invalid(
                    format!("Item with id '{}' not found.", r.id),
                    Some(format!("input[{i}].id")),
                )
            })?,
            other => other,
        };
        check_item(&item, i)?;
        out.push(with_id(item));
    }
    Ok(out)
}

fn check_item(item: &Item, i: usize) -> Result<(), EngineError> {
    let param = |suffix: &str| Some(format!("input[{i}]{suffix}"));
    match item {
        // Hosted items the loop replays (as a function call and its output).
        Item::FileSearchCall(_) | Item::WebSearchCall(_) | Item::CodeInterpreterCall(_) => Ok(()),
        // OpenAI's other tool items (but the client-executed types' calls
        // and outputs) are not handled by the loop: refused like any
        // unknown type.
        _ if matches!(item, Item::Unknown(_))
            || (item.is_openai_tool_item() && !item.is_client_executed()) =>
        {
            Err(EngineError::invalid_code(
                format!("Input item type '{}' is not supported.", item.type_name()),
                param("").as_deref(),
                "unsupported_item_type",
            ))
        }
        Item::Compaction(c) => match crate::compaction::open(&c.encrypted_content) {
            Some(_) => Ok(()),
            None => Err(EngineError::invalid_code(
                "This compaction item was not made by this gateway's /v1/responses/compact.",
                param(".encrypted_content").as_deref(),
                "invalid_encrypted_content",
            )),
        },
        Item::McpApprovalRequest(_) | Item::McpListTools(_) | Item::McpCall(_) => Ok(()),
        Item::Message(m) => match &m.content {
            MessageContent::Text(_) => Ok(()),
            MessageContent::Parts(parts) => check_parts(parts, &format!("input[{i}].content")),
        },
        Item::FunctionCallOutput(FunctionCallOutput { output, .. })
        | Item::CustomToolCallOutput(CustomToolCallOutput { output, .. }) => match output {
            ToolOutput::Text(_) => Ok(()),
            ToolOutput::Parts(parts) => check_parts(parts, &format!("input[{i}].output")),
        },
        _ => Ok(()),
    }
}

fn normalize(item: &mut Item) {
    match item {
        Item::Message(m) => {
            if let MessageContent::Text(t) = &mut m.content {
                let text = std::mem::take(t);
                let part = match m.role {
                    Role::Assistant => ContentPart::output_text(text),
                    _ => ContentPart::input_text(text),
                };
                m.content = MessageContent::Parts(vec![part]);
            }
            m.status.get_or_insert(ItemStatus::Completed);
        }
        Item::FunctionCall(c) => {
            c.status.get_or_insert(ItemStatus::Completed);
        }
        Item::FunctionCallOutput(o) => {
            o.status.get_or_insert(ItemStatus::Completed);
        }
        Item::CustomToolCall(c) => {
            c.status.get_or_insert(ItemStatus::Completed);
        }
        Item::CustomToolCallOutput(o) => {
            o.status.get_or_insert(ItemStatus::Completed);
        }
        _ => {}
    }
}

fn check_parts(parts: &[ContentPart], path: &str) -> Result<(), EngineError> {
    for (j, p) in parts.iter().enumerate() {
        if let ContentPart::Unknown(_) = p {
            return Err(EngineError::invalid_code(
                format!("Content part type '{}' is not supported.", p.type_name()),
                Some(&format!("{path}[{j}]")),
                "unsupported_content_type",
            ));
        }
    }
    Ok(())
}

/// The stored form of an input item: an id when the client sent none (so it
/// can be listed and referenced), string content as a content part, and a
/// status, as the response item schema requires.
pub fn with_id(mut item: Item) -> Item {
    normalize(&mut item);
    fn fill(slot: &mut Option<String>, p: &str) {
        if slot.is_none() {
            *slot = Some(new_id(p));
        }
    }
    match &mut item {
        Item::Message(m) => fill(&mut m.id, prefix::MESSAGE),
        Item::FunctionCall(c) => fill(&mut c.id, prefix::FUNCTION_CALL),
        Item::FunctionCallOutput(o) => fill(&mut o.id, prefix::FUNCTION_CALL_OUTPUT),
        Item::Reasoning(r) => fill(&mut r.id, prefix::REASONING),
        Item::Compaction(c) => fill(&mut c.id, prefix::COMPACTION),
        Item::McpApprovalResponse(r) => fill(&mut r.id, prefix::MCP_APPROVAL_RESPONSE),
        Item::CustomToolCall(c) => fill(&mut c.id, prefix::CUSTOM_TOOL_CALL),
        Item::CustomToolCallOutput(o) => fill(&mut o.id, prefix::CUSTOM_TOOL_CALL_OUTPUT),
        Item::ShellCall(c) => fill(&mut c.id, prefix::SHELL_CALL),
        Item::ShellCallOutput(o) => fill(&mut o.id, prefix::SHELL_CALL_OUTPUT),
        Item::ApplyPatchCall(c) => fill(&mut c.id, prefix::APPLY_PATCH_CALL),
        Item::ApplyPatchCallOutput(o) => fill(&mut o.id, prefix::APPLY_PATCH_CALL_OUTPUT),
        Item::ComputerCallOutput(o) => fill(&mut o.id, prefix::COMPUTER_CALL_OUTPUT),
        // A `local_shell_call_output`'s `id` names the call it answers.
        _ => {}
    }
    item
}

/// Checks each new `function_call_output` (or `custom_tool_call_output`)
/// answers a call that is still open in the history or earlier in the input;
/// returns the calls still open after the input, in order (a continuation's
/// pending calls), under their model-visible names.
pub(super) fn match_call_outputs(
    history: &[Item],
    input: &[Item],
) -> Result<Vec<ToolCall>, EngineError> {
    let mut open: Vec<ToolCall> = Vec::new();
    let mut answered: HashSet<&str> = HashSet::new();
    for item in history {
        track(item, &mut open, &mut answered);
    }
    for (i, item) in input.iter().enumerate() {
        if let Some(call_id) = crate::client_shapes::outputs::answered_call(item) {
            let is_open = open
                .iter()
                .any(|c| c.call_id == call_id && !answered.contains(c.call_id.as_str()));
            if !is_open {
                return Err(EngineError::invalid_code(
                    format!(
                        "No tool call found for function call output with call_id '{}'.",
                        call_id
                    ),
                    Some(&format!("input[{i}].call_id")),
                    "unknown_call_id",
                ));
            }
        }
        track(item, &mut open, &mut answered);
    }
    Ok(open
        .into_iter()
        .filter(|c| !answered.contains(c.call_id.as_str()))
        .collect())
}

fn track<'a>(item: &'a Item, open: &mut Vec<ToolCall>, answered: &mut HashSet<&'a str>) {
    match crate::client_shapes::outputs::answered_call(item) {
        Some(call_id) => {
            answered.insert(call_id);
        }
        None => open.extend(crate::client_shapes::tool_call(item)),
    }
}
