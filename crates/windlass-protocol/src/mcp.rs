//! OpenAI Responses MCP extensions: the `mcp` tool and its items.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// `{"type": "mcp", ...}` in `tools`: a remote MCP server declared by the request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror OpenAI's Responses API reference, named as it names them.
#[allow(missing_docs)]
pub struct McpTool {
    pub server_label: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connector_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_description: Option<String>,
    /// Sent to the MCP server; never stored or echoed back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headers: Option<Map<String, Value>>,
    /// Bearer token for the MCP server; never stored or echoed back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_tools: Option<McpAllowedTools>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub require_approval: Option<McpRequireApproval>,
}

/// `allowed_tools` of an MCP tool: a list of names or a filter object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum McpAllowedTools {
    /// The names of the allowed tools.
    Names(Vec<String>),
    /// A filter by name and read-only hint.
    Filter(McpToolFilter),
}

/// A filter of an MCP server's tools: by name, or by the read-only hint.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, schemars::JsonSchema)]
// Fields mirror OpenAI's Responses API reference, named as it names them.
#[allow(missing_docs)]
pub struct McpToolFilter {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_names: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only: Option<bool>,
}

/// `require_approval`: `"always"`, `"never"`, or per-tool filters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum McpRequireApproval {
    /// The same rule for every tool.
    Mode(McpApprovalMode),
    /// Rules per tool.
    Filter(McpApprovalFilter),
}

/// `require_approval` as one word for every tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
// Variants (and their fields) mirror the wire values of OpenAI's Responses API reference, named
// as it names them.
#[allow(missing_docs)]
pub enum McpApprovalMode {
    Always,
    Never,
}

/// `require_approval` per tool: the tools that always, and never, need approval.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, schemars::JsonSchema)]
// Fields mirror OpenAI's Responses API reference, named as it names them.
#[allow(missing_docs)]
pub struct McpApprovalFilter {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub always: Option<McpToolFilter>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub never: Option<McpToolFilter>,
}

/// An `mcp_list_tools` item: the tools a server offers, or why listing failed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror OpenAI's Responses API reference, named as it names them.
#[allow(missing_docs)]
pub struct McpListTools {
    pub id: String,
    pub server_label: String,
    pub tools: Vec<McpToolInfo>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// One tool of an `mcp_list_tools` item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror OpenAI's Responses API reference, named as it names them.
#[allow(missing_docs)]
pub struct McpToolInfo {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub input_schema: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Value>,
}

/// An `mcp_call` item: a tool call on an MCP server and its output or error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror OpenAI's Responses API reference, named as it names them.
#[allow(missing_docs)]
pub struct McpCall {
    pub id: String,
    pub server_label: String,
    pub name: String,
    pub arguments: String,
    #[serde(default)]
    pub output: Option<String>,
    #[serde(default)]
    pub error: Option<McpCallError>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<McpCallStatus>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval_request_id: Option<String>,
}

/// `mcp_call.status`: a wider set than other items have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
// Variants (and their fields) mirror the wire values of OpenAI's Responses API reference, named
// as it names them.
#[allow(missing_docs)]
pub enum McpCallStatus {
    InProgress,
    Calling,
    Completed,
    Incomplete,
    Failed,
}

/// `mcp_call.error`: OpenAI's typed error object, or the plain string older
/// clients send back when they replay a transcript.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum McpCallError {
    /// OpenAI's typed error object.
    Typed(McpToolCallError),
    /// A plain error string (older transcripts).
    Text(String),
}

/// A typed `mcp_call.error`: what failed in the call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
// Variants (and their fields) mirror the wire values of OpenAI's Responses API reference, named
// as it names them.
#[allow(missing_docs)]
pub enum McpToolCallError {
    /// The server answered with a JSON-RPC error, or could not be reached.
    McpProtocolError {
        code: i64,
        message: String,
    },
    /// The tool ran and reported an error (`isError: true`); `content` holds
    /// its content parts.
    McpToolExecutionError {
        content: Value,
    },
    HttpError {
        code: i64,
        message: String,
    },
}

impl McpCallError {
    /// The error as text, for the model.
    pub fn text(&self) -> String {
        match self {
            McpCallError::Text(t) => t.clone(),
            McpCallError::Typed(McpToolCallError::McpProtocolError { message, .. })
            | McpCallError::Typed(McpToolCallError::HttpError { message, .. }) => message.clone(),
            McpCallError::Typed(McpToolCallError::McpToolExecutionError { content }) => {
                content_text(content)
            }
        }
    }
}

/// The text of MCP content parts (`[{"type":"text","text":..}, ..]`); other
/// shapes are kept as their JSON.
fn content_text(content: &Value) -> String {
    let texts: Option<Vec<&str>> = content.as_array().and_then(|parts| {
        parts
            .iter()
            .map(|p| p.get("text").and_then(Value::as_str))
            .collect()
    });
    match (texts, content) {
        (Some(t), _) if !t.is_empty() => t.join("\n"),
        (_, Value::String(s)) => s.clone(),
        (_, other) => other.to_string(),
    }
}

/// An `mcp_approval_request` item: the call waits for the client's approval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror OpenAI's Responses API reference, named as it names them.
#[allow(missing_docs)]
pub struct McpApprovalRequest {
    pub id: String,
    pub server_label: String,
    pub name: String,
    pub arguments: String,
}

/// An `mcp_approval_response` item: the client's answer to a request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror OpenAI's Responses API reference, named as it names them.
#[allow(missing_docs)]
pub struct McpApprovalResponse {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub approval_request_id: String,
    pub approve: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}
