//! `POST /v1/messages` and `POST /v1/messages/count_tokens` request bodies.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::server_tools::{CodeExecutionToolResultContent, WebSearchToolResultContent};

/// A Messages request. `max_tokens` is optional here because
/// `count_tokens` takes none; the create route requires it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
// Fields mirror Anthropic's Messages API reference, named as it names them.
#[allow(missing_docs)]
pub struct MessagesRequest {
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub messages: Option<Vec<InputMessage>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<SystemPrompt>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_sequences: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_k: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<ToolDefinition>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoice>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<RequestMetadata>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<ThinkingConfig>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_tier: Option<String>,
    /// The MCP connector (beta `mcp-client-2025-04-04`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_servers: Option<Vec<McpServer>>,
    /// Output effort and structured output (`format`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_config: Option<OutputConfig>,
    /// Hints about how Anthropic serves the request, with no counterpart
    /// here; accepted and documented as not used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_control: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diagnostics: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inference_geo: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_profile_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_id: Option<String>,
    /// Features Windlass does not implement on this surface; accepted by the
    /// parser so the surface can refuse them by name with a reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container: Option<Value>,
    /// Anthropic's server-side context edits (clearing old thinking,
    /// compaction past a trigger); Claude Code sends them. The surface maps
    /// each edit onto what Windlass does, or refuses it by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_management: Option<ContextManagementConfig>,
}

/// `system`: a string or text blocks (Claude Code sends blocks with
/// `cache_control`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SystemPrompt {
    /// `system` as one string.
    Text(String),
    /// `system` as text blocks.
    Blocks(Vec<SystemBlock>),
}

/// One block of a block-list `system` prompt (`type` `text`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror Anthropic's Messages API reference, named as it names them (`kind` is `type`).
#[allow(missing_docs)]
pub struct SystemBlock {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_control: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub citations: Option<Value>,
}

/// Who wrote an input message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
// Variants (and their fields) mirror the wire values of Anthropic's Messages API reference,
// named as it names them.
#[allow(missing_docs)]
pub enum MessageRole {
    User,
    Assistant,
    /// A system message inside the conversation (text only).
    System,
}

/// One entry of `messages`: a role and its content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
// Fields mirror Anthropic's Messages API reference, named as it names them.
#[allow(missing_docs)]
pub struct InputMessage {
    pub role: MessageRole,
    pub content: InputContent,
}

/// A message's content: a string (one text block) or blocks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum InputContent {
    /// One string: a single text block.
    Text(String),
    /// Content blocks, kept as sent until translated.
    Blocks(Vec<Value>),
}

/// One content block of a request, by `type`. Parsed from the raw block by
/// the surface, so an unknown `type` can be named with its position.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
// Variants (and their fields) mirror the wire values of Anthropic's Messages API reference,
// named as it names them.
#[allow(missing_docs)]
pub enum InputBlock {
    Text {
        text: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cache_control: Option<Value>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        citations: Option<Value>,
    },
    Image {
        source: MediaSource,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cache_control: Option<Value>,
    },
    Document {
        source: MediaSource,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        context: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        citations: Option<Value>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cache_control: Option<Value>,
    },
    ToolUse {
        id: String,
        name: String,
        input: Value,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cache_control: Option<Value>,
    },
    ToolResult {
        tool_use_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content: Option<ToolResultContent>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        is_error: Option<bool>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cache_control: Option<Value>,
    },
    Thinking {
        thinking: String,
        signature: String,
    },
    RedactedThinking {
        data: String,
    },
    ServerToolUse {
        id: String,
        name: String,
        input: Value,
    },
    McpToolUse {
        id: String,
        name: String,
        server_name: String,
        input: Value,
    },
    McpToolResult {
        tool_use_id: String,
        #[serde(default)]
        is_error: Option<bool>,
        content: ToolResultContent,
    },
    /// A summary of earlier context (`compact_20260112`), sent back by the
    /// client as it was returned.
    Compaction {
        #[serde(default)]
        content: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        encrypted_content: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cache_control: Option<Value>,
    },
    WebSearchToolResult {
        tool_use_id: String,
        content: WebSearchToolResultContent,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cache_control: Option<Value>,
    },
    CodeExecutionToolResult {
        tool_use_id: String,
        content: CodeExecutionToolResultContent,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cache_control: Option<Value>,
    },
}

impl InputBlock {
    /// The block types a request may carry, for error messages.
    pub const TYPES: &'static [&'static str] = &[
        "text",
        "image",
        "document",
        "tool_use",
        "tool_result",
        "thinking",
        "redacted_thinking",
        "server_tool_use",
        "mcp_tool_use",
        "mcp_tool_result",
        "web_search_tool_result",
        "code_execution_tool_result",
        "compaction",
    ];
}

/// A `tool_result`'s content: a string or text/image/document blocks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ToolResultContent {
    /// One string: a single text block.
    Text(String),
    /// Content blocks, kept as sent until translated.
    Blocks(Vec<Value>),
}

/// An image's or document's `source`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
// Variants (and their fields) mirror the wire values of Anthropic's Messages API reference,
// named as it names them.
#[allow(missing_docs)]
pub enum MediaSource {
    Base64 {
        media_type: String,
        data: String,
    },
    Url {
        url: String,
    },
    /// A plain-text document.
    Text {
        media_type: String,
        data: String,
    },
    /// A document made of content blocks.
    Content {
        content: ToolResultContent,
    },
    /// A Files API id (beta): Windlass has no Anthropic Files API.
    File {
        file_id: String,
    },
}

/// One entry of `tools`: a custom tool (`input_schema`) or one of
/// Anthropic's typed tools (`web_search_20250305`, `bash_20250124`, ...).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror Anthropic's Messages API reference, named as it names them (`kind` is `type`).
#[allow(missing_docs)]
pub struct ToolDefinition {
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_schema: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_control: Option<Value>,
    /// Everything else a typed tool carries (`max_uses`, `allowed_domains`,
    /// `display_width_px`, ...).
    #[serde(flatten)]
    pub settings: Map<String, Value>,
}

impl ToolDefinition {
    /// A custom tool: no type, or `custom`.
    pub fn is_custom(&self) -> bool {
        matches!(self.kind.as_deref(), None | Some("custom"))
    }
}

/// `tool_choice`: let the model choose, force some tool, force one tool, or none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
// Variants (and their fields) mirror the wire values of Anthropic's Messages API reference,
// named as it names them.
#[allow(missing_docs)]
pub enum ToolChoice {
    Auto {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        disable_parallel_tool_use: Option<bool>,
    },
    Any {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        disable_parallel_tool_use: Option<bool>,
    },
    Tool {
        name: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        disable_parallel_tool_use: Option<bool>,
    },
    None {},
}

impl ThinkingConfig {
    /// `display`, where the kind of thinking takes one.
    pub fn display(&self) -> Option<&str> {
        match self {
            ThinkingConfig::Enabled { display, .. } | ThinkingConfig::Adaptive { display } => {
                display.as_deref()
            }
            ThinkingConfig::BetweenTools {} | ThinkingConfig::Disabled {} => None,
        }
    }
}

impl ToolChoice {
    /// Whether the choice turns off parallel tool use (absent means `false`).
    pub fn disable_parallel_tool_use(&self) -> bool {
        match self {
            ToolChoice::Auto {
                disable_parallel_tool_use,
            }
            | ToolChoice::Any {
                disable_parallel_tool_use,
            }
            | ToolChoice::Tool {
                disable_parallel_tool_use,
                ..
            } => disable_parallel_tool_use.unwrap_or(false),
            ToolChoice::None {} => false,
        }
    }
}

/// `metadata`: only `user_id`, as Anthropic accepts.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
// Fields mirror Anthropic's Messages API reference, named as it names them.
#[allow(missing_docs)]
pub struct RequestMetadata {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_id: Option<String>,
}

/// `thinking`: extended thinking on with a budget, adaptive, or off.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
// Variants (and their fields) mirror the wire values of Anthropic's Messages API reference,
// named as it names them.
#[allow(missing_docs)]
pub enum ThinkingConfig {
    Enabled {
        budget_tokens: u64,
        /// `summarized` (the text shown) or `omitted` (thinking blocks with
        /// empty text and the signature).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        display: Option<String>,
    },
    /// The model decides how much to think (effort from `output_config`).
    Adaptive {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        display: Option<String>,
    },
    BetweenTools {},
    Disabled {},
}

/// `context_management`: `{"edits": [...]}`, each edit kept raw so the
/// surface can name an unknown one with its position.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
// Fields mirror Anthropic's Messages API reference, named as it names them.
#[allow(missing_docs)]
pub struct ContextManagementConfig {
    #[serde(default)]
    pub edits: Vec<Value>,
}

/// `output_config`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
// Fields mirror Anthropic's Messages API reference, named as it names them.
#[allow(missing_docs)]
pub struct OutputConfig {
    /// `low`, `medium`, `high`, `xhigh` or `max`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effort: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<OutputFormat>,
}

/// `output_config.format`: `{"type": "json_schema", "schema": {...}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
// Variants (and their fields) mirror the wire values of Anthropic's Messages API reference,
// named as it names them.
#[allow(missing_docs)]
pub enum OutputFormat {
    JsonSchema { schema: Value },
}

/// One entry of `mcp_servers` (the MCP connector). Windlass also takes an
/// entry without `url`: the operator's configured server of that `name`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
// Fields mirror Anthropic's Messages API reference, named as it names them (`kind` is `type`).
#[allow(missing_docs)]
pub struct McpServer {
    #[serde(rename = "type")]
    pub kind: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization_token: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_configuration: Option<McpToolConfiguration>,
}

/// An MCP server's `tool_configuration`: whether its tools are on and which.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
// Fields mirror Anthropic's Messages API reference, named as it names them.
#[allow(missing_docs)]
pub struct McpToolConfiguration {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_tools: Option<Vec<String>>,
}

/// `POST /v1/messages/count_tokens`'s answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
// Fields mirror Anthropic's Messages API reference, named as it names them.
#[allow(missing_docs)]
pub struct CountTokensResponse {
    pub input_tokens: u64,
}
