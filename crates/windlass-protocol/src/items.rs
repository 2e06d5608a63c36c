//! Conversation items: the unit of input, output and storage.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::apply_patch::{ApplyPatchCall, ApplyPatchCallOutput};
use crate::client_tools::{CustomToolCall, CustomToolCallOutput};
use crate::code_interpreter::CodeInterpreterCall;
use crate::computer::{ComputerCall, ComputerCallOutput};
use crate::content::ContentPart;
use crate::file_search::FileSearchCall;
use crate::image_generation::ImageGenerationCall;
use crate::mcp::{McpApprovalRequest, McpApprovalResponse, McpCall, McpListTools};
use crate::open_enum::open_enum;
use crate::shell_calls::{LocalShellCall, LocalShellCallOutput, ShellCall, ShellCallOutput};
use crate::web_search::WebSearchCall;

// Defined in leaf modules (the tool families' item types carry them too, and
// this file names those types); re-exported so `items::ItemStatus` and
// `items::ToolOutput` keep working.
pub use crate::item_status::ItemStatus;
pub use crate::tool_output::ToolOutput;

open_enum! {
    /// Every item that can appear in `input`, `output` or the stored transcript.
    pub enum Item {
        "message" => Message(Message),
        "function_call" => FunctionCall(FunctionCall),
        "function_call_output" => FunctionCallOutput(FunctionCallOutput),
        "reasoning" => Reasoning(Reasoning),
        "compaction" => Compaction(Compaction),
        "item_reference" => ItemReference(ItemReference),
        "mcp_list_tools" => McpListTools(McpListTools),
        "mcp_call" => McpCall(McpCall),
        "mcp_approval_request" => McpApprovalRequest(McpApprovalRequest),
        "mcp_approval_response" => McpApprovalResponse(McpApprovalResponse),
        "custom_tool_call" => CustomToolCall(CustomToolCall),
        "custom_tool_call_output" => CustomToolCallOutput(CustomToolCallOutput),
        "file_search_call" => FileSearchCall(FileSearchCall),
        "web_search_call" => WebSearchCall(WebSearchCall),
        "code_interpreter_call" => CodeInterpreterCall(CodeInterpreterCall),
        "image_generation_call" => ImageGenerationCall(ImageGenerationCall),
        "shell_call" => ShellCall(ShellCall),
        "shell_call_output" => ShellCallOutput(ShellCallOutput),
        "local_shell_call" => LocalShellCall(LocalShellCall),
        "local_shell_call_output" => LocalShellCallOutput(LocalShellCallOutput),
        "apply_patch_call" => ApplyPatchCall(ApplyPatchCall),
        "apply_patch_call_output" => ApplyPatchCallOutput(ApplyPatchCallOutput),
        "computer_call" => ComputerCall(ComputerCall),
        "computer_call_output" => ComputerCallOutput(ComputerCallOutput),
    }
}

impl Item {
    /// Items without `type`: the "easy" message form `{role, content}` and the
    /// bare `{id}` item reference, both accepted by the contract.
    fn untyped(raw: Value) -> Result<Self, String> {
        if raw.get("role").is_some() {
            serde_json::from_value(raw)
                .map(Item::Message)
                .map_err(|e| format!("invalid `message`: {e}"))
        } else if raw.get("id").is_some() {
            serde_json::from_value(raw)
                .map(Item::ItemReference)
                .map_err(|e| format!("invalid `item_reference`: {e}"))
        } else {
            Err("item is missing `type`".into())
        }
    }

    /// The item's id, when it has one.
    pub fn id(&self) -> Option<&str> {
        match self {
            Item::Message(m) => m.id.as_deref(),
            Item::FunctionCall(c) => c.id.as_deref(),
            Item::FunctionCallOutput(o) => o.id.as_deref(),
            Item::Reasoning(r) => r.id.as_deref(),
            Item::Compaction(c) => c.id.as_deref(),
            Item::ItemReference(r) => Some(&r.id),
            Item::McpListTools(m) => Some(&m.id),
            Item::McpCall(m) => Some(&m.id),
            Item::McpApprovalRequest(m) => Some(&m.id),
            Item::McpApprovalResponse(m) => m.id.as_deref(),
            Item::CustomToolCall(c) => c.id.as_deref(),
            Item::CustomToolCallOutput(o) => o.id.as_deref(),
            Item::FileSearchCall(c) => Some(&c.id),
            Item::WebSearchCall(c) => Some(&c.id),
            Item::CodeInterpreterCall(c) => Some(&c.id),
            Item::ImageGenerationCall(c) => Some(&c.id),
            Item::ShellCall(c) => c.id.as_deref(),
            Item::ShellCallOutput(o) => o.id.as_deref(),
            Item::LocalShellCall(c) => Some(&c.id),
            Item::LocalShellCallOutput(o) => o.id.as_deref(),
            Item::ApplyPatchCall(c) => c.id.as_deref(),
            Item::ApplyPatchCallOutput(o) => o.id.as_deref(),
            Item::ComputerCall(c) => Some(&c.id),
            Item::ComputerCallOutput(o) => o.id.as_deref(),
            Item::Unknown(v) => v.get("id").and_then(Value::as_str),
        }
    }

    /// An item of one of OpenAI's own tools (hosted calls such as
    /// `web_search_call`, client-run calls such as `shell_call`, and their
    /// outputs), as opposed to function, custom and MCP items.
    pub fn is_openai_tool_item(&self) -> bool {
        matches!(
            self,
            Item::WebSearchCall(_) | Item::CodeInterpreterCall(_) | Item::ImageGenerationCall(_)
        ) || self.is_client_executed()
    }

    /// A call of OpenAI's client-executed tool types (`shell`,
    /// `local_shell`, `apply_patch`, `computer_use_preview`) or the
    /// client's output for one.
    pub fn is_client_executed(&self) -> bool {
        matches!(
            self,
            Item::ShellCall(_)
                | Item::ShellCallOutput(_)
                | Item::LocalShellCall(_)
                | Item::LocalShellCallOutput(_)
                | Item::ApplyPatchCall(_)
                | Item::ApplyPatchCallOutput(_)
                | Item::ComputerCall(_)
                | Item::ComputerCallOutput(_)
        )
    }

    /// A user message with one text part.
    pub fn user_text(text: impl Into<String>) -> Item {
        Item::Message(Message {
            id: None,
            role: Role::User,
            content: MessageContent::Text(text.into()),
            status: None,
            phase: None,
        })
    }
}

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
// Variants (and their fields) mirror the wire values of the OpenResponses contract
// (openapi.json), named as it names them.
#[allow(missing_docs)]
pub enum Role {
    User,
    Assistant,
    System,
    Developer,
}

/// OpenAI's `phase` of an assistant message: commentary between tool calls, or the final answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
// Variants (and their fields) mirror the wire values of the OpenResponses contract
// (openapi.json), named as it names them.
#[allow(missing_docs)]
pub enum MessagePhase {
    Commentary,
    FinalAnswer,
}

/// A `message` item: a role's content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror the OpenResponses contract (openapi.json), named as it names them.
#[allow(missing_docs)]
pub struct Message {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub role: Role,
    pub content: MessageContent,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ItemStatus>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<MessagePhase>,
}

/// A message's content: a plain string (input shorthand) or content parts.
#[derive(Debug, Clone, PartialEq)]
pub enum MessageContent {
    /// One string: a single text part.
    Text(String),
    /// Content parts.
    Parts(Vec<ContentPart>),
}

impl MessageContent {
    /// All textual content joined, in order.
    pub fn joined_text(&self) -> String {
        match self {
            MessageContent::Text(t) => t.clone(),
            MessageContent::Parts(parts) => parts.iter().filter_map(ContentPart::text).collect(),
        }
    }
}

impl Serialize for MessageContent {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            MessageContent::Text(t) => s.serialize_str(t),
            MessageContent::Parts(p) => p.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for MessageContent {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::String(t) => Ok(MessageContent::Text(t)),
            v @ Value::Array(_) => serde_json::from_value(v)
                .map(MessageContent::Parts)
                .map_err(D::Error::custom),
            _ => Err(D::Error::custom(
                "`content` must be a string or an array of content parts",
            )),
        }
    }
}

/// A `function_call` item: the model asks the client to run a function.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror the OpenResponses contract (openapi.json), named as it names them.
#[allow(missing_docs)]
pub struct FunctionCall {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub call_id: String,
    pub name: String,
    pub arguments: String,
    /// The `namespace` tool the function belongs to (OpenAI's grouped tools).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ItemStatus>,
}

/// A `function_call_output` item: the client's result for `call_id`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror the OpenResponses contract (openapi.json), named as it names them.
#[allow(missing_docs)]
pub struct FunctionCallOutput {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub call_id: String,
    pub output: ToolOutput,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ItemStatus>,
    /// Set when the output reports a tool failure, so a
    /// model-facing error is distinguishable from a result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
}

/// A `reasoning` item: the model's reasoning summary, text, or encrypted content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror the OpenResponses contract (openapi.json), named as it names them.
#[allow(missing_docs)]
pub struct Reasoning {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(default)]
    pub summary: Vec<ContentPart>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Vec<ContentPart>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encrypted_content: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ItemStatus>,
}

/// A `compaction` item: earlier history, replaced by opaque content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror the OpenResponses contract (openapi.json), named as it names them.
#[allow(missing_docs)]
pub struct Compaction {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub encrypted_content: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_by: Option<String>,
}

/// An `item_reference`: a stored item named by id in `input`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror the OpenResponses contract (openapi.json), named as it names them.
#[allow(missing_docs)]
pub struct ItemReference {
    pub id: String,
}
