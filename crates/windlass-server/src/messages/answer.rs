//! The engine's response -> a Messages `Message`: output items as content
//! blocks, the stop reason, usage in Anthropic's terms.

use serde_json::{Map, Value};
use windlass_protocol::anthropic::{
    AssistantRole, Message, MessageType, MessageUsage, OutputBlock, StopReason, TextBlock,
    REDACTED_THINKING_PREFIX,
};
use windlass_protocol::{
    Compaction, ContentPart, FunctionCall, Item, McpCall, MessageContent, Reasoning,
    ResponseResource, ResponseStatus, Usage,
};

/// How the client asked to see the upstream's reasoning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Thinking {
    /// Thinking was not enabled: no thinking blocks.
    Hidden,
    /// Thinking blocks with their text and signature.
    Shown,
    /// `thinking.display: "omitted"`: thinking blocks with empty text and
    /// the signature (so the client can send them back), as Anthropic does.
    Omitted,
}

impl Thinking {
    pub(super) fn blocks(self) -> bool {
        self != Thinking::Hidden
    }
}

/// The whole answer (`stream: false`).
pub(crate) fn message(r: &ResponseResource, thinking: Thinking) -> Message {
    let mut content = Vec::new();
    for item in &r.output {
        content.extend(blocks(item, thinking));
    }
    Message {
        content,
        stop_reason: Some(stop_reason(r)),
        stop_sequence: stop_sequence(r),
        usage: usage(r.usage.as_ref()),
        ..started(r)
    }
}

/// The message as `message_start` shows it: no content, no stop reason.
pub(crate) fn started(r: &ResponseResource) -> Message {
    Message {
        // The response id, so an operator who stores Messages responses
        // finds its trace under the id the client saw.
        id: r.id.clone(),
        kind: MessageType::Message,
        role: AssistantRole::Assistant,
        content: Vec::new(),
        model: r.model.clone(),
        stop_reason: None,
        stop_sequence: None,
        usage: MessageUsage {
            input_tokens: 0,
            output_tokens: 0,
            cache_creation_input_tokens: None,
            cache_read_input_tokens: None,
        },
    }
}

/// The content blocks of one output item (none for items a Messages
/// client has no block for: MCP listings, approval requests).
pub(crate) fn blocks(item: &Item, thinking: Thinking) -> Vec<OutputBlock> {
    match item {
        Item::Message(m) => match &m.content {
            MessageContent::Text(t) => vec![text(t.clone())],
            MessageContent::Parts(parts) => parts
                .iter()
                .filter_map(|p| match p {
                    ContentPart::OutputText(t) => Some(text(t.text.clone())),
                    ContentPart::Refusal(r) => Some(text(r.refusal.clone())),
                    _ => None,
                })
                .collect(),
        },
        Item::Reasoning(r) if thinking.blocks() => vec![thinking_block(r, thinking)],
        Item::FunctionCall(c) => vec![tool_use(c)],
        Item::McpCall(c) => vec![mcp_use(c), mcp_result(c)],
        Item::WebSearchCall(_) | Item::CodeInterpreterCall(_) => {
            super::server_blocks::blocks(item).map_or_else(Vec::new, Vec::from)
        }
        Item::Compaction(c) => vec![compaction(c)],
        _ => Vec::new(),
    }
}

/// A compaction item as Anthropic's `compaction` block: the summary as
/// `content`, the sealed form to send back as `encrypted_content`.
pub(crate) fn compaction(c: &Compaction) -> OutputBlock {
    OutputBlock::Compaction {
        content: windlass_engine::compaction::open(&c.encrypted_content),
        encrypted_content: Some(c.encrypted_content.clone()),
    }
}

fn text(text: String) -> OutputBlock {
    OutputBlock::Text {
        text,
        citations: None,
    }
}

pub(crate) fn thinking_block(r: &Reasoning, thinking: Thinking) -> OutputBlock {
    let sealed = r.encrypted_content.clone().unwrap_or_default();
    if let Some(data) = sealed.strip_prefix(REDACTED_THINKING_PREFIX) {
        return OutputBlock::RedactedThinking {
            data: data.to_owned(),
        };
    }
    OutputBlock::Thinking {
        thinking: match thinking {
            Thinking::Omitted => String::new(),
            _ => reasoning_text(r),
        },
        signature: sealed,
    }
}

/// The reasoning's text: its content, else its summary.
pub(crate) fn reasoning_text(r: &Reasoning) -> String {
    let content = r.content.iter().flatten();
    if content.clone().next().is_some() {
        content.filter_map(ContentPart::text).collect()
    } else {
        r.summary.iter().filter_map(ContentPart::text).collect()
    }
}

pub(crate) fn tool_use(c: &FunctionCall) -> OutputBlock {
    OutputBlock::ToolUse {
        id: c.call_id.clone(),
        name: c.name.clone(),
        input: input(&c.arguments),
    }
}

pub(crate) fn mcp_use(c: &McpCall) -> OutputBlock {
    OutputBlock::McpToolUse {
        id: c.id.clone(),
        name: c.name.clone(),
        server_name: c.server_label.clone(),
        input: input(&c.arguments),
    }
}

pub(crate) fn mcp_result(c: &McpCall) -> OutputBlock {
    let (is_error, text) = match (&c.error, &c.output) {
        (Some(e), _) => (true, e.text()),
        (None, Some(out)) => (false, out.clone()),
        (None, None) => (false, String::new()),
    };
    OutputBlock::McpToolResult {
        tool_use_id: c.id.clone(),
        is_error,
        content: vec![TextBlock::new(text)],
    }
}

/// Tool input is a JSON object; arguments that are not one become `{}`.
fn input(arguments: &str) -> Value {
    match serde_json::from_str::<Value>(arguments) {
        Ok(v @ Value::Object(_)) => v,
        _ => Value::Object(Map::new()),
    }
}

/// Why the message ended, from how the response ended.
pub(crate) fn stop_reason(r: &ResponseResource) -> StopReason {
    let reason = r.incomplete_details.as_ref().map(|d| d.reason.as_str());
    match (r.status, reason) {
        (ResponseStatus::Incomplete, Some("max_output_tokens")) => StopReason::MaxTokens,
        (ResponseStatus::Incomplete, Some("content_filter")) => StopReason::Refusal,
        // The loop's own limits: the client may send the turn back to go on.
        (_, Some("max_turns" | "max_tool_calls")) => StopReason::PauseTurn,
        _ if r.output.iter().any(|i| matches!(i, Item::FunctionCall(_))) => StopReason::ToolUse,
        _ if refused(r) => StopReason::Refusal,
        _ if r.stop_sequence.is_some() => StopReason::StopSequence,
        _ => StopReason::EndTurn,
    }
}

/// The stop sequence that ended the text, when one did.
pub(crate) fn stop_sequence(r: &ResponseResource) -> Option<String> {
    match stop_reason(r) {
        StopReason::StopSequence => r.stop_sequence.clone(),
        _ => None,
    }
}

fn refused(r: &ResponseResource) -> bool {
    r.output.iter().any(|i| match i {
        Item::Message(m) => matches!(&m.content, MessageContent::Parts(p)
            if p.iter().any(|p| matches!(p, ContentPart::Refusal(_)))),
        _ => false,
    })
}

/// Anthropic counts cache reads apart from `input_tokens`; OpenAI's
/// `input_tokens` includes them.
pub(crate) fn usage(u: Option<&Usage>) -> MessageUsage {
    let Some(u) = u else {
        return MessageUsage::default();
    };
    let cached = u.input_tokens_details.cached_tokens;
    MessageUsage {
        input_tokens: u.input_tokens.saturating_sub(cached),
        output_tokens: u.output_tokens,
        cache_creation_input_tokens: Some(0),
        cache_read_input_tokens: Some(cached),
    }
}
