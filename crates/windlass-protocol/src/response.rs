//! The response resource and its parts.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::items::Item;
use crate::request::{ReasoningParam, TextFormat, Truncation, Verbosity};
use crate::tools::{Tool, ToolChoice};

/// A response's status. `requires_action` and `cancelled`
/// extend the contract's set; all but `queued`/`in_progress` are terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
// Variants (and their fields) mirror the wire values of the OpenResponses contract
// (openapi.json), named as it names them.
#[allow(missing_docs)]
pub enum ResponseStatus {
    Queued,
    InProgress,
    Completed,
    Incomplete,
    Failed,
    Cancelled,
    RequiresAction,
}

impl ResponseStatus {
    /// Whether the response has finished (no longer queued or in progress).
    pub fn is_terminal(self) -> bool {
        !matches!(self, ResponseStatus::Queued | ResponseStatus::InProgress)
    }

    /// The state machine: queued -> in_progress -> one terminal status.
    pub fn can_transition_to(self, next: ResponseStatus) -> bool {
        use ResponseStatus::*;
        match self {
            Queued => matches!(next, InProgress | Cancelled | Failed),
            InProgress => next.is_terminal(),
            _ => false,
        }
    }

    /// The status's wire spelling.
    pub fn as_str(self) -> &'static str {
        use ResponseStatus::*;
        match self {
            Queued => "queued",
            InProgress => "in_progress",
            Completed => "completed",
            Incomplete => "incomplete",
            Failed => "failed",
            Cancelled => "cancelled",
            RequiresAction => "requires_action",
        }
    }
}

/// `GET /v1/responses/{id}` and the body of every lifecycle event.
/// Every field the contract requires is always present; nullable ones as `null`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror the OpenResponses contract (openapi.json), named as it names them.
#[allow(missing_docs)]
pub struct ResponseResource {
    pub id: String,
    pub object: String,
    pub created_at: u64,
    pub completed_at: Option<u64>,
    pub status: ResponseStatus,
    pub incomplete_details: Option<IncompleteDetails>,
    pub model: String,
    pub previous_response_id: Option<String>,
    pub instructions: Option<String>,
    pub output: Vec<Item>,
    pub error: Option<ResponseError>,
    pub tools: Vec<Tool>,
    pub tool_choice: ToolChoice,
    pub truncation: Truncation,
    pub parallel_tool_calls: bool,
    pub text: TextField,
    pub top_p: f64,
    pub presence_penalty: f64,
    pub frequency_penalty: f64,
    pub top_logprobs: u32,
    pub temperature: f64,
    pub reasoning: Option<ReasoningParam>,
    pub usage: Option<Usage>,
    pub max_output_tokens: Option<u64>,
    pub max_tool_calls: Option<u64>,
    pub store: bool,
    pub background: bool,
    pub service_tier: String,
    pub metadata: Map<String, Value>,
    pub safety_identifier: Option<String>,
    pub prompt_cache_key: Option<String>,
    /// Windlass's top-level allowed tools, echoed when the request set it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_tools: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// The conversation the response belongs to, echoed as OpenAI does
    /// (`{"id": "conv_..."}`); absent when it belongs to none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation: Option<ConversationRef>,
    /// The stored prompt the request named, echoed as given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<crate::prompts::PromptParam>,
    /// Windlass's extension: which of the request's `stop` sequences ended
    /// the text, when the upstream said so (absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_sequence: Option<String>,
}

/// A response's `conversation`: the conversation's id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
// Fields mirror the OpenResponses contract (openapi.json), named as it names them.
#[allow(missing_docs)]
pub struct ConversationRef {
    pub id: String,
}

impl ResponseResource {
    /// The concatenated text of all assistant `output_text` parts, like the
    /// SDKs' `output_text` helper.
    pub fn output_text(&self) -> String {
        let mut out = String::new();
        for item in &self.output {
            if let Item::Message(m) = item {
                if let crate::items::MessageContent::Parts(parts) = &m.content {
                    for p in parts {
                        if let crate::content::ContentPart::OutputText(t) = p {
                            out.push_str(&t.text);
                        }
                    }
                }
            }
        }
        out
    }
}

/// Why a response is `incomplete` (e.g. `max_output_tokens`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
// Fields mirror the OpenResponses contract (openapi.json), named as it names them.
#[allow(missing_docs)]
pub struct IncompleteDetails {
    pub reason: String,
}

/// The `error` of a failed response: `{code, message}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
// Fields mirror the OpenResponses contract (openapi.json), named as it names them.
#[allow(missing_docs)]
pub struct ResponseError {
    pub code: String,
    pub message: String,
}

/// A response's `text`: the format and verbosity it was asked for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror the OpenResponses contract (openapi.json), named as it names them.
#[allow(missing_docs)]
pub struct TextField {
    pub format: TextFormat,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verbosity: Option<Verbosity>,
}

impl Default for TextField {
    fn default() -> Self {
        TextField {
            format: TextFormat::Text(Default::default()),
            verbosity: None,
        }
    }
}

/// The tokens a response used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
// Fields mirror the OpenResponses contract (openapi.json), named as it names them.
#[allow(missing_docs)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub total_tokens: u64,
    #[serde(default)]
    pub input_tokens_details: InputTokensDetails,
    #[serde(default)]
    pub output_tokens_details: OutputTokensDetails,
}

impl Usage {
    /// Sums another turn's usage into this one.
    pub fn add(&mut self, other: &Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.total_tokens += other.total_tokens;
        self.input_tokens_details.cached_tokens += other.input_tokens_details.cached_tokens;
        self.output_tokens_details.reasoning_tokens += other.output_tokens_details.reasoning_tokens;
    }
}

/// `usage.input_tokens_details`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
// Fields mirror the OpenResponses contract (openapi.json), named as it names them.
#[allow(missing_docs)]
pub struct InputTokensDetails {
    pub cached_tokens: u64,
}

/// `usage.output_tokens_details`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
// Fields mirror the OpenResponses contract (openapi.json), named as it names them.
#[allow(missing_docs)]
pub struct OutputTokensDetails {
    pub reasoning_tokens: u64,
}

/// A page of `GET /v1/responses/{id}/input_items`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror the OpenResponses contract (openapi.json), named as it names them.
#[allow(missing_docs)]
pub struct ItemList {
    pub object: String,
    pub data: Vec<Item>,
    pub first_id: Option<String>,
    pub last_id: Option<String>,
    pub has_more: bool,
}

/// `DELETE /v1/responses/{id}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
// Fields mirror the OpenResponses contract (openapi.json), named as it names them.
#[allow(missing_docs)]
pub struct DeletedResponse {
    pub id: String,
    pub object: String,
    pub deleted: bool,
}
