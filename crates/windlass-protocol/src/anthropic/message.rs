//! The `Message` a Messages request answers with, and its content blocks.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::server_tools::{CodeExecutionToolResultContent, WebSearchToolResultContent};

/// `{"type": "message", "role": "assistant", ...}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror Anthropic's Messages API reference, named as it names them (`kind` is `type`).
#[allow(missing_docs)]
pub struct Message {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: MessageType,
    pub role: AssistantRole,
    pub content: Vec<OutputBlock>,
    pub model: String,
    pub stop_reason: Option<StopReason>,
    pub stop_sequence: Option<String>,
    pub usage: MessageUsage,
}

/// A message's `type`, always `message`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
// Variants (and their fields) mirror the wire values of Anthropic's Messages API reference,
// named as it names them.
#[allow(missing_docs)]
pub enum MessageType {
    #[default]
    Message,
}

/// An answer's `role`, always `assistant`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
// Variants (and their fields) mirror the wire values of Anthropic's Messages API reference,
// named as it names them.
#[allow(missing_docs)]
pub enum AssistantRole {
    #[default]
    Assistant,
}

/// Why the model stopped (`stop_reason`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
// Variants (and their fields) mirror the wire values of Anthropic's Messages API reference,
// named as it names them.
#[allow(missing_docs)]
pub enum StopReason {
    EndTurn,
    MaxTokens,
    StopSequence,
    ToolUse,
    PauseTurn,
    Refusal,
}

/// A message's token `usage`, with the prompt-cache counts when known.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
// Fields mirror Anthropic's Messages API reference, named as it names them.
#[allow(missing_docs)]
pub struct MessageUsage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_creation_input_tokens: Option<u64>,
    pub cache_read_input_tokens: Option<u64>,
}

/// A content block of the answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
// Variants (and their fields) mirror the wire values of Anthropic's Messages API reference,
// named as it names them.
#[allow(missing_docs)]
pub enum OutputBlock {
    Text {
        text: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        citations: Option<Vec<Value>>,
    },
    Thinking {
        thinking: String,
        signature: String,
    },
    RedactedThinking {
        data: String,
    },
    /// A client tool the model called: the turn ends for the client.
    ToolUse {
        id: String,
        name: String,
        input: Value,
    },
    /// A call of one of Anthropic's server tool types, run by Windlass.
    ServerToolUse {
        id: String,
        name: String,
        input: Value,
    },
    /// A call the gateway ran on an MCP server.
    McpToolUse {
        id: String,
        name: String,
        server_name: String,
        input: Value,
    },
    McpToolResult {
        tool_use_id: String,
        is_error: bool,
        content: Vec<TextBlock>,
    },
    /// Earlier context summarised (`context_management` `compact_20260112`):
    /// `content` is the summary, `encrypted_content` what to send back.
    Compaction {
        content: Option<String>,
        encrypted_content: Option<String>,
    },
    /// What a `web_search` server tool call found (run by Windlass's
    /// hosted web search).
    WebSearchToolResult {
        tool_use_id: String,
        content: WebSearchToolResultContent,
    },
    /// What a `code_execution` server tool call printed (run by Windlass's
    /// code interpreter).
    CodeExecutionToolResult {
        tool_use_id: String,
        content: CodeExecutionToolResultContent,
    },
}

/// `{"type": "text", "text": ...}` where only text may stand.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror Anthropic's Messages API reference, named as it names them (`kind` is `type`).
#[allow(missing_docs)]
pub struct TextBlock {
    #[serde(rename = "type")]
    pub kind: TextType,
    pub text: String,
}

impl TextBlock {
    /// A `text` block holding `text`.
    pub fn new(text: impl Into<String>) -> TextBlock {
        TextBlock {
            kind: TextType::Text,
            text: text.into(),
        }
    }
}

/// A text block's `type`, always `text`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
// Variants (and their fields) mirror the wire values of Anthropic's Messages API reference,
// named as it names them.
#[allow(missing_docs)]
pub enum TextType {
    #[default]
    Text,
}
