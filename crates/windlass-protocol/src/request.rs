//! `POST /v1/responses` request body.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::items::Item;
use crate::open_enum::open_enum;
use crate::tools::{Tool, ToolChoice};

/// The create-response request: every field of the OpenResponses contract,
/// the OpenAI extensions Windlass knows, and `extra` for anything else (which
/// the server rejects by name rather than drop).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
// Fields mirror the OpenResponses contract (openapi.json), named as it names them.
#[allow(missing_docs)]
pub struct CreateResponseRequest {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<Input>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous_response_id: Option<String>,
    /// The conversation this response belongs to: its items come first, and
    /// the response's input and output are appended to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation: Option<ConversationParam>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<Tool>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoice>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<TextParam>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
    /// Windlass's extension (not in OpenAI's Responses API): sequences
    /// that end the text where they appear, not part of the text. The
    /// Messages surface's `stop_sequences`; sent as `stop` to a chat
    /// upstream, as `stop_sequences` to an Anthropic one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<Vec<String>>,
    /// Windlass's extension: sample from the `top_k` likeliest tokens only
    /// (the Messages surface's `top_k`; vLLM and llama.cpp take it on chat
    /// completions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_k: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub presence_penalty: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frequency_penalty: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallel_tool_calls: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_options: Option<StreamOptions>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub background: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tool_calls: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<ReasoningParam>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub safety_identifier: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_cache_key: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncation: Option<Truncation>,
    /// Server-side compaction when the transcript grows past a threshold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_management: Option<Vec<ContextManagement>>,
    /// A stored prompt template (`id`, `version`, `variables`); the surface
    /// resolves it into `instructions` and `input` before prepare.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<crate::prompts::PromptParam>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub store: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_tier: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_logprobs: Option<u32>,
    /// OpenAI's end-user identifier (deprecated in favour of `safety_identifier`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// Windlass's top-level list of tool names the model may have executed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_tools: Option<Vec<String>>,
    /// OpenAI's client-side metadata (Codex sends it): accepted, never
    /// forwarded, stored or echoed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_metadata: Option<Map<String, Value>>,
    /// Fields this version does not know. Kept so they can be named in an error.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `input`: a string (one user message) or a list of items.
#[derive(Debug, Clone, PartialEq)]
pub enum Input {
    /// One string: a user message.
    Text(String),
    /// A list of items.
    Items(Vec<Item>),
}

impl Input {
    /// The input as items.
    pub fn into_items(self) -> Vec<Item> {
        match self {
            Input::Text(t) => vec![Item::user_text(t)],
            Input::Items(items) => items,
        }
    }
}

impl Serialize for Input {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Input::Text(t) => s.serialize_str(t),
            Input::Items(i) => i.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for Input {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::String(t) => Ok(Input::Text(t)),
            Value::Array(items) => {
                let mut out = Vec::with_capacity(items.len());
                for (i, raw) in items.into_iter().enumerate() {
                    let item = serde_json::from_value(raw)
                        .map_err(|e| D::Error::custom(format!("input[{i}]: {e}")))?;
                    out.push(item);
                }
                Ok(Input::Items(out))
            }
            _ => Err(D::Error::custom(
                "`input` must be a string or an array of items",
            )),
        }
    }
}

/// Unknown keys are refused, as in [`TextParam`].
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
// Fields mirror the OpenResponses contract (openapi.json), named as it names them.
#[allow(missing_docs)]
pub struct StreamOptions {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_obfuscation: Option<bool>,
}

/// Unknown keys are refused (a typo would otherwise be silently ignored).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
// Fields mirror the OpenResponses contract (openapi.json), named as it names them.
#[allow(missing_docs)]
pub struct TextParam {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<TextFormat>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verbosity: Option<Verbosity>,
}

open_enum! {
    /// `text.format`: plain text, JSON object, or JSON schema.
    pub enum TextFormat {
        "text" => Text(EmptyObject),
        "json_object" => JsonObject(EmptyObject),
        "json_schema" => JsonSchema(JsonSchemaFormat),
    }
}

impl TextFormat {
    fn untyped(_raw: Value) -> Result<Self, String> {
        Err("text.format is missing `type`".into())
    }
}

/// A variant with no fields besides `type`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct EmptyObject {}

/// `text.format` of type `json_schema`: the schema the answer must match.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror the OpenResponses contract (openapi.json), named as it names them.
#[allow(missing_docs)]
pub struct JsonSchemaFormat {
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    pub schema: Value,
    #[serde(default)]
    pub strict: Option<bool>,
}

/// `text.verbosity`: how long the answer should be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
// Variants (and their fields) mirror the wire values of the OpenResponses contract
// (openapi.json), named as it names them.
#[allow(missing_docs)]
pub enum Verbosity {
    Low,
    Medium,
    High,
}

/// Unknown keys are refused, as in [`TextParam`].
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
// Fields mirror the OpenResponses contract (openapi.json), named as it names them.
#[allow(missing_docs)]
pub struct ReasoningParam {
    #[serde(default)]
    pub effort: Option<ReasoningEffort>,
    #[serde(default)]
    pub summary: Option<ReasoningSummary>,
}

/// `reasoning.effort`: how much the model should reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
// Variants (and their fields) mirror the wire values of the OpenResponses contract
// (openapi.json), named as it names them.
#[allow(missing_docs)]
pub enum ReasoningEffort {
    None,
    Minimal,
    Low,
    Medium,
    High,
    Xhigh,
}

/// `reasoning.summary`: how detailed the reasoning summary should be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
// Variants (and their fields) mirror the wire values of the OpenResponses contract
// (openapi.json), named as it names them.
#[allow(missing_docs)]
pub enum ReasoningSummary {
    Concise,
    Detailed,
    Auto,
}

/// `truncation`: drop old input to fit the context (`auto`) or fail (`disabled`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
// Variants (and their fields) mirror the wire values of the OpenResponses contract
// (openapi.json), named as it names them.
#[allow(missing_docs)]
pub enum Truncation {
    Auto,
    #[default]
    Disabled,
}

/// One `context_management` entry. `type` is `compaction` (the only kind
/// OpenAI has); `compact_threshold` is the input size, in tokens, past which
/// the transcript is compacted (the model's context length when absent).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
// Fields mirror the OpenResponses contract (openapi.json), named as it names them (`kind` is
// `type`).
#[allow(missing_docs)]
pub struct ContextManagement {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compact_threshold: Option<u64>,
}

impl ContextManagement {
    /// The one `context_management` type there is.
    pub const COMPACTION: &'static str = "compaction";
}

/// `POST /v1/responses/input_tokens`'s answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
// Fields mirror the OpenResponses contract (openapi.json), named as it names them.
#[allow(missing_docs)]
pub struct InputTokenCount {
    /// `response.input_tokens`.
    pub object: String,
    pub input_tokens: u64,
    /// Windlass's extension: `upstream` (the upstream's own tokenizer
    /// counted) or `estimate` (it has none; see docs/upstream-fields.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count_method: Option<String>,
}

impl InputTokenCount {
    /// The `object` of an input token count.
    pub const OBJECT: &'static str = "response.input_tokens";
}

/// `conversation` on create: an id, or `{"id": ...}` (OpenAI accepts both).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ConversationParam {
    /// A bare conversation id.
    Id(String),
    /// `{"id": ...}`.
    Object {
        /// The conversation id.
        id: String,
    },
}

impl ConversationParam {
    /// The conversation id, whichever form carried it.
    pub fn id(&self) -> &str {
        match self {
            ConversationParam::Id(id) | ConversationParam::Object { id } => id,
        }
    }
}
