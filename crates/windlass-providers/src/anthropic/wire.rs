//! Serde shapes of the Messages API, both directions.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::wire::Str;

#[derive(Debug, Serialize)]
pub(crate) struct Request<'a> {
    pub model: &'a str,
    pub max_tokens: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
    pub messages: Vec<Message<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<Tool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_k: Option<u64>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    pub stop_sequences: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thinking: Option<Thinking>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub service_tier: Option<&'static str>,
    pub stream: bool,
}

#[derive(Debug, Serialize)]
pub(crate) struct Thinking {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub budget_tokens: u64,
}

#[derive(Debug, Serialize)]
pub(crate) struct Metadata<'a> {
    pub user_id: &'a str,
}

#[derive(Debug, Serialize)]
pub(crate) struct Tool<'a> {
    pub name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<&'a str>,
    pub input_schema: &'a Value,
}

#[derive(Debug, Serialize)]
pub(crate) struct Message<'a> {
    pub role: &'static str,
    pub content: Vec<Block<'a>>,
}

#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum Block<'a> {
    Text {
        text: &'a str,
    },
    Image {
        source: ImageSource<'a>,
    },
    ToolUse {
        id: &'a str,
        name: &'a str,
        input: Value,
    },
    ToolResult {
        tool_use_id: &'a str,
        content: Vec<Block<'a>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        is_error: Option<bool>,
    },
    Thinking {
        thinking: String,
        signature: &'a str,
    },
    RedactedThinking {
        data: &'a str,
    },
}

#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum ImageSource<'a> {
    Base64 { media_type: &'a str, data: &'a str },
    Url { url: &'a str },
}

/// One streamed event, or (its `content` set) a whole non-streamed message.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct Event<'a> {
    #[serde(rename = "type", borrow, default)]
    pub kind: Option<Str<'a>>,
    #[serde(default)]
    pub index: Option<u32>,
    #[serde(default)]
    pub content_block: Option<Box<BlockWire>>,
    #[serde(borrow, default)]
    pub delta: Option<Delta<'a>>,
    #[serde(default)]
    pub message: Option<Box<MessageWire>>,
    #[serde(default)]
    pub usage: Option<UsageWire>,
    #[serde(default)]
    pub error: Option<Value>,
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct MessageWire {
    #[serde(default)]
    pub content: Vec<BlockWire>,
    #[serde(default)]
    pub stop_reason: Option<String>,
    /// The stop sequence that ended the text (`stop_reason: stop_sequence`).
    #[serde(default)]
    pub stop_sequence: Option<String>,
    #[serde(default)]
    pub usage: Option<UsageWire>,
}

/// A content block as it starts (streamed) or whole (non-streamed).
#[derive(Debug, Default, Deserialize)]
pub(crate) struct BlockWire {
    #[serde(rename = "type", default)]
    pub kind: String,
    #[serde(default)]
    pub text: Option<String>,
    #[serde(default)]
    pub thinking: Option<String>,
    #[serde(default)]
    pub signature: Option<String>,
    #[serde(default)]
    pub data: Option<String>,
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub input: Option<Value>,
}

/// `content_block_delta`'s and `message_delta`'s `delta`.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct Delta<'a> {
    #[serde(rename = "type", borrow, default)]
    pub kind: Option<Str<'a>>,
    #[serde(borrow, default)]
    pub text: Option<Str<'a>>,
    #[serde(borrow, default)]
    pub partial_json: Option<Str<'a>>,
    #[serde(borrow, default)]
    pub thinking: Option<Str<'a>>,
    #[serde(default)]
    pub signature: Option<String>,
    #[serde(default)]
    pub stop_reason: Option<String>,
    #[serde(default)]
    pub stop_sequence: Option<String>,
}

#[derive(Debug, Default, Clone, Copy, Deserialize)]
pub(crate) struct UsageWire {
    #[serde(default)]
    pub input_tokens: Option<u64>,
    #[serde(default)]
    pub output_tokens: Option<u64>,
    #[serde(default)]
    pub cache_creation_input_tokens: Option<u64>,
    #[serde(default)]
    pub cache_read_input_tokens: Option<u64>,
}
