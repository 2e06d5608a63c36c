//! `ModelRequest` -> Messages API request body.
//!
//! Messages alternate between `user` and `assistant`; items are regrouped:
//! function calls become `tool_use` blocks of the assistant turn, their
//! outputs `tool_result` blocks of the next user turn, and system or
//! developer messages join the top-level `system` text.

use serde_json::{json, Map, Value};
use windlass_engine::{ModelRequest, ModelToolChoice, ProviderError};
use windlass_protocol::{
    ContentPart, FunctionCall, FunctionCallOutput, ImagePart, Item, MessageContent, Reasoning,
    ReasoningEffort, Role, TextFormat, ToolOutput, Verbosity,
};

use super::wire::{Block, ImageSource, Message, Metadata, Request, Thinking, Tool};
use crate::encode::unsupported;
use windlass_protocol::anthropic::REDACTED_THINKING_PREFIX as REDACTED_PREFIX;

/// `max_tokens` is required by the API; used when the request sets none.
pub(super) const DEFAULT_MAX_TOKENS: u64 = 8192;
/// The smallest thinking budget the API accepts.
const MIN_THINKING_BUDGET: u64 = 1024;

/// The fields `POST /messages/count_tokens` takes (it refuses others).
const COUNT_FIELDS: [&str; 6] = [
    "model",
    "system",
    "messages",
    "tools",
    "tool_choice",
    "thinking",
];

/// The JSON body of one turn.
pub fn encode_messages_request(req: &ModelRequest) -> Result<Vec<u8>, ProviderError> {
    let value = request(req)?;
    serde_json::to_vec(&value).map_err(not_serializable)
}

/// The body of `POST /messages/count_tokens` counting what
/// [`encode_messages_request`] would send.
pub fn encode_count(req: &ModelRequest) -> Result<Vec<u8>, ProviderError> {
    let mut value = serde_json::to_value(request(req)?).map_err(not_serializable)?;
    if let Value::Object(fields) = &mut value {
        fields.retain(|k, _| COUNT_FIELDS.contains(&k.as_str()));
    }
    serde_json::to_vec(&value).map_err(not_serializable)
}

fn not_serializable(e: serde_json::Error) -> ProviderError {
    ProviderError::Unsupported {
        message: format!("the request cannot be serialized: {e}"),
        param: None,
    }
}

fn request(req: &ModelRequest) -> Result<Request<'_>, ProviderError> {
    refuse_unsupported(req)?;
    let mut system: Vec<String> = req.instructions.iter().cloned().collect();
    let mut messages: Vec<Message<'_>> = Vec::new();
    for item in &req.transcript {
        encode_item(item, &mut system, &mut messages)?;
    }
    let (max_tokens, thinking) = budget(req.max_output_tokens, req.reasoning_effort);
    let body = Request {
        model: &req.model,
        max_tokens,
        system: (!system.is_empty()).then(|| system.join("\n\n")),
        messages,
        tools: req
            .tools
            .iter()
            .map(|t| Tool {
                name: &t.name,
                description: t.description.as_deref(),
                input_schema: &t.parameters,
            })
            .collect(),
        tool_choice: (!req.tools.is_empty())
            .then(|| tool_choice(&req.tool_choice, req.parallel_tool_calls)),
        temperature: req.temperature,
        top_p: req.top_p,
        top_k: req.top_k,
        stop_sequences: &req.stop,
        thinking,
        metadata: req
            .safety_identifier
            .as_deref()
            .or(req.user.as_deref())
            .map(|user_id| Metadata { user_id }),
        service_tier: req.service_tier.as_deref().map(service_tier),
        stream: req.stream,
    };
    Ok(body)
}

/// Refuses, by name, what the Messages API cannot do and whose absence
/// would change the answer.
fn refuse_unsupported(req: &ModelRequest) -> Result<(), ProviderError> {
    if let Some(TextFormat::JsonObject(_) | TextFormat::JsonSchema(_)) = &req.text_format {
        return Err(unsupported(
            "an Anthropic upstream does not take `text.format` JSON output",
            "text.format",
        ));
    }
    if req.logprobs {
        return Err(unsupported(
            "an Anthropic upstream gives no log probabilities (`message.output_text.logprobs`)",
            "include",
        ));
    }
    if req.top_logprobs.is_some_and(|n| n > 0) {
        return Err(unsupported(
            "an Anthropic upstream gives no log probabilities (`top_logprobs`)",
            "top_logprobs",
        ));
    }
    for (value, param) in [
        (req.presence_penalty, "presence_penalty"),
        (req.frequency_penalty, "frequency_penalty"),
    ] {
        if value.is_some_and(|v| v != 0.0) {
            return Err(unsupported(
                format!("an Anthropic upstream has no `{param}`"),
                param,
            ));
        }
    }
    // `medium` is OpenAI's default: asking for it changes nothing.
    if matches!(req.verbosity, Some(Verbosity::Low | Verbosity::High)) {
        return Err(unsupported(
            "an Anthropic upstream has no verbosity setting (`text.verbosity` low or high)",
            "text.verbosity",
        ));
    }
    Ok(())
}

/// OpenAI's tier names as Anthropic's: `auto` may use priority capacity,
/// `standard_only` never does. Flex (slower, cheaper) has no Anthropic
/// counterpart: it runs at the standard tier, with the same answer.
fn service_tier(tier: &str) -> &'static str {
    match tier {
        "auto" | "priority" | "scale" => "auto",
        _ => "standard_only",
    }
}

/// `max_tokens` and the thinking budget for a reasoning effort. Without
/// a client limit the budget comes on top of the default answer length;
/// with one, thinking gets at most half of it (or none if that is below
/// the API's minimum).
fn budget(max_output: Option<u64>, effort: Option<ReasoningEffort>) -> (u64, Option<Thinking>) {
    let wanted = match effort {
        None | Some(ReasoningEffort::None) => 0,
        Some(ReasoningEffort::Minimal | ReasoningEffort::Low) => MIN_THINKING_BUDGET,
        Some(ReasoningEffort::Medium) => 4096,
        Some(ReasoningEffort::High) => 16_384,
        Some(ReasoningEffort::Xhigh) => 32_768,
    };
    let (max_tokens, budget) = match max_output {
        Some(max) => (max, wanted.min(max / 2)),
        None => (DEFAULT_MAX_TOKENS + wanted, wanted),
    };
    let thinking = (budget >= MIN_THINKING_BUDGET).then_some(Thinking {
        kind: "enabled",
        budget_tokens: budget,
    });
    (max_tokens, thinking)
}

fn encode_item<'a>(
    item: &'a Item,
    system: &mut Vec<String>,
    messages: &mut Vec<Message<'a>>,
) -> Result<(), ProviderError> {
    match item {
        Item::Message(m) => match m.role {
            Role::System | Role::Developer => system.push(plain_text(&m.content)),
            Role::User => push(messages, "user", content_blocks(&m.content)?),
            Role::Assistant => push(messages, "assistant", content_blocks(&m.content)?),
        },
        Item::FunctionCall(call) => push(messages, "assistant", vec![tool_use(call)]),
        Item::FunctionCallOutput(out) => push(messages, "user", vec![tool_result(out)?]),
        Item::Reasoning(r) => {
            if let Some(block) = thinking_block(r) {
                push(messages, "assistant", vec![block]);
            }
        }
        other => {
            return Err(unsupported(
                format!(
                    "items of type `{}` cannot be sent to an Anthropic upstream",
                    other.type_name()
                ),
                "input",
            ))
        }
    }
    Ok(())
}

/// Appends to the last message when it has the same role (parallel tool
/// results must share one user turn), else starts a new one.
fn push<'a>(messages: &mut Vec<Message<'a>>, role: &'static str, blocks: Vec<Block<'a>>) {
    if blocks.is_empty() {
        return;
    }
    match messages.last_mut() {
        Some(last) if last.role == role => last.content.extend(blocks),
        _ => messages.push(Message {
            role,
            content: blocks,
        }),
    }
}

fn plain_text(content: &MessageContent) -> String {
    match content {
        MessageContent::Text(t) => t.clone(),
        MessageContent::Parts(parts) => parts.iter().filter_map(ContentPart::text).collect(),
    }
}

fn content_blocks(content: &MessageContent) -> Result<Vec<Block<'_>>, ProviderError> {
    match content {
        MessageContent::Text(t) => Ok(text_block(t).into_iter().collect()),
        MessageContent::Parts(parts) => {
            let mut blocks = Vec::with_capacity(parts.len());
            for part in parts {
                blocks.extend(part_block(part)?);
            }
            Ok(blocks)
        }
    }
}

/// The API refuses empty text blocks.
fn text_block(text: &str) -> Option<Block<'_>> {
    (!text.is_empty()).then_some(Block::Text { text })
}

fn part_block(part: &ContentPart) -> Result<Option<Block<'_>>, ProviderError> {
    Ok(match part {
        ContentPart::InputImage(image) => Some(image_block(image)?),
        ContentPart::InputFile(_) | ContentPart::InputVideo(_) => {
            return Err(unsupported(
                "an Anthropic upstream takes text and images, not files or video",
                "input",
            ))
        }
        other => other.text().and_then(text_block),
    })
}

fn image_block(image: &ImagePart) -> Result<Block<'_>, ProviderError> {
    let Some(url) = image.image_url.as_deref() else {
        return Err(unsupported(
            "an Anthropic upstream needs images as `image_url` (a URL or a data URL), not file ids",
            "input",
        ));
    };
    let source = match url.strip_prefix("data:") {
        Some(rest) => {
            let (media_type, data) = rest
                .split_once(";base64,")
                .ok_or_else(|| unsupported("an image data URL must be base64-encoded", "input"))?;
            ImageSource::Base64 { media_type, data }
        }
        None => ImageSource::Url { url },
    };
    Ok(Block::Image { source })
}

fn tool_use(call: &FunctionCall) -> Block<'_> {
    // The model's arguments are normally a JSON object; anything else is
    // passed as an empty one (the API requires an object).
    let input = match serde_json::from_str::<Value>(&call.arguments) {
        Ok(v @ Value::Object(_)) => v,
        _ => Value::Object(Map::new()),
    };
    Block::ToolUse {
        id: &call.call_id,
        name: &call.name,
        input,
    }
}

fn tool_result(out: &FunctionCallOutput) -> Result<Block<'_>, ProviderError> {
    let content = match &out.output {
        ToolOutput::Text(t) => text_block(t).into_iter().collect(),
        ToolOutput::Parts(parts) => {
            let mut blocks = Vec::with_capacity(parts.len());
            for part in parts {
                blocks.extend(part_block(part)?);
            }
            blocks
        }
    };
    Ok(Block::ToolResult {
        tool_use_id: &out.call_id,
        content,
        is_error: out.is_error.filter(|e| *e),
    })
}

/// Thinking replayed with its signature; without one the API would refuse
/// it, so it is left out.
fn thinking_block(r: &Reasoning) -> Option<Block<'_>> {
    let sealed = r.encrypted_content.as_deref()?;
    if let Some(data) = sealed.strip_prefix(REDACTED_PREFIX) {
        return Some(Block::RedactedThinking { data });
    }
    // The thinking text is in `content`, or in `summary` when the client
    // asked for reasoning summaries; the signature covers it either way.
    let content = r.content.iter().flatten();
    let thinking = if content.clone().next().is_some() {
        content.filter_map(ContentPart::text).collect()
    } else {
        r.summary.iter().filter_map(ContentPart::text).collect()
    };
    Some(Block::Thinking {
        thinking,
        signature: sealed,
    })
}

fn tool_choice(choice: &ModelToolChoice, parallel: Option<bool>) -> Value {
    let mut v = match choice {
        ModelToolChoice::Auto => json!({"type": "auto"}),
        ModelToolChoice::None => json!({"type": "none"}),
        ModelToolChoice::Required => json!({"type": "any"}),
        ModelToolChoice::Function(name) => json!({"type": "tool", "name": name}),
    };
    if parallel == Some(false) && *choice != ModelToolChoice::None {
        v["disable_parallel_tool_use"] = Value::Bool(true);
    }
    v
}
