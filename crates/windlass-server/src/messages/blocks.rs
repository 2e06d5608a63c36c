//! Messages content blocks -> the engine's items: text, image and document
//! blocks become message content, `tool_use` a `function_call`,
//! `tool_result` a `function_call_output` (with `is_error`), thinking
//! blocks reasoning items carrying their signature, MCP calls a replay the
//! upstream can read (a function call and its output), and server tool
//! uses with their results the hosted items they were (`server_blocks.rs`). Checks
//! Anthropic's pairing of tool uses and results, naming the field.

use std::collections::HashSet;

use serde_json::Value;
use windlass_protocol::anthropic::{
    InputBlock, InputContent, InputMessage, MediaSource, MessageRole, ToolResultContent,
    REDACTED_THINKING_PREFIX,
};
use windlass_protocol::{
    Compaction, ContentPart, FilePart, FunctionCall, FunctionCallOutput, ImagePart, Item, Message,
    MessageContent, Reasoning, Role, TextPart, ToolOutput,
};

use super::server_blocks::{code_item, hosted_or_refuse, take_use, web_search_item, PendingUse};
use crate::error::ApiError;

/// A 400 whose message starts with the field's path, as Anthropic's do.
pub(crate) fn invalid(path: &str, why: impl std::fmt::Display) -> ApiError {
    ApiError::invalid(format!("{path}: {why}")).param(path.to_owned())
}

/// The items of `messages`, in order.
pub(crate) fn messages_to_items(messages: Vec<InputMessage>) -> Result<Vec<Item>, ApiError> {
    if messages.is_empty() {
        return Err(invalid("messages", "at least one message is required"));
    }
    let mut items = Vec::new();
    // Tool uses of the previous assistant message, still owed a result.
    let mut owed: Vec<String> = Vec::new();
    let last = messages.len() - 1;
    for (i, message) in messages.into_iter().enumerate() {
        let path = format!("messages.{i}");
        let blocks = parse_blocks(&path, message.content)?;
        match message.role {
            MessageRole::User => {
                user_items(&path, blocks, &mut owed, &mut items)?;
            }
            MessageRole::System => items.push(system_message(&path, blocks)?),
            MessageRole::Assistant => {
                if !owed.is_empty() {
                    return Err(unanswered(i.saturating_sub(1), &owed));
                }
                owed = assistant_items(&path, blocks, &mut items)?;
                if i == last {
                    owed.clear();
                }
            }
        }
    }
    if !owed.is_empty() {
        return Err(unanswered(last, &owed));
    }
    Ok(items)
}

fn unanswered(at: usize, ids: &[String]) -> ApiError {
    invalid(
        &format!("messages.{at}"),
        format!(
            "`tool_use` ids were found without `tool_result` blocks immediately after: {}. \
             Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
            ids.join(", ")
        ),
    )
}

/// A message's content as typed blocks (a string is one text block).
fn parse_blocks(path: &str, content: InputContent) -> Result<Vec<InputBlock>, ApiError> {
    match content {
        InputContent::Text(text) => Ok(vec![InputBlock::Text {
            text,
            cache_control: None,
            citations: None,
        }]),
        InputContent::Blocks(raw) => raw
            .into_iter()
            .enumerate()
            .map(|(j, v)| parse_block(&format!("{path}.content.{j}"), v))
            .collect(),
    }
}

fn parse_block(path: &str, raw: Value) -> Result<InputBlock, ApiError> {
    let kind = raw.get("type").and_then(Value::as_str).map(str::to_owned);
    match kind.as_deref() {
        None => Err(invalid(&format!("{path}.type"), "Field required")),
        Some(k) if !InputBlock::TYPES.contains(&k) => Err(invalid(
            &format!("{path}.type"),
            format!(
                "Input tag '{k}' found using 'type' does not match any of the expected tags: {}",
                InputBlock::TYPES.join(", ")
            ),
        )),
        Some(_) => serde_json::from_value(raw).map_err(|e| invalid(path, e)),
    }
}

fn user_items(
    path: &str,
    blocks: Vec<InputBlock>,
    owed: &mut Vec<String>,
    items: &mut Vec<Item>,
) -> Result<(), ApiError> {
    let mut parts = Vec::new();
    let expected: HashSet<String> = owed.drain(..).collect();
    let mut answered = HashSet::new();
    for (j, block) in blocks.into_iter().enumerate() {
        let at = format!("{path}.content.{j}");
        match block {
            InputBlock::ToolResult {
                tool_use_id,
                content,
                is_error,
                ..
            } => {
                if !expected.contains(&tool_use_id) {
                    return Err(invalid(
                        &at,
                        format!(
                            "unexpected `tool_use_id` found in `tool_result` blocks: {tool_use_id}. \
                             Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
                        ),
                    ));
                }
                answered.insert(tool_use_id.clone());
                let output = tool_output(&at, content)?;
                items.push(Item::FunctionCallOutput(FunctionCallOutput {
                    id: None,
                    call_id: tool_use_id,
                    output,
                    status: None,
                    is_error: is_error.filter(|e| *e),
                }));
            }
            other => parts.extend(user_part(&at, other)?),
        }
    }
    let mut missing: Vec<String> = expected.difference(&answered).cloned().collect();
    if !missing.is_empty() {
        missing.sort();
        let before = path
            .rsplit('.')
            .next()
            .and_then(|n| n.parse::<usize>().ok())
            .map_or(0, |n| n.saturating_sub(1));
        return Err(unanswered(before, &missing));
    }
    if !parts.is_empty() {
        items.push(message(Role::User, parts));
    }
    Ok(())
}

/// The content part of a block a user message may carry besides results.
fn user_part(at: &str, block: InputBlock) -> Result<Option<ContentPart>, ApiError> {
    Ok(match block {
        InputBlock::Text { text, .. } => Some(ContentPart::InputText(TextPart { text })),
        InputBlock::Image { source, .. } => Some(image(at, source)?),
        InputBlock::Document { source, title, .. } => Some(document(at, source, title)?),
        other => {
            return Err(invalid(
                &format!("{at}.type"),
                format!(
                    "`{}` blocks are not allowed in a user message",
                    block_name(&other)
                ),
            ))
        }
    })
}

/// Items of an assistant message; returns the ids of its client tool uses.
fn assistant_items(
    path: &str,
    blocks: Vec<InputBlock>,
    items: &mut Vec<Item>,
) -> Result<Vec<String>, ApiError> {
    let mut parts = Vec::new();
    let mut uses = Vec::new();
    // Server tool uses whose result block has not come yet.
    let mut server_uses: Vec<PendingUse> = Vec::new();
    let flush = |parts: &mut Vec<ContentPart>, items: &mut Vec<Item>| {
        if !parts.is_empty() {
            items.push(message(Role::Assistant, std::mem::take(parts)));
        }
    };
    for (j, block) in blocks.into_iter().enumerate() {
        let at = format!("{path}.content.{j}");
        match block {
            InputBlock::Text { text, .. } => parts.push(ContentPart::output_text(text)),
            InputBlock::ToolUse {
                id, name, input, ..
            } => {
                flush(&mut parts, items);
                items.push(call(id.clone(), name, &input));
                uses.push(id);
            }
            InputBlock::ServerToolUse { id, name, input } => {
                flush(&mut parts, items);
                server_uses.push(PendingUse { id, name, input });
            }
            InputBlock::WebSearchToolResult {
                tool_use_id,
                content,
                ..
            } => {
                let used = take_use(&at, &mut server_uses, &tool_use_id)?;
                let item = web_search_item(&used, content);
                items.push(hosted_or_refuse(&at, item, used)?);
            }
            InputBlock::CodeExecutionToolResult {
                tool_use_id,
                content,
                ..
            } => {
                let used = take_use(&at, &mut server_uses, &tool_use_id)?;
                let item = code_item(&used, content);
                items.push(hosted_or_refuse(&at, item, used)?);
            }
            InputBlock::McpToolUse {
                id, name, input, ..
            } => {
                flush(&mut parts, items);
                items.push(call(id, name, &input));
            }
            InputBlock::Compaction {
                content,
                encrypted_content,
                ..
            } => {
                flush(&mut parts, items);
                // A failed compaction (no content) is a no-op, as Anthropic
                // treats it; a summary without its sealed form is sealed here.
                let sealed = encrypted_content
                    .or_else(|| content.as_deref().map(windlass_engine::compaction::seal));
                if let Some(encrypted_content) = sealed {
                    items.push(Item::Compaction(Compaction {
                        id: None,
                        encrypted_content,
                        created_by: None,
                    }));
                }
            }
            InputBlock::McpToolResult {
                tool_use_id,
                is_error,
                content,
            } => {
                flush(&mut parts, items);
                items.push(Item::FunctionCallOutput(FunctionCallOutput {
                    id: None,
                    call_id: tool_use_id,
                    output: tool_output(&at, Some(content))?,
                    status: None,
                    is_error: is_error.filter(|e| *e),
                }));
            }
            InputBlock::Thinking {
                thinking,
                signature,
            } => {
                flush(&mut parts, items);
                items.push(reasoning(Some(thinking), signature));
            }
            InputBlock::RedactedThinking { data } => {
                flush(&mut parts, items);
                items.push(reasoning(None, format!("{REDACTED_THINKING_PREFIX}{data}")));
            }
            other => {
                return Err(invalid(
                    &format!("{at}.type"),
                    format!(
                        "`{}` blocks are not allowed in an assistant message",
                        block_name(&other)
                    ),
                ))
            }
        }
    }
    flush(&mut parts, items);
    // A server tool use without its result: what the upstream saw of it
    // is the call alone (as before the result blocks were read).
    for used in server_uses {
        items.push(call(used.id, used.name, &used.input));
    }
    Ok(uses)
}

/// A system message in the conversation: its text, as a system item where
/// it stands (the upstream adapters place it as their wire allows).
fn system_message(path: &str, blocks: Vec<InputBlock>) -> Result<Item, ApiError> {
    let mut parts = Vec::with_capacity(blocks.len());
    for (j, block) in blocks.into_iter().enumerate() {
        match block {
            InputBlock::Text { text, .. } => parts.push(ContentPart::InputText(TextPart { text })),
            other => {
                return Err(invalid(
                    &format!("{path}.content.{j}.type"),
                    format!(
                        "`{}` blocks are not allowed in a system message",
                        block_name(&other)
                    ),
                ))
            }
        }
    }
    Ok(message(Role::System, parts))
}

fn block_name(block: &InputBlock) -> &'static str {
    match block {
        InputBlock::Text { .. } => "text",
        InputBlock::Image { .. } => "image",
        InputBlock::Document { .. } => "document",
        InputBlock::ToolUse { .. } => "tool_use",
        InputBlock::ToolResult { .. } => "tool_result",
        InputBlock::Thinking { .. } => "thinking",
        InputBlock::RedactedThinking { .. } => "redacted_thinking",
        InputBlock::ServerToolUse { .. } => "server_tool_use",
        InputBlock::McpToolUse { .. } => "mcp_tool_use",
        InputBlock::McpToolResult { .. } => "mcp_tool_result",
        InputBlock::Compaction { .. } => "compaction",
        InputBlock::WebSearchToolResult { .. } => "web_search_tool_result",
        InputBlock::CodeExecutionToolResult { .. } => "code_execution_tool_result",
    }
}

fn message(role: Role, parts: Vec<ContentPart>) -> Item {
    Item::Message(Message {
        id: None,
        role,
        content: MessageContent::Parts(parts),
        status: None,
        phase: None,
    })
}

fn call(call_id: String, name: String, input: &Value) -> Item {
    Item::FunctionCall(FunctionCall {
        id: None,
        call_id,
        name,
        arguments: input.to_string(),
        namespace: None,
        status: None,
    })
}

/// A thinking block as a reasoning item: its text, and its signature where
/// an Anthropic upstream needs it to accept the block back.
fn reasoning(thinking: Option<String>, sealed: String) -> Item {
    Item::Reasoning(Reasoning {
        id: None,
        summary: Vec::new(),
        content: thinking.map(|text| vec![ContentPart::ReasoningText(TextPart { text })]),
        encrypted_content: (!sealed.is_empty()).then_some(sealed),
        status: None,
    })
}

fn tool_output(at: &str, content: Option<ToolResultContent>) -> Result<ToolOutput, ApiError> {
    match content {
        None => Ok(ToolOutput::Text(String::new())),
        Some(ToolResultContent::Text(t)) => Ok(ToolOutput::Text(t)),
        Some(ToolResultContent::Blocks(raw)) => {
            let mut parts = Vec::with_capacity(raw.len());
            for (k, v) in raw.into_iter().enumerate() {
                let path = format!("{at}.content.{k}");
                let block = parse_block(&path, v)?;
                match user_part(&path, block)? {
                    Some(part) => parts.push(part),
                    None => continue,
                }
            }
            Ok(ToolOutput::Parts(parts))
        }
    }
}

fn image(at: &str, source: MediaSource) -> Result<ContentPart, ApiError> {
    let url =
        match source {
            MediaSource::Base64 { media_type, data } => format!("data:{media_type};base64,{data}"),
            MediaSource::Url { url } => url,
            _ => return Err(invalid(
                &format!("{at}.source.type"),
                "an image source must be `base64` or `url` (Windlass has no Anthropic Files API)",
            )),
        };
    Ok(ContentPart::InputImage(ImagePart {
        image_url: Some(url),
        file_id: None,
        detail: None,
    }))
}

/// A PDF becomes a file part; a plain-text document its text (with its
/// title), which every upstream can read.
fn document(at: &str, source: MediaSource, title: Option<String>) -> Result<ContentPart, ApiError> {
    let file = |file_data, file_url| {
        ContentPart::InputFile(FilePart {
            filename: Some(title.clone().unwrap_or_else(|| "document.pdf".to_owned())),
            file_data,
            file_url,
            file_id: None,
        })
    };
    let titled = |text: String| match &title {
        Some(t) => format!("{t}\n\n{text}"),
        None => text,
    };
    Ok(match source {
        MediaSource::Base64 { media_type, data } => {
            file(Some(format!("data:{media_type};base64,{data}")), None)
        }
        MediaSource::Url { url } => file(None, Some(url)),
        MediaSource::Text { data, .. } => ContentPart::InputText(TextPart { text: titled(data) }),
        MediaSource::Content { content } => {
            let text = match content {
                ToolResultContent::Text(t) => t,
                ToolResultContent::Blocks(blocks) => blocks
                    .iter()
                    .filter_map(|b| b.get("text").and_then(Value::as_str))
                    .collect::<Vec<_>>()
                    .join("\n"),
            };
            ContentPart::InputText(TextPart { text: titled(text) })
        }
        MediaSource::File { .. } => {
            return Err(invalid(
                &format!("{at}.source.type"),
                "`file` sources need Anthropic's Files API, which Windlass does not have",
            ))
        }
    })
}
